import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { withoutExcluded } from "../../src/tools/servers/map-draft.ts";

const operation = (method: string, path: string): Operation => ({
  method,
  path,
  security: "unknown",
  parameters: [],
  responses: {},
  seen_in: ["openapi"],
  documented: true,
});

describe("operations a profile excludes", () => {
  it("leave the map whatever the parameter spelling, so no probe can send them", () => {
    const kept = withoutExcluded(
      [
        operation("POST", "/__test/reset"),
        operation("POST", "/api/sessions/{id}/end"),
        operation("GET", "/api/items"),
      ],
      ["post /__test/reset/", "POST /api/sessions/:sessionId/end"],
    );
    expect(kept.map((item) => `${item.method} ${item.path}`)).toEqual(["GET /api/items"]);
  });
});
