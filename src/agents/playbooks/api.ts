import type { PlaybookSession } from "../playbook.ts";
import { definePlaybook } from "../playbook.ts";

// API without a model: sign every profile user in, run the contract probes, and emit what they found.
// Each probe answers { candidates, stats } with evidence already written; the playbook only removes
// duplicates (same class, place and discriminator) and hands each draft to emit_envelope.

interface Candidate {
  defect_class: string;
  location: { kind: string; value: string };
  dedupe?: { discriminator?: string };
  title: string;
}

interface ProbeAnswer {
  candidates: Candidate[];
  stats: Record<string, unknown>;
}

const PROBES = ["check_contract", "fuzz_operation", "probe_semantics", "find_undocumented"];

export function candidateKey(candidate: Candidate): string {
  return [
    candidate.defect_class,
    candidate.location.kind,
    candidate.location.value.toLowerCase(),
    candidate.dedupe?.discriminator ?? "",
  ].join("\u0000");
}

/**
 * Runs probe tools concurrently (the HTTP layer caps concurrency and budget), then emits every distinct
 * candidate. A probe that fails is logged and the others still count.
 */
export async function runProbesAndEmit(
  session: PlaybookSession,
  tools: readonly string[],
  input: Record<string, unknown> = {},
): Promise<{ emitted: number; duplicates: number }> {
  const answers = await Promise.all(
    tools.map(async (tool) => {
      if (session.signal.aborted) return undefined;
      const result = await session.call<ProbeAnswer>(tool, input);
      if (!result.ok) {
        session.log(`${tool}: failed (${result.error})`);
        return undefined;
      }
      const stats = result.data.stats;
      session.log(
        `${tool}: ${result.data.candidates.length} candidates, ${String(stats.requests ?? 0)} requests`,
      );
      return result.data.candidates;
    }),
  );
  const seen = new Set<string>();
  let emitted = 0;
  let duplicates = 0;
  for (const candidate of answers.flatMap((candidates) => candidates ?? [])) {
    const key = candidateKey(candidate);
    if (seen.has(key)) {
      duplicates += 1;
      continue;
    }
    seen.add(key);
    const result = await session.call("emit_envelope", candidate);
    if (result.ok) emitted += 1;
    else session.log(`emit_envelope refused "${candidate.title}": ${result.error}`);
  }
  return { emitted, duplicates };
}

export default definePlaybook(async (session) => {
  const map = await session.call<{ operations?: unknown[] }>("get_system_map", {});
  if (!map.ok) {
    session.log(`no system map (${map.error}): nothing to probe`);
    return;
  }
  const signedIn = await session.call<{ sessions: Array<{ user: string }>; errors: Record<string, string> }>(
    "sign_in",
    {},
  );
  if (!signedIn.ok) session.log(`sign_in: ${signedIn.error}; probing anonymously`);
  else
    for (const [user, error] of Object.entries(signedIn.data.errors ?? {}))
      session.log(`sign_in ${user}: ${error}`);
  const { emitted, duplicates } = await runProbesAndEmit(session, PROBES);
  session.log(`emitted ${emitted} findings (${duplicates} duplicates dropped)`);
});
