import type { EmitResult, EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { PlaybookSession } from "../playbook.ts";

// BROWSER's builtin work in a bug bash (not a playbook of its own: no agent is named after it). List the
// charters, walk them in parallel sessions (never more at once than the mode allows), merge what they
// found, and emit each candidate that has a repro test; REPRODUCER then confirms or rejects every one.

interface Listed {
  charters: Array<{ id: string; persona: string; text: string; origin: string }>;
  parallel: number;
  steps: number;
  minutes: number;
}

interface Merged {
  candidates: Array<{ id: string; status: string; reason?: string; note?: string; draft?: EnvelopeDraft }>;
}

export async function bugBash(session: PlaybookSession): Promise<void> {
  const listed = await session.call<Listed>("list_charters", {});
  if (!listed.ok) {
    session.log(`no charters: ${listed.error}`);
    return;
  }
  const { charters, parallel, steps, minutes } = listed.data;
  session.log(`bug bash of ${charters.length} charter(s), ${parallel} at once`);
  const queue = [...charters];
  const walk = async () => {
    for (let charter = queue.shift(); charter && !session.signal.aborted; charter = queue.shift()) {
      const walked = await session.call<{ verdict: string; ended: string; findings: unknown[] }>(
        "walk_charter",
        { id: charter.id, persona: charter.persona, charter: charter.text, steps, minutes },
      );
      session.log(
        walked.ok
          ? `${charter.id} as ${charter.persona}: ${walked.data.verdict} (${walked.data.ended}), ${walked.data.findings.length} finding(s)`
          : `${charter.id} did not run: ${walked.error}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, charters.length)) }, walk));
  const merged = await session.call<Merged>("merge_candidates", {});
  if (!merged.ok) {
    session.log(`nothing to merge: ${merged.error}`);
    return;
  }
  for (const candidate of merged.data.candidates) {
    if (!candidate.draft) {
      session.log(`${candidate.id} rejected (${candidate.reason}): ${candidate.note ?? ""}`);
      continue;
    }
    const emitted = await session.call<EmitResult>("emit_envelope", candidate.draft);
    session.log(
      emitted.ok
        ? `${candidate.id} emitted as ${emitted.data.envelope_id}, to be proven by its repro test`
        : `${candidate.id} refused: ${emitted.error}`,
    );
  }
}
