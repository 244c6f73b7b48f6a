import { afterEach, describe, expect, it } from "vitest";
import { createOrchestratorSeat } from "../../src/seats/create-seat.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { decideGate, type GateItem } from "../../src/seats/orchestrator/decide-gate.ts";
import { ModelOrchestrator } from "../../src/seats/orchestrator/model-orchestrator.ts";
import { RulesOrchestrator } from "../../src/seats/orchestrator/rules-orchestrator.ts";
import type { Decision, DecisionRequest, OrchestratorSeat } from "../../src/seats/seat.ts";
import { type FakeModelServer, startOpenAIFakeServer } from "./fakes/openai-fake-server.ts";

const REVIEW_OPTIONS = ["APPROVE", "REJECT", "ESCALATE"];

const review = (context: Record<string, unknown>, options = REVIEW_OPTIONS): DecisionRequest => ({
  kind: "review_gate",
  question: "Merge-ready?",
  context,
  options,
});

describe("RulesOrchestrator", () => {
  const rules = new RulesOrchestrator();

  it.each([
    [
      "approves a passing fix within budget",
      review({ testPassed: true, diff: { files: 1, lines: 8 }, diffBudget: { files: 3, lines: 60 } }),
      "APPROVE",
    ],
    [
      "rejects a fix whose test still fails",
      review({ testPassed: false, diff: { files: 1, lines: 2 } }),
      "REJECT",
    ],
    [
      "rejects a diff over budget",
      review({ testPassed: true, diff: { files: 4, lines: 10 }, diffBudget: { files: 3, lines: 60 } }),
      "REJECT",
    ],
    [
      "escalates a change touching forbidden paths, whatever the test says",
      review({
        testPassed: true,
        diff: { files: 1, lines: 1 },
        forbiddenPathsTouched: ["db/migrations/2.sql"],
      }),
      "ESCALATE",
    ],
    [
      "accepts a test-proven final catch",
      {
        kind: "final_catch",
        question: "File it?",
        context: { testProven: true },
        options: ["ACCEPT", "HOLD"],
      },
      "ACCEPT",
    ],
    [
      "holds an unproven finding below the threshold",
      {
        kind: "final_catch",
        question: "File it?",
        context: { confidence: 0.4, threshold: 0.7 },
        options: ["ACCEPT", "HOLD"],
      },
      "HOLD",
    ],
    [
      "retries while attempts remain",
      {
        kind: "escalation",
        question: "Next?",
        context: { attempts: 1, maxAttempts: 3 },
        options: ["RETRY", "ESCALATE"],
      },
      "RETRY",
    ],
  ] satisfies Array<[string, DecisionRequest, string]>)("%s", async (_name, request, choice) => {
    await expect(rules.decide(request)).resolves.toMatchObject({ status: "decided", choice });
  });

  it.each([
    ["no verifier result", review({ diff: { files: 1, lines: 1 } })],
    ["a malformed context", review({ testPassed: "yes" })],
    [
      "a verdict outside the options",
      review({ testPassed: true, diff: { files: 1, lines: 1 } }, ["LGTM", "NOPE"]),
    ],
  ])("abstains on %s instead of guessing", async (_name, request) => {
    await expect(rules.decide(request)).resolves.toMatchObject({ status: "abstained" });
  });

  it("matches options case-insensitively and answers with the caller's spelling", async () => {
    const decision = await rules.decide(
      review({ testPassed: false, diff: { files: 1, lines: 1 } }, ["approve", "reject"]),
    );
    expect(decision).toMatchObject({ status: "decided", choice: "reject" });
  });
});

