import { describe, expect, it } from "vitest";
import { heldNotice, MustCallHook } from "../../src/runner/hooks.ts";
import { invokeTool } from "../../src/tools/invoke-tool.ts";
import { fakeRunContext, testAgent } from "../support/fake-run-context.ts";

const draft = (overrides: Record<string, unknown> = {}) => ({
  domain: "performance",
  defect_class: "n-plus-one",
  title: "Listing orders runs one query per order",
  summary: "Queries grow with the number of orders returned.",
  location: { kind: "endpoint", value: "GET /orders" },
  evidence: [{ kind: "artifact", description: "query counts", uri: "artifact://run-test/counts.json" }],
  reproduction: { steps: ["GET /orders?limit=2", "GET /orders?limit=20", "compare query counts"] },
  impact: "Latency grows linearly.",
  severity: "medium",
  confidence: 0.9,
  ...overrides,
});

const context = () =>
  fakeRunContext({ agent: testAgent({ tools: ["emit_envelope", "list_findings", "get_system_map"] }) });

describe("emit_envelope", () => {
  it("stores a valid finding, fingerprints it, remembers it and ledgers it", async () => {
    const run = context();
    const result = await invokeTool("emit_envelope", draft(), run, "tester-1");
    expect(result).toMatchObject({ ok: true, data: { fileable: true, held: false } });
    const [stored] = run.readEnvelopes();
    expect(stored).toMatchObject({
      run_id: "run-test",
      discovered_by: "TESTER",
      tracker: { state: "unfiled" },
    });
    expect(stored!.dedupe.fingerprint).toMatch(/^fp_/);
    expect(run.memory.occurrences(stored!.dedupe.fingerprint)).toHaveLength(1);
    expect(run.entries.map((entry) => entry.kind)).toEqual(["envelope_emitted", "tool_called"]);
  });

  it("recognises the same defect said twice in one run and stores it once", async () => {
    const run = context();
    const first = await invokeTool("emit_envelope", draft(), run, "tester-1");
    const again = await invokeTool(
      "emit_envelope",
      draft({ title: "N+1 on the order list", confidence: 0.8 }),
      run,
      "tester-2",
    );
    expect(first.ok && again.ok).toBe(true);
    if (!first.ok || !again.ok) return;
    expect((again.data as { duplicate_of: string }).duplicate_of).toBe(
      (first.data as { envelope_id: string }).envelope_id,
    );
    expect(run.readEnvelopes()).toHaveLength(1);
  });

  it("holds a finding below the threshold or without evidence, and says so at once", async () => {
    const run = context();
    const result = await invokeTool("emit_envelope", draft({ confidence: 0.4 }), run, "tester-1");
    expect(result).toMatchObject({ ok: true, data: { held: true, fileable: false } });
    expect(run.readEnvelopes()[0]!.tracker.state).toBe("held");
    expect(run.entries.find((entry) => entry.kind === "envelope_held")?.data.reason).toContain(
      "below the threshold",
    );
    const noticed = heldNotice("emit_envelope", result);
    expect(noticed.ok && (noticed.data as { notice: string }).notice).toContain("HELD");
    const noEvidence = await invokeTool(
      "emit_envelope",
      draft({ evidence: [], location: { kind: "endpoint", value: "GET /x" } }),
      run,
      "t",
    );
    expect(noEvidence).toMatchObject({ ok: true, data: { held: true } });
  });

  it("answers every invalid field by path so an agent can correct itself", async () => {
    const run = context();
    const result = await invokeTool(
      "emit_envelope",
      draft({ severity: "urgent", location: { kind: "url", value: "/x" }, bogus: 1 }),
      run,
      "t",
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toContain("severity");
    expect(result.error).toContain("location.kind");
    expect(result.error).toContain("bogus");
    expect(run.readEnvelopes()).toHaveLength(0);
  });

  it("get_system_map explains that no map is pinned yet", async () => {
    const result = await invokeTool("get_system_map", {}, context(), "t");
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining("MAPPER") });
  });
});

describe("the must_call stop hook", () => {
  it("refuses a premature stop with the reason, and records when a stuck agent is let go", () => {
    const fired: Array<Record<string, unknown>> = [];
    const hook = new MustCallHook(["save_system_map"], (data) => fired.push(data));
    const first = hook.check();
    expect(first.allow).toBe(false);
    expect(first.reason).toContain("save_system_map");
    // The seat ends the second attempt as `stopped`; the hook records that the agent was let go.
    expect(hook.check().allow).toBe(false);
    expect(fired.map((data) => data.action)).toEqual(["refused_stop", "let_go"]);
  });

  it("allows the stop once the tool was called", () => {
    const hook = new MustCallHook(["save_system_map"], () => {});
    hook.called("save_system_map");
    expect(hook.check()).toEqual({ allow: true });
  });
});
