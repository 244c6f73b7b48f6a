import { describe, expect, it } from "vitest";
import {
  fieldValue,
  graphqlAnswer,
  graphqlAnswers,
  graphqlErrorText,
} from "../../src/probes/graphql/graphql-answer.ts";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";

function exchange(status: number, body: string, contentType = "application/json"): HttpExchange {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return {
    sequence: 1,
    startedAt: "",
    request: { method: "POST", url: "http://127.0.0.1/graphql", headers: {} },
    response: { status, headers: {}, setCookies: [], contentType, body, truncated: false, json },
    durationMs: 1,
  };
}

describe("graphqlAnswer", () => {
  it("reads a 200 that carries errors as a failed answer, with the error's path and extensions", () => {
    const answer = graphqlAnswer(
      exchange(
        200,
        JSON.stringify({
          data: { pastes: null },
          errors: [
            {
              message: 'near "x": syntax error',
              path: ["pastes"],
              locations: [{ line: 1, column: 3 }],
              extensions: { exception: { stacktrace: ["Traceback (most recent call last):"] } },
            },
          ],
        }),
      ),
    );
    expect(answer?.failed).toBe(true);
    expect(answer?.errors[0]).toMatchObject({ message: 'near "x": syntax error', path: ["pastes"] });
    expect(graphqlErrorText(answer)).toMatch(/syntax error[\s\S]*Traceback/);
    expect(fieldValue(answer, "pastes")).toBeNull();
  });

  it("reads a successful answer, tolerates non-standard errors, and refuses what is not GraphQL", () => {
    const ok = graphqlAnswer(exchange(200, JSON.stringify({ data: { health: "ok" } })));
    expect(ok).toEqual({ data: { health: "ok" }, errors: [], failed: false });
    expect(fieldValue(ok, "health")).toBe("ok");
    expect(graphqlAnswer(exchange(400, JSON.stringify({ errors: "bad query" })))?.errors).toEqual([
      { message: "bad query" },
    ]);
    expect(graphqlAnswer(exchange(404, "<h1>Not found</h1>", "text/html"))).toBeUndefined();
    expect(graphqlAnswer(exchange(200, JSON.stringify({ items: [] })))).toBeUndefined();
    expect(graphqlAnswer(undefined)).toBeUndefined();
  });

  it("reads each answer of a batch", () => {
    const answers = graphqlAnswers(
      exchange(200, JSON.stringify([{ data: { a1: "Query" } }, { errors: [{ message: "no" }] }])),
    );
    expect(answers.map((answer) => answer.failed)).toEqual([false, true]);
  });
});
