import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { definePlaybook } from "../playbook.ts";
import { emitCandidates } from "./emit-candidates.ts";

// DBA without a model: read the schema and how the users' passwords are stored, then the code's data
// access; confirm every assumption the schema does not enforce (through the application where it takes
// writes, else on a scratch copy), race the uniqueness checks the application makes by itself, and emit
// what was confirmed. Nothing unconfirmed is emitted.

interface ProbeAnswer {
  candidates: EnvelopeDraft[];
  stats: Record<string, unknown>;
}

interface Outcome {
  id: string;
  result: string;
}

export default definePlaybook(async (session) => {
  const map = await session.call("get_system_map", {});
  if (!map.ok) session.log(`no system map (${map.error}): trials through the application are not possible`);
  // Transitions, derived fields and versions are tried through the API alone: no schema needed.
  const stateSeen = new Set<string>();
  if (map.ok && !session.signal.aborted) {
    const states = await session.call<ProbeAnswer>("probe_state_integrity", {});
    if (!states.ok) session.log(`probe_state_integrity failed: ${states.error}`);
    else {
      await emitCandidates(session, "probe_state_integrity", states.data.candidates, stateSeen);
      const outcomes = (states.data.stats.outcomes ?? []) as Array<{ target: string; result: string }>;
      for (const outcome of outcomes)
        session.log(`probe_state_integrity: ${outcome.target} → ${outcome.result}`);
    }
  }
  const schema = await session.call<{ tables: unknown[]; source: string }>("db_schema", {});
  if (!schema.ok) {
    session.log(`schema not read: ${schema.error}; nothing to compare the code with`);
    return;
  }
  session.log(`schema: ${schema.data.tables.length} tables (from the ${schema.data.source})`);
  const seen = new Set<string>();
  let emitted = 0;
  const credentials = await session.call<ProbeAnswer>("check_credential_storage", {});
  if (!credentials.ok) session.log(`check_credential_storage failed: ${credentials.error}`);
  else {
    emitted += await emitCandidates(session, "check_credential_storage", credentials.data.candidates, seen);
    if (credentials.data.stats.skipped)
      session.log(`check_credential_storage: skipped (${String(credentials.data.stats.skipped)})`);
  }
  const inferred = await session.call<{
    counts: Record<string, number>;
    assumptions: Array<{ id: string; kind: string; checked_in_code?: boolean }>;
  }>("infer_data_assumptions", {});
  if (!inferred.ok) {
    session.log(`assumptions not inferred: ${inferred.error}`);
    return;
  }
  session.log(
    `assumptions: ${inferred.data.counts.total} (${inferred.data.counts.unenforced} not enforced by the schema)`,
  );
  const rejectedByApplication: string[] = [];
  if ((inferred.data.counts.unenforced ?? 0) > 0 && !session.signal.aborted) {
    const confirmed = await session.call<ProbeAnswer>("confirm_constraint", {});
    if (!confirmed.ok) session.log(`confirm_constraint failed: ${confirmed.error}`);
    else {
      emitted += await emitCandidates(session, "confirm_constraint", confirmed.data.candidates, seen);
      const outcomes = (confirmed.data.stats.outcomes ?? []) as Outcome[];
      for (const outcome of outcomes) {
        session.log(`confirm_constraint: ${outcome.id} → ${outcome.result}`);
        if (outcome.result === "rejected-by-application" && outcome.id.startsWith("unique:"))
          rejectedByApplication.push(outcome.id);
      }
    }
  }
  if (!session.signal.aborted && map.ok) {
    const checkedInCode = inferred.data.assumptions
      .filter((assumption) => assumption.checked_in_code)
      .map((assumption) => assumption.id);
    const races = await session.call<ProbeAnswer>("probe_race", {});
    if (!races.ok) session.log(`probe_race failed: ${races.error}`);
    else {
      emitted += await emitCandidates(session, "probe_race", races.data.candidates, seen);
      const outcomes = (races.data.stats.outcomes ?? []) as Array<{ target: string; result: string }>;
      for (const outcome of outcomes) session.log(`probe_race: ${outcome.target} → ${outcome.result}`);
      const notes = (races.data.stats.notes ?? []) as string[];
      if (notes.length > 0) session.log(`probe_race notes: ${notes.join("; ")}`);
    }
    const extra = rejectedByApplication.filter((id) => !checkedInCode.includes(id));
    if (extra.length > 0 && !session.signal.aborted) {
      const more = await session.call<ProbeAnswer>("probe_race", { assumptions: extra });
      if (more.ok) emitted += await emitCandidates(session, "probe_race", more.data.candidates, seen);
    }
  }
  session.log(`DBA done: ${emitted} finding(s) emitted`);
});
