import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SpendMeter } from "../../src/run/spend-meter.ts";
import { startRun } from "../../src/run/start-run.ts";
import { createWorkerSeat } from "../../src/seats/create-seat.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { startAnthropicFakeServer } from "../seats/fakes/anthropic-fake-server.ts";
import type { FakeModelServer, ScriptedReply } from "../seats/fakes/fake-model-server.ts";
import { startOpenAIFakeServer } from "../seats/fakes/openai-fake-server.ts";
import { recordingSeatRequest } from "../seats/fakes/seat-request.ts";
import { tempProject } from "../support/temp-config.ts";

// Budgets are hard caps: the seat asks before every model call whether the call's worst case (its
// estimated input plus its output limit, at the seat's price) fits, so a run or an agent stops BELOW its
// cap instead of finding out after an invocation that it spent past it.

const KEY = "QAAS_BUDGET_TEST_LLM_KEY";
const PRICE = { input_per_mtok: 10, output_per_mtok: 30 };
const USAGE = { input: 500, output: 50 };
const costOf = (calls: number) =>
  (calls * (USAGE.input * PRICE.input_per_mtok + USAGE.output * PRICE.output_per_mtok)) / 1_000_000;

// A model that would go on calling tools far longer than any cap allows.
const endless: ScriptedReply[] = Array.from({ length: 40 }, (_, index) => ({
  tool: "search_similar",
  input: { text: `attempt ${index}` },
  usage: USAGE,
}));

const backends = [
  {
    name: "openai-compatible",
    start: startOpenAIFakeServer,
    seat: (url: string) => ({
      backend: "openai-compatible" as const,
      model: "fake-model",
      base_url: `${url}/v1`,
    }),
  },
  {
    name: "anthropic",
    start: startAnthropicFakeServer,
    seat: (url: string) => ({ backend: "anthropic" as const, model: "fake-claude", base_url: url }),
  },
] as const;

let server: FakeModelServer | undefined;
beforeEach(() => {
  process.env[KEY] = "test-key-not-secret";
});
afterEach(async () => {
  delete process.env[KEY];
  await server?.close();
  server = undefined;
});

async function budgetedRun(backend: (typeof backends)[number], budgets: { run: number; agent?: number }) {
  server = await backend.start(endless);
  const project = tempProject();
  project.addAgent({
    name: "SPENDER",
    yaml: {
      description: "An agent on a model seat that never stops on its own.",
      layer: "discover",
      phase: "discover",
      max_turns: 40,
      seat: {
        ...backend.seat(server.url),
        is_local: true,
        api_key_env: KEY,
        price: PRICE,
        max_output_tokens: 200,
      },
      tools: ["emit_envelope", "search_similar"],
      ...(budgets.agent === undefined ? {} : { budget: { usd: budgets.agent } }),
    },
  });
  project.addMode("capped", { roster: ["SPENDER"], budget: { usd: budgets.run } });
  const target = project.addTarget("static", { source: { path: "../.." }, environment: { mode: "none" } });
  const { runId, report } = await startRun({
    home: project.home,
    configDir: project.configDir,
    mode: "capped",
    target,
    json: true,
  });
  const entries = RunStore.open(project.home, runId).readLedger().entries;
  return { report, entries, requests: server.requests.length };
}

describe.each(backends)("hard caps on a $name seat", (backend) => {
  it("stops the run before a model call could cross the run's budget", async () => {
    const cap = 0.05;
    const { report, entries, requests } = await budgetedRun(backend, { run: cap });

    expect(requests).toBeGreaterThan(1);
    expect(requests).toBeLessThan(endless.length);
    expect(report.status).toBe("budget_exceeded");
    expect(report.budget.used_usd).toBeCloseTo(costOf(requests), 9);
    expect(report.budget.used_usd).toBeLessThanOrEqual(cap);
    const refusal = entries.find(
      (entry) => entry.kind === "budget_exceeded" && entry.data.reason === "model_call_refused",
    );
    expect(refusal?.data).toMatchObject({ scope: "run", agent: "SPENDER", unit: "usd", cap });
    const data = refusal?.data as { spent: number; refused_call_worst_case: number };
    expect(data.spent + data.refused_call_worst_case).toBeGreaterThan(cap);
  });

  it("stops an agent before a model call could cross its own budget; the run goes on", async () => {
    const cap = 0.03;
    const { report, entries, requests } = await budgetedRun(backend, { run: 1, agent: cap });

    expect(requests).toBeLessThan(endless.length);
    expect(report.status).toBe("completed");
    expect(report.budget.used_usd).toBeLessThanOrEqual(cap);
    expect(report.agents.find((row) => row.agent === "SPENDER")?.outcomes).toEqual({ over_budget: 1 });
    expect(
      entries.find((entry) => entry.kind === "budget_exceeded" && entry.data.reason === "model_call_refused")
        ?.data,
    ).toMatchObject({ scope: "agent", agent: "SPENDER", cap });
  });

  it("counts a failed model call's cost (an estimate when the server reports no usage)", async () => {
    server = await backend.start([{ status: 400, message: "bad request" }]);
    const meter = new SpendMeter({ budget: { usd: 1 }, agents: [] });
    const budget = meter.forInvocation("TESTER");
    const { seat } = createWorkerSeat({
      ...backend.seat(server.url),
      is_local: true,
      api_key_env: KEY,
      price: PRICE,
      max_output_tokens: 200,
    });

    await expect(seat.run({ ...recordingSeatRequest(), budget })).rejects.toThrow(/HTTP 400/);
    expect(budget.spent().tokens).toBeGreaterThan(0);
    expect(budget.spent().usd).toBeGreaterThan(0);
    expect(meter.totals()).toEqual(budget.spent());
  });
});
