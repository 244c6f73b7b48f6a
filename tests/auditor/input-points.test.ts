import { describe, expect, it } from "vitest";
import { inputPoints } from "../../src/probes/auditor/input-points.ts";
import { undocumentedMap } from "../fixtures/probe-harness.ts";
import { operation } from "../load/fixtures/fixture-target.ts";

// An auth helper that every handler calls reads the session cookie and the API key on every route: those
// are the sign-in's, not the handler's inputs, and tampering with them on each route would spend an
// injection probe's whole budget testing the session.

describe("inputPoints", () => {
  it("leaves out the cookies and headers that carry a sign-in, keeps the handler's own", () => {
    const search = operation("GET", "/items", { query: { q: { type: "string" } } });
    const text = { type: "string" };
    search.parameters.push(
      { name: "session", in: "cookie", required: false, schema: text },
      { name: "remember_token", in: "cookie", required: false, schema: text },
      { name: "theme", in: "cookie", required: false, schema: text },
      { name: "X-API-Key", in: "header", required: false, schema: text },
      { name: "X-Tenant", in: "header", required: false, schema: text },
    );
    const map = undocumentedMap("points", "http://app.test", [search]);
    const points = inputPoints(map, { includeWrites: false });
    expect(points.map((point) => `${point.in}:${point.name}`).sort()).toEqual([
      "cookie:theme",
      "header:X-Tenant",
      "query:q",
    ]);
  });
});
