import type { DefectEnvelope } from "../envelope/envelope.ts";
import type { LedgerEntry } from "../store/ledger-kinds.ts";
import type { RunContext } from "../tools/context.ts";
import type { RecordedEntry } from "./invocation-job.ts";

// A worker's view of a run: reads go to the shared store, but ledger entries and envelopes are kept
// here and handed back with the job's result. Only the run's coordinator writes them, in order, so a
// ledger has one writer, and a worker killed mid-invocation leaves nothing half-written behind: its
// retry records the invocation afresh.

export interface BufferedContext {
  context: RunContext;
  entries: RecordedEntry[];
  envelopes: DefectEnvelope[];
}

export function bufferRunContext(base: RunContext): BufferedContext {
  const entries: RecordedEntry[] = [];
  const envelopes: DefectEnvelope[] = [];
  const context: RunContext = {
    ...base,
    record(kind, data, agent) {
      entries.push(agent === undefined ? { kind, data } : { kind, data, agent });
      // Sequence numbers are the coordinator's to give; 0 marks an entry not yet in the ledger.
      const entry: LedgerEntry = { seq: 0, at: new Date().toISOString(), kind, data };
      if (agent !== undefined) entry.agent = agent;
      return entry;
    },
    writeEnvelope(envelope) {
      const index = envelopes.findIndex((held) => held.id === envelope.id);
      if (index >= 0) envelopes[index] = envelope;
      else envelopes.push(envelope);
    },
    readEnvelopes() {
      const own = new Set(envelopes.map((envelope) => envelope.id));
      return [...base.readEnvelopes().filter((envelope) => !own.has(envelope.id)), ...envelopes];
    },
  };
  return { context, entries, envelopes };
}
