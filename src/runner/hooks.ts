import type { StopCheck } from "../seats/seat.ts";
import type { ToolResult } from "../tools/result.ts";

/**
 * The `Stop` hook: an agent may not finish before calling its declared `must_call` tools. The first
 * refusal carries the reason back to the agent; seats hear it once and end a second attempt as
 * `stopped` (a stuck agent is not looped), and the hook records that the agent was let go.
 */
export class MustCallHook {
  private readonly calledTools = new Set<string>();
  private refusals = 0;

  constructor(
    private readonly mustCall: readonly string[],
    private readonly record: (data: Record<string, unknown>) => void,
  ) {}

  called(tool: string): void {
    this.calledTools.add(tool);
  }

  check(): StopCheck {
    const missing = this.mustCall.filter((tool) => !this.calledTools.has(tool));
    if (missing.length === 0) return { allow: true };
    this.refusals += 1;
    this.record({ missing, action: this.refusals === 1 ? "refused_stop" : "let_go" });
    return {
      allow: false,
      reason: `You may not finish yet: you have not called ${missing.join(", ")}. Call ${missing.length === 1 ? "it" : "them"} now, then finish.`,
    };
  }
}

/** The post-emit hook: tell the agent at once when its envelope was held rather than filed. */
export function heldNotice(tool: string, result: ToolResult): ToolResult {
  if (tool !== "emit_envelope" || !result.ok) return result;
  const data = result.data as { held?: boolean } | undefined;
  if (!data?.held) return result;
  return {
    ok: true,
    data: {
      ...data,
      notice:
        "This finding was HELD for a person, not filed: add an artifact or failing test as evidence, or raise confidence only if the evidence supports it.",
    },
  };
}
