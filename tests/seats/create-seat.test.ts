import { describe, expect, it } from "vitest";
import { AnthropicSeat } from "../../src/seats/anthropic-seat.ts";
import { BuiltinSeat } from "../../src/seats/builtin-seat.ts";
import { ClaudeCodeSeat } from "../../src/seats/claude-code-seat.ts";
import { createOrchestratorSeat, createWorkerSeat } from "../../src/seats/create-seat.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { OpenAICompatibleSeat } from "../../src/seats/openai-compatible-seat.ts";
import { ModelOrchestrator } from "../../src/seats/orchestrator/model-orchestrator.ts";
import { RulesOrchestrator } from "../../src/seats/orchestrator/rules-orchestrator.ts";

describe("createWorkerSeat", () => {
  it.each([
    [{ backend: "builtin" as const }, BuiltinSeat],
    [{ backend: "openai-compatible" as const, model: "gpt-test" }, OpenAICompatibleSeat],
    [{ backend: "anthropic" as const, model: "claude-test" }, AnthropicSeat],
    [{ backend: "claude-code" as const }, ClaudeCodeSeat],
  ])("builds %o", (ref, kind) => {
    const { seat, warnings } = createWorkerSeat(ref);
    expect(seat).toBeInstanceOf(kind);
    expect(seat.specificationVersion).toBe("v1");
    expect(warnings).toEqual([]);
  });

  it("builds backend mock only from an injected MockSeat", () => {
    expect(() => createWorkerSeat({ backend: "mock" })).toThrow(/backend "mock" exists for tests only/);
    const mock = new MockSeat();
    expect(createWorkerSeat({ backend: "mock" }, { mock }).seat).toBe(mock);
  });

  it("requires a model name for model seats, saying where", () => {
    expect(() =>
      createWorkerSeat({ backend: "anthropic" }, { source: "config/agents/fixer.yaml seat" }),
    ).toThrow(/config\/agents\/fixer\.yaml seat: backend "anthropic" needs a model name/);
  });

  it("warns that the builtin seat ignores model settings", () => {
    const { warnings } = createWorkerSeat({ backend: "builtin", model: "gpt-test" });
    expect(warnings).toEqual([expect.objectContaining({ type: "unsupported", feature: "model" })]);
  });
});

describe("createOrchestratorSeat", () => {
  it("builds the rules orchestrator for rules and builtin", () => {
    expect(createOrchestratorSeat({ backend: "rules" }).seat).toBeInstanceOf(RulesOrchestrator);
    expect(createOrchestratorSeat({ backend: "builtin" }).seat).toBeInstanceOf(RulesOrchestrator);
  });

  it("puts a model seat (or an injected mock) behind the decide tool", async () => {
    expect(createOrchestratorSeat({ backend: "anthropic", model: "claude-test" }).seat).toBeInstanceOf(
      ModelOrchestrator,
    );
    const mock = new MockSeat({
      run: { script: [{ tool: "decide", input: { choice: "HOLD", rationale: "thin" } }] },
    });
    const { seat } = createOrchestratorSeat({ backend: "mock" }, { mock });
    await expect(
      seat.decide({ kind: "final_catch", question: "File?", context: {}, options: ["ACCEPT", "HOLD"] }),
    ).resolves.toEqual({ status: "decided", choice: "HOLD", rationale: "thin" });
  });
});
