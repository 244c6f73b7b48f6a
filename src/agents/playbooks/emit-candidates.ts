import type { EmitResult, EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { PlaybookSession } from "../playbook.ts";

// Shared by the DBA and LOAD playbooks: emit each probe candidate once (by class, place and
// discriminator), logging what was held or refused. Not a playbook itself (no agent is named after it).

export async function emitCandidates(
  session: PlaybookSession,
  tool: string,
  candidates: EnvelopeDraft[],
  seen: Set<string>,
): Promise<number> {
  let emitted = 0;
  for (const draft of candidates) {
    const key = `${draft.defect_class}|${draft.location.kind}:${draft.location.value}|${draft.dedupe?.discriminator ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const result = await session.call<EmitResult>("emit_envelope", draft);
    if (!result.ok) session.log(`${tool}: envelope "${draft.title}" refused: ${result.error}`);
    else {
      emitted += 1;
      session.log(
        `${tool}: emitted ${draft.defect_class} at ${draft.location.value}${result.data.held ? " (held)" : ""}`,
      );
    }
  }
  return emitted;
}
