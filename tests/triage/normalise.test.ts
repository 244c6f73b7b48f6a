import { describe, expect, it } from "vitest";
import { normaliseVolatile } from "../../src/triage/normalise.ts";

describe("normaliseVolatile", () => {
  it("drops ids, times, tokens, UUIDs and numbers in paths so two sightings of one defect read alike", () => {
    const first = normaliseVolatile(
      "GET /orders/42/items answered 500 at 2026-01-01T10:00:00Z for 8f3e2a10-1b2c-4d5e-8f90-123456789abc with token eyJhbGciOiJIUzI1NiJ9abc123def456",
    );
    const second = normaliseVolatile(
      "GET /orders/7/items answered 500 at 2026-03-09T23:59:59.123+02:00 for 11111111-2222-3333-4444-555555555555 with token eyJzdWIiOiIxMjM0NTY3ODkwIn0xyz789",
    );
    expect(first).toBe(second);
    expect(first).toBe("get /orders/{id}/items answered {n} at {time} for {uuid} with token {token}");
  });
});
