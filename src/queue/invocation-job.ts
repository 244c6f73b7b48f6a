import type { DefectEnvelope } from "../envelope/envelope.ts";
import type { RecordInput } from "../memory/defect-memory.ts";
import type { Invocation, RouterEvent } from "../router/run-state.ts";
import type { LedgerKind } from "../store/ledger-kinds.ts";

// What travels through the queue: one agent invocation out, how it ended back. Plain JSON both ways,
// like the router's events, so a job can be read by `qaas queue status` and replayed by another worker.

export const INVOCATION_QUEUE = "qaas-invocation";
/** Whole runs waiting for a coordinator; the job's lease is the run's: one coordinator at a time. */
export const RUN_QUEUE = "qaas-run";
/** A sweep to expand into run jobs; cron schedules (nightlies) send here. */
export const SWEEP_QUEUE = "qaas-sweep";
/** Where an invocation lands after its last allowed try, for a person to look at. */
export const DEAD_LETTER_QUEUE = "qaas-invocation-dead";

export interface InvocationJob {
  run_id: string;
  mode: string;
  /** The profile file and config folder the coordinator loaded; workers see the same shared paths. */
  target_file: string;
  target: string;
  config_dir: string;
  seat: string | null;
  invocation: Invocation;
}

export interface RunJob {
  target_file: string;
  mode: string;
  config_dir: string;
  /** Set by the first coordinator as soon as the run exists, so a successor resumes it. */
  run_id?: string;
}

export interface SweepJob {
  targets: string[];
  modes: string[];
  config_dir: string;
}

/** A ledger entry a worker recorded; only the run's coordinator gives it a sequence number. */
export interface RecordedEntry {
  kind: LedgerKind;
  data: Record<string, unknown>;
  agent?: string;
}

export interface InvocationResult {
  event: RouterEvent;
  entries: RecordedEntry[];
  envelopes: DefectEnvelope[];
  worker: string;
  /** 1 for the first try; a try after a killed worker's lease expired counts. */
  try: number;
  /** When the worker began the agent, once the target's limits let it (the job's lease moves its start). */
  started_at?: string;
  /** Run files the agent wrote (the pinned map), for the coordinator's folder. */
  files?: RunFile[];
  /** Fingerprints the agent recorded in the defect memory, applied by the coordinator once. */
  memory?: RecordInput[];
}

/** Files of a run folder an agent may write on a worker; the coordinator copies them into its own. */
export const WORKER_RUN_FILES: readonly string[] = ["pinned-map.json"];

export interface RunFile {
  name: string;
  content: string;
}

export function isInvocationResult(value: unknown): value is InvocationResult {
  if (typeof value !== "object" || value === null) return false;
  const result = value as Partial<InvocationResult>;
  return (
    typeof result.event === "object" &&
    result.event !== null &&
    Array.isArray(result.entries) &&
    Array.isArray(result.envelopes) &&
    typeof result.worker === "string"
  );
}
