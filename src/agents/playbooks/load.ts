import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { definePlaybook } from "../playbook.ts";
import { emitCandidates } from "./emit-candidates.ts";

// LOAD without a model: time the read operations first (before any probe adds data), look for patterns
// that backtrack on what fields accept, then measure how
// statements grow with the items a list returns, look for lists without a working page size, explain
// the queries each operation runs, and time the writes seen slow. Every candidate the tools confirmed is
// emitted.

interface ProbeAnswer {
  candidates: EnvelopeDraft[];
  stats: Record<string, unknown>;
}

// Writes are timed last: only those the other agents' probes have by then seen answer slowly.
const STEPS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["time_endpoints", {}],
  ["probe_redos", {}],
  ["measure_query_growth", {}],
  ["probe_unbounded", {}],
  ["find_unindexed", {}],
  ["time_endpoints", { writes: true }],
];

export default definePlaybook(async (session) => {
  const map = await session.call("get_system_map", {});
  if (!map.ok) {
    session.log(`no system map (${map.error}): LOAD measures operations and has none to measure`);
    return;
  }
  const seen = new Set<string>();
  let emitted = 0;
  for (const [tool, input] of STEPS) {
    if (session.signal.aborted) break;
    const answer = await session.call<ProbeAnswer>(tool, input);
    if (!answer.ok) {
      session.log(`${tool}: ${answer.error}`);
      continue;
    }
    const stats = answer.data.stats;
    session.log(
      `${tool}: ${answer.data.candidates.length} candidate(s), ${String(stats.requests ?? 0)} request(s)${stats.skipped ? ` (${String(stats.skipped)})` : ""}`,
    );
    emitted += await emitCandidates(session, tool, answer.data.candidates, seen);
  }
  session.log(`LOAD done: ${emitted} finding(s) emitted`);
});
