import type { SeatRef } from "../config/agent-schema.ts";
import type { SystemConfig } from "../config/system-schema.ts";
import { QaasError } from "../errors.ts";
import { ANTHROPIC_DEFAULT_BASE_URL, AnthropicSeat } from "./anthropic-seat.ts";
import { BuiltinSeat } from "./builtin-seat.ts";
import { type ClaudeAgentSdk, ClaudeCodeSeat } from "./claude-code-seat.ts";
import type { MockSeat } from "./mock-seat.ts";
import { OPENAI_DEFAULT_BASE_URL, OpenAICompatibleSeat } from "./openai-compatible-seat.ts";
import { ModelOrchestrator, type ModelOrchestratorOptions } from "./orchestrator/model-orchestrator.ts";
import { RulesOrchestrator } from "./orchestrator/rules-orchestrator.ts";
import type { OrchestratorSeat, SeatWarning, WorkerSeat } from "./seat.ts";
import { checkSeatSafety } from "./seat-safety.ts";

// The one place a seat reference becomes a seat. Building never touches the network or reads a key (both
// happen in `run`), so a misconfigured seat is refused before any agent starts, and offline.

export interface CreateSeatOptions {
  /** Where the reference came from, for messages, e.g. `config/system.yaml seats.worker`. */
  source?: string;
  /** The only way to build backend `mock`: a test injects the MockSeat it scripted. */
  mock?: MockSeat;
  /** How the claude-code seat loads its optional SDK (tests replace it). */
  loadClaudeAgentSdk?: () => Promise<ClaudeAgentSdk>;
  /** For a model orchestrator. */
  orchestrator?: ModelOrchestratorOptions;
}

export interface CreatedSeat<Seat> {
  seat: Seat;
  /** Notices the caller must print (an unknown key name, an ignored setting). */
  warnings: SeatWarning[];
}

export type OrchestratorSeatRef = SystemConfig["seats"]["orchestrator"];

export function createWorkerSeat(ref: SeatRef, options: CreateSeatOptions = {}): CreatedSeat<WorkerSeat> {
  const source = options.source ?? "seat";
  switch (ref.backend) {
    case "builtin":
      return { seat: new BuiltinSeat(), warnings: ignoredSettings(ref, source) };
    case "mock":
      if (options.mock === undefined) {
        throw new QaasError(
          "SEAT_INVALID",
          `${source}: backend "mock" exists for tests only; use builtin, openai-compatible, anthropic or claude-code`,
        );
      }
      return { seat: options.mock, warnings: [] };
    case "openai-compatible":
      return {
        seat: new OpenAICompatibleSeat({ ...ref, model: requireModel(ref, source) }),
        warnings: assertSafe(ref, source, OPENAI_DEFAULT_BASE_URL),
      };
    case "anthropic":
      return {
        seat: new AnthropicSeat({ ...ref, model: requireModel(ref, source) }),
        warnings: assertSafe(ref, source, ANTHROPIC_DEFAULT_BASE_URL),
      };
    case "claude-code":
      return {
        seat: new ClaudeCodeSeat(ref, options.loadClaudeAgentSdk),
        warnings: assertSafe(ref, source, undefined),
      };
  }
}

export function createOrchestratorSeat(
  ref: OrchestratorSeatRef,
  options: CreateSeatOptions = {},
): CreatedSeat<OrchestratorSeat> {
  // The builtin worker seat's counterpart for decisions is the deterministic rule set.
  if (ref.backend === "rules" || ref.backend === "builtin")
    return { seat: new RulesOrchestrator(), warnings: [] };
  const worker = createWorkerSeat(ref, { ...options, source: options.source ?? "seats.orchestrator" });
  return { seat: new ModelOrchestrator(worker.seat, options.orchestrator), warnings: worker.warnings };
}

function requireModel(ref: SeatRef, source: string): string {
  if (ref.model === undefined || ref.model.trim() === "") {
    throw new QaasError(
      "SEAT_INVALID",
      `${source}: backend "${ref.backend}" needs a model name (model: ...), e.g. the id your provider lists`,
    );
  }
  return ref.model;
}

function assertSafe(ref: SeatRef, source: string, defaultBaseUrl: string | undefined): SeatWarning[] {
  const report = checkSeatSafety(ref, defaultBaseUrl);
  if (report.refusals.length > 0) {
    throw new QaasError(
      "SEAT_REFUSED",
      `${source}: ${ref.backend} seat refused: ${report.refusals.join("; ")}`,
    );
  }
  return report.warnings;
}

function ignoredSettings(ref: SeatRef, source: string): SeatWarning[] {
  const ignored = (["model", "base_url", "api_key_env", "price", "max_output_tokens"] as const).filter(
    (key) => ref[key] !== undefined,
  );
  return ignored.map((feature) => ({
    type: "unsupported" as const,
    feature,
    message: `${source}: the builtin seat runs playbooks without a model and ignores "${feature}"`,
  }));
}
