import type { SeatRef } from "../config/agent-schema.ts";
import type { LoadedConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import type { RunPlan } from "../router/run-state.ts";
import { type ClaudeAgentSdk, loadClaudeAgentSdk } from "../seats/claude-code-seat.ts";
import { createOrchestratorSeat, createWorkerSeat } from "../seats/create-seat.ts";
import { parseSeatOption } from "./seat-resolver.ts";

// Before the target starts, every seat the run will use is checked the way its first call would check
// it: the seat can be built (safety checks), its key variable is set, its optional SDK loads. A seat that
// would fail only at call time otherwise costs each of its agents quietly, and a run whose every agent
// failed that way used to end "completed: 0 finding(s)". All problems are named at once, not the first.

export interface PreflightOptions {
  /** `--seat`: every agent on this seat. */
  seat?: string;
  /** Tests replace how the claude-code seat's optional SDK is loaded. */
  loadClaudeAgentSdk?: () => Promise<ClaudeAgentSdk>;
  /** Skip the orchestrator seat (a test injected its own). */
  skipOrchestrator?: boolean;
}

/** Throws SEAT_PREFLIGHT_FAILED naming every seat problem and the agents it would hit. */
export async function preflightSeats(
  config: LoadedConfig,
  plan: Pick<RunPlan, "agents">,
  options: PreflightOptions = {},
): Promise<void> {
  const override = options.seat === undefined ? undefined : parseSeatOption(options.seat, config);
  const users = new Map<string, { ref: SeatRef; source: string; agents: string[] }>();
  const use = (ref: SeatRef, source: string, agent: string) => {
    const key = JSON.stringify(ref);
    const entry = users.get(key) ?? { ref, source, agents: [] };
    entry.agents.push(agent);
    users.set(key, entry);
  };
  for (const planned of plan.agents) {
    const agent = config.agents.get(planned.name);
    const ref = override ?? agent?.config.seat ?? config.system.seats.worker;
    const source = override
      ? `--seat ${options.seat}`
      : agent?.config.seat
        ? `${agent.file} seat`
        : "config/system.yaml seats.worker";
    use(ref, source, planned.name);
  }

  const problems: string[] = [];
  for (const { ref, source, agents } of users.values()) {
    for (const problem of await seatProblems(ref, source, options)) {
      problems.push(`${problem} (agents: ${agents.join(", ")})`);
    }
  }
  if (!options.skipOrchestrator) {
    const orchestrator = config.system.seats.orchestrator;
    if (orchestrator.backend !== "rules" && orchestrator.backend !== "builtin") {
      try {
        createOrchestratorSeat(orchestrator, { source: "config/system.yaml seats.orchestrator" });
        problems.push(
          ...(await seatProblems(orchestrator, "config/system.yaml seats.orchestrator", options, false)),
        );
      } catch (error) {
        problems.push(messageOf(error));
      }
    }
  }
  if (problems.length > 0) {
    throw new QaasError(
      "SEAT_PREFLIGHT_FAILED",
      `the run cannot start: ${problems.length} seat problem(s); nothing was started:\n` +
        problems.map((problem) => `  - ${problem}`).join("\n"),
    );
  }
}

async function seatProblems(
  ref: SeatRef,
  source: string,
  options: PreflightOptions,
  build = true,
): Promise<string[]> {
  if (ref.backend === "builtin" || ref.backend === "mock") return [];
  const problems: string[] = [];
  if (build) {
    try {
      createWorkerSeat(ref, { source });
    } catch (error) {
      problems.push(messageOf(error));
    }
  }
  const variable = keyVariable(ref);
  if (variable !== undefined && (process.env[variable] ?? "").trim() === "") {
    problems.push(
      `${source}: the ${ref.backend} seat reads its API key from ${variable}, which is not set; export it or ` +
        "point api_key_env at the variable that holds the key",
    );
  }
  if (ref.backend === "claude-code") {
    try {
      await (options.loadClaudeAgentSdk ?? (() => loadClaudeAgentSdk()))();
    } catch (error) {
      problems.push(`${source}: ${messageOf(error)}`);
    }
  }
  return problems;
}

/** The variable each backend reads its key from at call time (mirrors the seats). */
function keyVariable(ref: SeatRef): string | undefined {
  switch (ref.backend) {
    case "openai-compatible":
      return ref.api_key_env ?? (ref.base_url === undefined ? "OPENAI_API_KEY" : undefined);
    case "anthropic":
      return ref.api_key_env ?? "ANTHROPIC_API_KEY";
    default:
      return ref.api_key_env;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
