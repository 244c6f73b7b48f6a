import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { BudgetExhaustedError } from "../http/http-client.ts";
import type { GuideOutcome } from "./check-navigation.ts";
import { tryDeletion } from "./deletion-trial.ts";
import { guideFinding } from "./guide-finding.ts";
import { type GuideScope, userOf } from "./guide-scope.ts";
import { lengthPromises, tryLength } from "./limit-copy.ts";
import { closingStats, type GuideLimits, openGuideScope } from "./open-scope.ts";
import { templateOf } from "./path-templates.ts";
import { type RecoveryPromise, recoveryFeature, recoveryPromises } from "./recovery-copy.ts";
import { servedPage } from "./served-page.ts";

// check_copy: help text that promises behaviour the application does not have. Recovery promises first:
// copy saying deleted things can be restored (or go to a trash, for N days) is misleading when two
// independent signals agree: nothing in the map or the walked UI restores anything, and a record the probe
// creates and deletes itself is really gone (read 404/410, absent from its list). Without writes the
// second signal cannot be had, and nothing is flagged. Then documented length limits ("up to 120
// characters"), tried with records of the probe's own (see limit-copy.ts).

export async function checkCopy(
  context: ToolContext,
  input: GuideLimits = {},
): Promise<GuideOutcome | string> {
  const opened = await openGuideScope(context, "check_copy", input);
  if (typeof opened === "string") return opened;
  const { scope, budget, stats } = opened;
  const candidates: EnvelopeDraft[] = [];
  for (const [name, check] of [
    ["recovery", checkRecoveryPromises],
    ["lengths", checkLengthPromises],
  ] as const) {
    const outcome: Record<string, unknown> = {};
    stats[name] = outcome;
    try {
      candidates.push(...(await check(scope, outcome)));
    } catch (error) {
      outcome.error = error instanceof BudgetExhaustedError ? "the request budget is spent" : String(error);
    }
  }
  return { candidates, stats: { ...stats, ...closingStats(scope, budget) } };
}

async function checkRecoveryPromises(
  scope: GuideScope,
  outcome: Record<string, unknown>,
): Promise<EnvelopeDraft[]> {
  const promises = recoveryPromises(scope.graph);
  outcome.promises = promises.map((each) => `${each.page}: ${each.sentence}`);
  if (promises.length === 0) return [];
  const feature = recoveryFeature(scope.run.map, scope.graph);
  if (feature) {
    outcome.verdict = `not flagged: the application has a way back (${feature})`;
    return [];
  }
  const promise = promises[0] as RecoveryPromise;
  const trial = await tryDeletion(scope.run, promise.sentence);
  if (typeof trial === "string") outcome.verdict = `not flagged: ${trial}`;
  else if (!trial.gone) outcome.verdict = `not flagged: the deleted record is not gone (${trial.detail})`;
  else {
    const draft = await misleadingRecovery(scope, promises, trial);
    outcome.verdict = typeof draft === "string" ? `not flagged: ${draft}` : "flagged";
    if (typeof draft !== "string") return [draft];
  }
  return [];
}

const MAX_LENGTH_PROMISES = 3;

