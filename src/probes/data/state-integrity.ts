import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { operationKey } from "../api/operation-index.ts";
import { candidateUsers } from "../api/probe-support.ts";
import { baseStats, openProbeRun, untilBudget, usableUsers } from "../session/probe-run.ts";
import { trialDerived } from "./derived-trial.ts";
import { idempotencyHeader, trialIdempotency } from "./idempotency-trial.ts";
import { RecordCreator } from "./record-creator.ts";
import { summaryReads } from "./state-reads.ts";
import { transitionOperations, trialTransition } from "./transition-trial.ts";
import { trialLostUpdate } from "./version-trial.ts";

// probe_state_integrity: what a record's own operations do to the numbers they keep, found through the API
// alone (no schema or database needed): one-shot transitions repeated or sent at once, creations that
// make two records for one idempotency key, derived fields left stale by an update of their parts, and
// updates that ignore the version the client read. Every trial acts
// on records the probe created itself (deleted afterwards) and reports only what a read-back confirms.

export interface StateIntegrityOptions {
  /** Only operations whose `METHOD /path` contains this text. */
  filter?: string;
  max_requests?: number;
}

export async function probeStateIntegrity(
  context: ToolContext,
  options: StateIntegrityOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const run = openProbeRun(context, "probe_state_integrity", { max_requests: options.max_requests ?? 1200 });
  if (typeof run === "string") return run;
  if (!run.target.writesAllowed) {
    return {
      candidates: [],
      stats: { ...baseStats(run), skipped: "the target does not allow writes: no records created" },
    };
  }
  const creator = new RecordCreator(run);
  const users = candidateUsers(await usableUsers(run));
  const candidates: EnvelopeDraft[] = [];
  const outcomes: Array<{ target: string; result: string }> = [];
  let summaries: Operation[] | undefined;
  const wanted = (key: string) => !options.filter || key.includes(options.filter);
  const record = (target: string, result: EnvelopeDraft | string) => {
    outcomes.push({ target, result: typeof result === "string" ? result : "confirmed" });
    if (typeof result !== "string") candidates.push(result);
  };
  try {
    await untilBudget(run, async () => {
      for (const family of creator.families) {
        const create = family.create;
        if (create && idempotencyHeader(create) && creator.creatable(family) && wanted(operationKey(create)))
          record(`idempotency ${operationKey(create)}`, await trialIdempotency(run, creator, family, users));
        if (!family.item || !family.read) continue;
        const createFamily = creator.creationFamilyOf(family);
        if (!createFamily) continue;
        for (const operation of transitionOperations(family)) {
          const key = operationKey(operation);
          if (!wanted(key)) continue;
          summaries ??= await summaryReads(run, users[0]);
          record(
            `transition ${key}`,
            await trialTransition(run, creator, createFamily, operation, users, summaries),
          );
        }
        for (const update of family.updates) {
          const key = operationKey(update);
          if (!wanted(key)) continue;
          record(`derived ${key}`, await trialDerived(run, creator, createFamily, update, users));
          record(`version ${key}`, await trialLostUpdate(run, creator, createFamily, update, users));
        }
      }
    });
  } finally {
    await creator.cleanUp();
  }
  return { candidates, stats: { ...baseStats(run), outcomes } };
}
