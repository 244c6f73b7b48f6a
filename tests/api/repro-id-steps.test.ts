import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import type { PreparedRequest } from "../../src/probes/api/request-builder.ts";
import type { CreationSteps } from "../../src/probes/evidence/repro-steps.ts";
import { idStepsFor, stepFromPrepared } from "../../src/probes/evidence/repro-steps.ts";

// A generated test replays on a target a reset emptied: ids of records the probe created must become the
// ids the test's own creates answer, and values the probe chose on purpose must stay as they were sent.

const created: CreationSteps = {
  steps: [],
  idSteps: { projectId: "parent1", id: "created" },
  stepOfId: { "7": "parent1", "42": "created" },
};

function request(path: string, pathValues: Record<string, string>): PreparedRequest {
  const operation: Operation = {
    method: "GET",
    path,
    security: "unknown",
    parameters: [],
    responses: {},
    seen_in: ["openapi"],
    documented: true,
  };
  return { operation, seed: "zq9x", pathValues, query: {}, headers: {} } as PreparedRequest;
}

describe("ids in generated tests", () => {
  it("fills a created id under any parameter name, the parent's too", () => {
    const prepared = request("/projects/{projectId}/orders/{orderId}/confirm", {
      projectId: "7",
      orderId: "42",
    });
    expect(stepFromPrepared("act", prepared, "ann", idStepsFor(prepared, created)).path).toBe(
      "/projects/{{parent1.id}}/orders/{{created.id}}/confirm",
    );
  });

  it("keeps a fuzzed or made-up id as sent, even under the family's own parameter name", () => {
    const fuzzed = request("/tasks/{id}/comments", { id: "0" });
    expect(stepFromPrepared("failing", fuzzed, "ann", idStepsFor(fuzzed, created)).path).toBe(
      "/tasks/0/comments",
    );
    const missing = request("/tasks/{id}", { id: "999999999" });
    expect(stepFromPrepared("missing", missing, "ann", idStepsFor(missing, created)).path).toBe(
      "/tasks/999999999",
    );
  });
});
