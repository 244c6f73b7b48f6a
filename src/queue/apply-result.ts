import type { DefectEnvelope } from "../envelope/envelope.ts";
import type { RouterEvent } from "../router/run-state.ts";
import type { LedgerEntry, LedgerKind } from "../store/ledger-kinds.ts";
import { type InvocationResult, WORKER_RUN_FILES } from "./invocation-job.ts";

// The coordinator's half of a finished job: store the worker's envelopes and the run files it wrote, and
// append its ledger entries in the order it recorded them. Findings are idempotent by fingerprint: two
// workers that found the same defect at once (each with its own view of the run), or a try that repeats
// a killed one, store it once; the later copy is dropped with its entries and from the event, so nothing
// downstream reproduces it twice.

export interface ApplyTarget {
  readEnvelopes(): DefectEnvelope[];
  writeEnvelope(envelope: DefectEnvelope): void;
  record(kind: LedgerKind, data: Record<string, unknown>, agent?: string): LedgerEntry;
  /** Writes one of the run files a worker may hand back (WORKER_RUN_FILES) into the run's folder. */
  writeRunFile(name: string, content: string): void;
}

const ENTRY_KINDS_OF_A_FINDING = new Set<string>(["envelope_emitted", "envelope_held"]);

export function applyInvocationResult(result: InvocationResult, target: ApplyTarget): RouterEvent {
  const stored = target.readEnvelopes();
  const storedIds = new Set(stored.map((envelope) => envelope.id));
  const storedFingerprints = new Map(stored.map((envelope) => [envelope.dedupe.fingerprint, envelope.id]));
  const dropped = new Set<string>();
  for (const envelope of result.envelopes) {
    const holder = storedFingerprints.get(envelope.dedupe.fingerprint);
    if (holder !== undefined && holder !== envelope.id) {
      dropped.add(envelope.id);
      continue;
    }
    if (!storedIds.has(envelope.id) || holder === envelope.id) target.writeEnvelope(envelope);
    storedFingerprints.set(envelope.dedupe.fingerprint, envelope.id);
  }
  for (const file of result.files ?? []) {
    if (WORKER_RUN_FILES.includes(file.name)) target.writeRunFile(file.name, file.content);
  }
  for (const entry of result.entries) {
    if (ENTRY_KINDS_OF_A_FINDING.has(entry.kind) && dropped.has(String(entry.data.envelope_id))) continue;
    target.record(entry.kind, entry.data, entry.agent);
  }
  if (dropped.size === 0 || result.event.type !== "agent.done") return result.event;
  return {
    ...result.event,
    result: {
      ...result.event.result,
      findings: result.event.result.findings.filter((finding) => !dropped.has(finding.id)),
    },
  };
}
