import { describe, expect, it } from "vitest";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";
import { missingFieldsNamed } from "../../src/probes/http/missing-fields.ts";

// A handler that stops at the first input it lacks says which one, in the words of its framework.

function answer(status: number, body: string): HttpExchange {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return {
    sequence: 0,
    startedAt: new Date().toISOString(),
    request: { method: "POST", url: "http://127.0.0.1/x", headers: {} },
    response: {
      status,
      headers: {},
      setCookies: [],
      contentType: "application/json",
      body,
      truncated: false,
      json,
    },
    durationMs: 1,
  };
}

describe("missingFieldsNamed", () => {
  it.each([
    [`{"message":"Missing parameter 'price'"}`, ["price"]],
    [`{"error":"email is required"}`, ["email"]],
    [`{"errors":["'title' is a required property"]}`, ["title"]],
    [
      `{"detail":[{"loc":["body","quantity"],"msg":"field required","type":"value_error.missing"}]}`,
      ["quantity"],
    ],
    ['{"errors":{"address":{"message":"Path `address` is required."}}}', ["address"]],
    [`Bad request: required field "ship_date"`, ["ship_date"]],
  ])("reads %s", (body, names) => {
    expect(missingFieldsNamed(answer(400, body), [])).toEqual(names);
  });

  it("names nothing in prose, in fields already sent, or in answers that are not client errors", () => {
    expect(missingFieldsNamed(answer(400, `{"error":"This field is required."}`), [])).toEqual([]);
    expect(missingFieldsNamed(answer(400, `{"message":"Missing parameter 'price'"}`), ["price"])).toEqual([]);
    expect(missingFieldsNamed(answer(500, `{"message":"Missing parameter 'price'"}`), [])).toEqual([]);
    expect(missingFieldsNamed(answer(200, `{"message":"Missing parameter 'price'"}`), [])).toEqual([]);
  });
});
