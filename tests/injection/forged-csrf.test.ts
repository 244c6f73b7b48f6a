import { describe, expect, it } from "vitest";
import type { PreparedRequest } from "../../src/probes/api/request-builder.ts";
import type { InputPoint } from "../../src/probes/auditor/input-points.ts";
import { withoutForgedCsrf } from "../../src/probes/injection/point-sender.ts";
import { undocumented } from "../fixtures/probe-harness.ts";

// A route read from source lists the anti-forgery field among its body fields; the request builder fills
// it with a made-up value, which the application refuses where it would accept the session's header.

const operation = undocumented("POST", "/labels");

function prepared(body: Record<string, unknown>): PreparedRequest {
  return { operation, pathValues: {}, query: {}, headers: {}, body };
}

const point = (name: string): InputPoint => ({ operation, in: "body", name, numeric: false });

describe("withoutForgedCsrf", () => {
  it("drops made-up anti-forgery fields of common frameworks and keeps the rest", () => {
    const request = prepared({
      name: "qaas",
      csrf_token: "made-up",
      authenticity_token: "made-up",
      _token: "made-up",
      csrfmiddlewaretoken: "made-up",
    });
    expect(withoutForgedCsrf(request, point("name")).body).toEqual({ name: "qaas" });
  });

  it("keeps the field when it is the point under test, and leaves a request without one as it is", () => {
    const request = prepared({ name: "qaas", csrf_token: "made-up" });
    expect(withoutForgedCsrf(request, point("csrf_token")).body).toEqual({
      name: "qaas",
      csrf_token: "made-up",
    });
    const plain = prepared({ name: "qaas", tokens: 3 });
    expect(withoutForgedCsrf(plain, point("name"))).toBe(plain);
  });
});