describe("ModelOrchestrator", () => {
  it("returns the choice the model gave through decide", async () => {
    const seat = new MockSeat({
      run: {
        script: [{ tool: "decide", input: { choice: "APPROVE", rationale: "test passes" } }, { finish: "" }],
      },
    });
    const decision = await new ModelOrchestrator(seat).decide(review({ testPassed: true }));
    expect(decision).toEqual({ status: "decided", choice: "APPROVE", rationale: "test passes" });
    expect(seat.calls[0]?.tools.map((entry) => entry.name)).toEqual(["decide"]);
    expect(seat.calls[0]?.tools[0]?.inputSchema).toMatchObject({
      properties: { choice: { enum: REVIEW_OPTIONS } },
    });
    expect(seat.toolCalls[0]?.result).toEqual({ ok: true, data: { recorded: "APPROVE" } });
  });

  it("fails on a choice outside the options, telling the model so", async () => {
    const seat = new MockSeat({
      run: {
        script: [
          { tool: "decide", input: { choice: "SHIP IT", rationale: "yolo" } },
          { finish: "" },
          { finish: "" },
        ],
      },
    });
    const decision = await new ModelOrchestrator(seat).decide(review({}));
    expect(decision).toMatchObject({ status: "failed", error: expect.stringContaining('"SHIP IT"') });
    expect(seat.toolCalls[0]?.result).toEqual({
      ok: false,
      error: "choice must be exactly one of: APPROVE, REJECT, ESCALATE",
    });
  });

  it("abstains when the model never calls decide", async () => {
    const seat = new MockSeat({ run: { script: [{ finish: "I think approve" }, { finish: "approve!" }] } });
    await expect(new ModelOrchestrator(seat).decide(review({}))).resolves.toMatchObject({
      status: "abstained",
    });
  });

  it("fails when the seat errors", async () => {
    const seat = new MockSeat({ run: { script: [{ throw: new Error("HTTP 500") }] } });
    await expect(new ModelOrchestrator(seat).decide(review({}))).resolves.toMatchObject({
      status: "failed",
      error: expect.stringContaining("HTTP 500"),
    });
  });

  describe("on a real model seat", () => {
    let server: FakeModelServer | undefined;
    afterEach(async () => {
      await server?.close();
    });

    it("decides through the OpenAI-compatible wire format", async () => {
      server = await startOpenAIFakeServer([
        { tool: "decide", input: { choice: "ESCALATE", rationale: "touches auth" } },
        { text: "Decided." },
      ]);
      const { seat } = createOrchestratorSeat({
        backend: "openai-compatible",
        model: "judge",
        base_url: `${server.url}/v1`,
        is_local: true,
      });
      await expect(seat.decide(review({ forbiddenPathsTouched: ["src/auth.ts"] }))).resolves.toEqual({
        status: "decided",
        choice: "ESCALATE",
        rationale: "touches auth",
      });
      const firstBody = server.requests[0]?.body as { messages: Array<{ content: string }> };
      expect(firstBody.messages.at(-1)?.content).toContain("src/auth.ts");
    });
  });
});

class ScriptedOrchestrator implements OrchestratorSeat {
  readonly specificationVersion = "v1" as const;
  readonly backend = "scripted";
  constructor(private readonly answers: Array<Decision | Error>) {}
  async decide(): Promise<Decision> {
    const answer = this.answers.shift();
    if (answer === undefined || answer instanceof Error) throw answer ?? new Error("no answer scripted");
    return answer;
  }
}

const item = (id: string, testProven: boolean): GateItem => ({ id, testProven, request: review({}) });

describe("decideGate", () => {
  it("lets a test-proven item through when its decision fails, holds an unproven one, invents nothing", async () => {
    const seat = new ScriptedOrchestrator([
      { status: "failed", error: "HTTP 500" },
      { status: "abstained", rationale: "unsure" },
      { status: "decided", choice: "REJECT", rationale: "test still fails" },
    ]);
    const report = await decideGate([item("F-1", true), item("F-2", false), item("F-3", true)], seat);

    expect(report.verdicts.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: "F-1", status: "accepted" },
      { id: "F-2", status: "held" },
      { id: "F-3", status: "decided" },
    ]);
    expect(report.verdicts[0]).toMatchObject({ note: "accepted (decision unavailable)" });
    expect(report.verdicts[2]).toMatchObject({ choice: "REJECT" });
    expect(report).toMatchObject({ decided: 1, failed: 1, abstained: 1, degraded: false });
  });

  it("reports itself degraded when every decision failed", async () => {
    const seat = new ScriptedOrchestrator([
      new Error("connection reset"),
      { status: "failed", error: "HTTP 401" },
    ]);
    const report = await decideGate([item("F-1", true), item("F-2", false)], seat);
    expect(report.degraded).toBe(true);
    expect(report.failed).toBe(2);
    expect(report.verdicts.map((verdict) => verdict.status)).toEqual(["accepted", "held"]);
    expect(report.verdicts[0]?.decision).toMatchObject({
      error: expect.stringContaining("connection reset"),
    });
  });

  it("treats a decided choice outside the options as a failure, never a verdict", async () => {
    const seat = new ScriptedOrchestrator([{ status: "decided", choice: "MERGE", rationale: "looks fine" }]);
    const report = await decideGate([item("F-1", false)], seat);
    expect(report.verdicts[0]).toMatchObject({ status: "held", decision: { status: "failed" } });
    expect(report.degraded).toBe(true);
  });

  it("is not degraded when it had nothing to decide", async () => {
    await expect(decideGate([], new RulesOrchestrator())).resolves.toMatchObject({
      degraded: false,
      verdicts: [],
    });
  });
});
