import { describe, expect, it } from "vitest";
import { sameShape, shapeOf } from "../../src/probes/auth/answer-shape.ts";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";

function redirect(location: string): HttpExchange {
  return {
    request: { method: "POST", url: "http://127.0.0.1:9/login", headers: {} },
    response: { status: 303, headers: { location }, setCookies: [], body: "", contentType: "" },
    durationMs: 1,
  } as unknown as HttpExchange;
}

describe("answer shapes", () => {
  it("tells redirects apart by their query (a lockout often says so only there)", () => {
    const invalid = shapeOf(redirect("/login?error=invalid&email=a%40x.test"), ["a@x.test"]);
    const locked = shapeOf(redirect("/login?error=locked&email=a%40x.test"), ["a@x.test"]);
    expect(sameShape(invalid, locked)).toBe(false);
  });

  it("does not tell them apart by the caller's own input echoed in the query", () => {
    const first = shapeOf(redirect("/login?error=invalid&email=a%40x.test"), ["a@x.test"]);
    const second = shapeOf(redirect("/login?error=invalid&email=b%40x.test"), ["b@x.test"]);
    expect(sameShape(first, second)).toBe(true);
  });
});
