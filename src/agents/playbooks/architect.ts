import type { PlaybookSession } from "../playbook.ts";
import { definePlaybook } from "../playbook.ts";

// ARCHITECT without a model: build the import graph once, run the four structural checks over it, and emit
// every candidate they answer. The checks already quote the offending import lines from the source and
// hold (confidence below the filing threshold) what they cannot stand behind; the playbook adds no
// judgement of its own and never reads a file the tools did not.

const CHECKS = ["find_cycles", "check_layering", "find_god_modules", "find_dead_code"] as const;

interface ProbeAnswer {
  candidates: unknown[];
  stats?: Record<string, unknown>;
}

export default definePlaybook(async (session: PlaybookSession) => {
  // The map is read for parity with a model seat (owners, declared layers live in the profile); the checks
  // need only the source, so a missing map is no reason to stop.
  const map = await session.call("get_system_map", { section: "ownership" });
  if (!map.ok) session.log(`no system map (${map.error}); checking the source alone`);

  const graph = await session.call<{ stats: Record<string, unknown> }>("import_graph", { max_modules: 0 });
  if (!graph.ok) {
    session.log(`no import graph: ${graph.error}`);
    return;
  }
  session.log(`import graph ${JSON.stringify(graph.data.stats)}`);

  for (const check of CHECKS) {
    if (session.signal.aborted) return;
    const answer = await session.call<ProbeAnswer>(check, {});
    if (!answer.ok) {
      session.log(`${check} failed: ${answer.error}`);
      continue;
    }
    session.log(
      `${check}: ${answer.data.candidates.length} candidate(s) ${JSON.stringify(answer.data.stats ?? {})}`,
    );
    for (const draft of answer.data.candidates) {
      const emitted = await session.call("emit_envelope", draft);
      if (!emitted.ok) session.log(`${check}: a candidate was refused: ${emitted.error}`);
    }
  }
});