async function checkLengthPromises(
  scope: GuideScope,
  outcome: Record<string, unknown>,
): Promise<EnvelopeDraft[]> {
  const promises = lengthPromises(scope.graph).slice(0, MAX_LENGTH_PROMISES);
  const verdicts: string[] = [];
  outcome.verdicts = verdicts;
  const drafts: EnvelopeDraft[] = [];
  for (const promise of promises) {
    const trial = await tryLength(scope.run, promise);
    if (typeof trial === "string") {
      verdicts.push(`${promise.page}: "${promise.sentence}": not flagged: ${trial}`);
      continue;
    }
    const help = await servedPage(
      scope.run,
      userOf(scope, promise.role),
      new URL(promise.page, scope.graph.origin).href,
    );
    if (!help?.ok) {
      verdicts.push(`${promise.page}: the help page no longer answers`);
      continue;
    }
    verdicts.push(`${promise.page}: "${promise.sentence}": flagged (${trial.detail})`);
    const template = templateOf(
      promise.page,
      scope.run.map.operations.map((operation) => operation.path),
    );
    drafts.push(
      guideFinding(scope.run, {
        defectClass: "misleading-copy",
        template,
        discriminator: `length-${trial.field}`,
        title: `Help at ${template} promises ${promise.limit}-character ${trial.field}s; the API refuses them`,
        summary: `The help page ${promise.page} says: "${promise.sentence}". Creating a record in ${trial.family} with a ${trial.field} of exactly ${promise.limit} characters is refused, while the same request with a short ${trial.field} is accepted: ${trial.detail}. The records the probe created were deleted again where the API allows it.`,
        impact: "People who follow the documented limit get an error the copy told them would not happen.",
        severity: "low",
        confidence: 0.7,
        exchanges: [{ label: "help-page", exchange: help.exchange }, ...trial.exchanges],
        facts: {
          help_page: promise.page,
          quoted: promise.sentence,
          limit: promise.limit,
          trial: { family: trial.family, field: trial.field, detail: trial.detail },
        },
        steps: [
          `Open ${promise.page}: it says "${promise.sentence}".`,
          `Create a record in ${trial.family} with a ${trial.field} of ${promise.limit} characters: refused.`,
          `Create one with a short ${trial.field}: accepted.`,
        ],
      }),
    );
  }
  return drafts;
}

async function misleadingRecovery(
  scope: GuideScope,
  promises: RecoveryPromise[],
  trial: Exclude<Awaited<ReturnType<typeof tryDeletion>>, string>,
): Promise<EnvelopeDraft | string> {
  const promise = promises[0] as RecoveryPromise;
  const help = await servedPage(
    scope.run,
    userOf(scope, promise.role),
    new URL(promise.page, scope.graph.origin).href,
  );
  if (!help?.ok) return `the help page no longer answers (${help?.reason ?? "not sent"})`;
  const templates = scope.run.map.operations.map((operation) => operation.path);
  const template = templateOf(promise.page, templates);
  const sentences = promises.filter((each) => each.page === promise.page).map((each) => each.sentence);
  return guideFinding(scope.run, {
    defectClass: "misleading-copy",
    template,
    discriminator: "recovery-promise",
    title: `Help at ${template} promises deleted items can be recovered; the application has no way back`,
    summary: `The help page ${promise.page} says: "${promise.sentence}". Nothing in the application restores anything: no operation, route or page about restoring, undoing, a trash or deleted items is in the system map, and none is linked from the ${scope.graph.roles.reduce((sum, walk) => sum + walk.pages.length, 0)} page(s) reachable from the UI entry. A record the probe created itself in ${trial.family} and then deleted is gone (${trial.detail}).`,
    impact:
      "People delete things trusting they can get them back; they cannot, and lose data the copy told them was safe.",
    severity: "medium",
    confidence: 0.7,
    exchanges: [{ label: "help-page", exchange: help.exchange }, ...trial.exchanges],
    facts: {
      help_page: promise.page,
      quoted: sentences,
      ...(promise.days ? { days_promised: promise.days } : {}),
      recovery_feature_searched: {
        operations: scope.run.map.operations.length,
        routes: scope.run.map.routes.length,
        pages_walked: scope.graph.roles.map((walk) => ({
          role: walk.role,
          pages: walk.pages.map((page) => page.path),
        })),
        found: null,
      },
      deletion_trial: { family: trial.family, user: trial.user ?? "anonymous", detail: trial.detail },
    },
    steps: [
      `Open ${promise.page} as ${promise.role}: it says "${promise.sentence}".`,
      `Create a record in ${trial.family}, delete it, then read it again: ${trial.detail}.`,
      "Look for a restore, undo, trash or deleted-items page or operation: there is none.",
    ],
  });
}
