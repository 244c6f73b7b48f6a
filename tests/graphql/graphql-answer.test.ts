import { describe, expect, it } from "vitest";
import {
  fieldValue,
  graphqlAnswer,
  graphqlAnswers,
  graphqlErrorText,
} from "../../src/probes/graphql/graphql-answer.ts";
import { graphqlEffect } from "../../src/probes/graphql/graphql-effect.ts";
import { answered } from "../fixtures/http-exchange.ts";

const exchange = (status: number, body: string, contentType = "application/json") =>
  answered(status, body, { contentType, url: "http://127.0.0.1/graphql" });

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

describe("graphqlEffect", () => {
  it("judges an operation by its kind and by what its name says it does", () => {
    expect(graphqlEffect({ kind: "query", field: "pastes" })).toBe("read");
    expect(graphqlEffect({ kind: "query", field: "deleteAllPastes" })).toBe("destructive");
    expect(graphqlEffect({ kind: "query", field: "importData" })).toBe("write");
    expect(graphqlEffect({ kind: "mutation", field: "createPaste" })).toBe("write");
    expect(graphqlEffect({ kind: "mutation", field: "login" })).toBe("write");
    expect(graphqlEffect({ kind: "mutation", field: "removeUser" })).toBe("destructive");
    expect(graphqlEffect({ kind: "subscription", field: "pasteAdded" })).toBe("read");
    // A verb is a whole word of the name: settings and addresses are read.
    expect(graphqlEffect({ kind: "query", field: "settings" })).toBe("read");
    expect(graphqlEffect({ kind: "query", field: "addresses" })).toBe("read");
    expect(graphqlEffect({ kind: "query", field: "set_role" })).toBe("write");
    expect(graphqlEffect({ kind: "query", field: "ResetAll" })).toBe("destructive");
  });
});
