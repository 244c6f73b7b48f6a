import { describe, expect, it } from "vitest";
import { OperationSchema } from "../../src/map/system-map.ts";
import { forgeryTargets } from "../../src/probes/auth/token-forgery.ts";

// Which signed-in reads the token forgeries are sent to: every parameterless one of an application with
// dozens of them, the caller's own first; a route with its own token check may sit anywhere in the map.

const read = (path: string, security: "required" | "public" = "required") =>
  OperationSchema.parse({ method: "GET", path, security, seen_in: ["openapi"], documented: true });

describe("forgeryTargets", () => {
  it("keeps the 70th signed-in read of a large application, with the caller's own read first", () => {
    const operations = [
      ...Array.from({ length: 69 }, (_, index) => read(`/api/resources${index}`)),
      read("/api/v1/support/comments/summary"),
      read("/api/items/{id}"),
      read("/api/status", "public"),
      read("/api/me"),
    ];
    const targets = forgeryTargets(operations).map((operation) => operation.path);
    expect(targets[0]).toBe("/api/me");
    expect(targets).toContain("/api/v1/support/comments/summary");
    // Not a target: a read with a path parameter, and a public one.
    expect(targets).not.toContain("/api/items/{id}");
    expect(targets).not.toContain("/api/status");
    expect(targets).toHaveLength(71);
  });
});
