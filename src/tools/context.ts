import type { AgentConfig } from "../config/agent-schema.ts";
import type { SystemConfig } from "../config/system-schema.ts";
import type { DefectEnvelope } from "../envelope/envelope.ts";
import type { SystemMap } from "../map/system-map.ts";
import type { LedgerEntry, LedgerKind } from "../store/ledger-kinds.ts";
import type { TargetProfile } from "../targets/profile-schema.ts";

/** A profile as loaded: the parsed file plus where it came from and where the target's code is. */
export interface LoadedTarget {
  profile: TargetProfile;
  /** Absolute path of the profile file. */
  file: string;
  /** Absolute path of the target's source root, when it has one. */
  root: string | undefined;
  /** Absolute path of the golden ledger, when the profile names one (never readable by tools). */
  goldenLedger: string | undefined;
}

/** What every tool of one run can reach. Tool servers close over it; nothing else is global. */
export interface RunContext {
  runId: string;
  /** The store root (`.qaas/` by default). */
  home: string;
  system: SystemConfig;
  target: LoadedTarget | undefined;
  /** The system map pinned for this run (undefined before MAPPER has produced one). */
  systemMap(): SystemMap | undefined;
  /** Saves a new immutable version of the target's system map and pins it to this run. */
  saveSystemMap(map: SystemMap): { version: number };
  /** Appends one ledger entry; the only way anything reaches the ledger. */
  record(kind: LedgerKind, data: Record<string, unknown>, agent?: string): LedgerEntry;
  /** Stores an envelope of this run (the envelope tool validates it first). */
  writeEnvelope(envelope: DefectEnvelope): void;
  readEnvelopes(): DefectEnvelope[];
  /** Cross-run defect memory (fingerprints, occurrences, tickets). */
  memory: DefectMemoryPort;
  /** Writes an artifact of this run and answers its `artifact://<run>/<name>` URI. */
  putArtifact(name: string, content: string | Uint8Array): string;
  /** Services tools share within one run (HTTP sessions, a browser), keyed by their owner. */
  shared: Map<string, unknown>;
  signal: AbortSignal;
}

/** Counters the guardrails keep across one agent invocation (and the run, for the ticket cap). */
export interface GuardState {
  ticketsFiled: number;
  /** Distinct files written by this invocation → changed lines. */
  filesChanged: Map<string, number>;
  /** The failing test recorded on the envelope being fixed, relative to the target root. */
  immutableTest?: string;
}

export interface ToolContext extends RunContext {
  agent: AgentConfig;
  guard: GuardState;
  /**
   * The agent invocation this context serves (set by the runner): what a tool holds for the invocation (a
   * tab, a hold on the run's browser) is released when it ends (`onAgentEnd`).
   */
  invocation?: string;
  /**
   * A browser session of the agent's own (one bug-bash charter): the step tools then drive a tab in a
   * browser context of that session alone, so parallel charters never share a page or its cookies.
   */
  session?: string;
}

/** The part of defect memory tools use; `DefectMemory` (src/memory) implements it over SQLite. */
export interface DefectMemoryPort {
  record(entry: {
    fingerprint: string;
    runId: string;
    envelopeId: string;
    title: string;
    domain: string;
    defectClass: string;
    location: { kind: string; value: string };
  }): { firstSeen: boolean; occurrences: number };
  searchSimilar(query: {
    title: string;
    location?: { kind: string; value: string };
    domain?: string;
    limit?: number;
  }): Array<{ fingerprint: string; title: string; location: { kind: string; value: string }; score: number }>;
  occurrences(fingerprint: string): Array<{ runId: string; envelopeId: string; at: string }>;
}
