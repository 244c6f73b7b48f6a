import { describe, expect, it } from "vitest";
import { missingFieldsNamed } from "../../src/probes/http/missing-fields.ts";
import { answered as answer } from "../fixtures/http-exchange.ts";

// A handler that stops at the first input it lacks says which one, in the words of its framework.

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
