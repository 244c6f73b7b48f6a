import { describe, expect, it } from "vitest";
import { agentBudget, surfaceBudget } from "../../src/probes/http/run-http.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// A tool's default request budget grows with the application it is pointed at: a map of 250 operations
// gets two and a half times the budget of a small one (at most four times), so the last operations of a
// big application are probed too. A budget the profile names is never scaled.

function contextWith(operations: number, budgets?: Record<string, unknown>) {
  const read = { get: { responses: { "200": { description: "ok" } } } };
  const document = {
    openapi: "3.0.3",
    info: { title: "wide", version: "1" },
    paths: Object.fromEntries(
      Array.from({ length: operations }, (_, index) => [`/api/things${index}`, read]),
    ),
  };
  const baseUrl = "http://127.0.0.1:9";
  const map = systemMapFor({ target: "wide", baseUrl, document });
  const profile = profileFor({
    name: "wide",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
    ...(budgets ? { budgets } : {}),
  });
  return probeContext({ profile, map, agent: "AUDITOR" });
}

describe("default request budgets sized to the map", () => {
  it("keeps the base for a small map, grows with a large one, and stops at four times", () => {
    expect(surfaceBudget(contextWith(40), 1500)).toBe(1500);
    expect(surfaceBudget(contextWith(250), 1500)).toBe(3750);
    expect(surfaceBudget(contextWith(900), 1500)).toBe(6000);
  });

  it("scales the agent's default budget, never the one the profile names", () => {
    expect(agentBudget(contextWith(250)).max).toBe(30_000);
    expect(agentBudget(contextWith(250, { max_requests_per_agent: 5000 })).max).toBe(5000);
  });
});
