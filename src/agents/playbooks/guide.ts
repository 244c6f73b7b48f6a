import type { PlaybookSession } from "../playbook.ts";
import { definePlaybook } from "../playbook.ts";

// GUIDE without a model: run each deterministic usability check once over every role and emit every
// candidate. The checks confirm before they answer (two independent signals for an undiscoverable page, a
// second page or a fresh load for a dead end); the playbook adds no judgement of its own.

const CHECKS = ["check_navigation", "check_copy"] as const;

interface CheckAnswer {
  candidates: unknown[];
  stats?: Record<string, unknown>;
}

export default definePlaybook(async (session: PlaybookSession) => {
  let emitted = 0;
  for (const check of CHECKS) {
    if (session.signal.aborted) return;
    const answer = await session.call<CheckAnswer>(check, {});
    if (!answer.ok) {
      session.log(`${check} did not run: ${answer.error}`);
      continue;
    }
    const stats = answer.data.stats ?? {};
    session.log(
      `${check}: ${answer.data.candidates.length} candidate(s); walked ${JSON.stringify(stats.roles ?? [])}${stats.rendered === false ? ` without a browser (${String(stats.browser_error ?? "unavailable")})` : ""}`,
    );
    for (const draft of answer.data.candidates) {
      const result = await session.call("emit_envelope", draft);
      if (result.ok) emitted += 1;
      else session.log(`${check}: a candidate was refused: ${result.error}`);
    }
  }
  session.log(`${emitted} finding(s) emitted`);
});
