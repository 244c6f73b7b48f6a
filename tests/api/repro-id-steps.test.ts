import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import type { PreparedRequest } from "../../src/probes/api/request-builder.ts";
import { reproPath } from "../../src/probes/api/undocumented-probe.ts";
import type { CreationSteps } from "../../src/probes/evidence/repro-steps.ts";
import { idStepsFor, NO_CREATION, stepFromPrepared } from "../../src/probes/evidence/repro-steps.ts";

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

describe("an undocumented route's test reads the record it creates", () => {
  it("puts the create step where the probe's record stood, keeping the base path", () => {
    const operation = request("/api/things/{thingId}", {}).operation;
    const made: CreationSteps = { steps: [], idSteps: {}, stepOfId: { "5f2c": "created" } };
    expect(reproPath(operation, "http://127.0.0.1:9/app/api/things/5f2c", made).path).toBe(
      "/app/api/things/{{created.id}}",
    );
    // An id the probe only saw (nothing created) stays as sent.
    expect(reproPath(operation, "http://127.0.0.1:9/api/things/77", NO_CREATION).path).toBe("/api/things/77");
  });
});
