import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { operationKey } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { clonePrepared } from "../api/request-builder.ts";
import { analyzeStatement } from "../code-access/sql-shape.ts";
import type { ReproScript } from "../evidence/failing-test.ts";
import { surfaceBudget } from "../http/run-http.ts";
import { buildQuery, fillPath } from "../http/target-url.ts";
import { baseStats, untilBudget } from "../session/probe-run.ts";
import { loadFinding } from "./load-findings.ts";
import type { LoadOutcome, LoadRun, Sample } from "./load-run.ts";
import {
  addItem,
  cleanUp,
  familyOfList,
  itemsPath,
  limitParameter,
  listOperations,
  openLoadRun,
  reach,
  sample,
  unreachedReason,
} from "./load-run.ts";

// probe_unbounded: a list that ignores the page size it documents (limit=1 answers more than one item),
// or that has none and answers every row (it grows by everything the probe adds and its SELECT has no
// LIMIT). Lists that cap themselves are left alone however they do it.

export interface UnboundedOptions {
  operation?: string;
  /** Items the probe may create to see whether a list without a page size grows (capped at 25). */
  create?: number;
  max_operations?: number;
  max_requests?: number;
}

/**
 * A list that answers every row is slow because of it, and the run's pacing leaves slow operations alone:
 * this probe's few reads, one at a time, go out unpaced (their answers still reach the pacing).
 */
const UNPACED = { paced: false };

/** The list's own SELECT in a window: the first one reading a table without an equality on one row. */
function listStatement(sampled: Sample | undefined): string | undefined {
  const queries = sampled?.window?.queries ?? [];
  return queries.find((query) => {
    const shape = analyzeStatement(query);
    return shape.verb === "select" && !shape.aggregateOnly && shape.tables.length > 0 && !shape.limitOne;
  });
}

export async function probeUnbounded(
  context: ToolContext,
  options: UnboundedOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const load = await openLoadRun(
    context,
    "probe_unbounded",
    options.max_requests ?? surfaceBudget(context, 900),
  );
  if (typeof load === "string") return load;
  const operations = listOperations(context, options.operation).slice(
    0,
    options.max_operations ?? surfaceBudget(context, 80),
  );
  const candidates: EnvelopeDraft[] = [];
  const results: Array<Record<string, unknown>> = [];
  try {
    await untilBudget(load.run, async () => {
      for (const operation of operations) {
        if (context.signal.aborted) break;
        const limit = limitParameter(operation);
        const outcome = limit
          ? await ignoredLimit(load, operation, limit, options.create ?? 25)
          : await growsWithoutLimit(load, operation, Math.min(Math.max(options.create ?? 25, 0), 25));
        results.push(outcome.summary);
        if (outcome.candidate) candidates.push(outcome.candidate);
      }
    });
  } finally {
    await cleanUp(load);
  }
  return { candidates, stats: { ...baseStats(load.run), operations: results } };
}

/**
 * Two counts of the same whole list. A long one (an activity feed, a log) may gain a few entries between
 * the reads while others use the application, so it may differ by 2 %; a short one must match exactly, or
 * a page size clamped to a minimum (10 of 11) would pass for the whole list.
 */
function sameSet(first: number, second: number): boolean {
  return first >= 50 ? Math.abs(second - first) <= Math.ceil(first * 0.02) : second === first;
}

/**
 * limit=1, limit=2 and no limit: a list that ignores its page size answers the same full set every time.
 * (A page size clamped to a minimum answers fewer than the full set, so it is not mistaken for one.)
 */
async function ignoredLimit(
  load: LoadRun,
  operation: Operation,
  limit: string,
  create: number,
): Promise<LoadOutcome> {
  const key = operationKey(operation);
  const reached = await reach(load, operation, { [limit]: "1" }, undefined, UNPACED);
  if (!reached) return { summary: { operation: key, skipped: unreachedReason(load, key) } };
  const at = (size: number | undefined) => {
    const prepared = clonePrepared(reached.prepared);
    if (size === undefined) delete prepared.query[limit];
    else prepared.query[limit] = String(size);
    return prepared;
  };
  let one = await sample(load, reached.user, at(1), UNPACED);
  if (one?.items !== undefined && one.items <= 1) {
    // One item proves nothing: make sure there are a few to page through.
    const family = familyOfList(load, operation);
    if (family && load.factory.canCreate(family) && create > 0) {
      for (let index = 0; index < 3; index += 1) if (!(await addItem(load, family, reached.user))) break;
      one = await sample(load, reached.user, at(1), UNPACED);
    }
  }
  const two = await sample(load, reached.user, at(2), UNPACED);
  const all = await sample(load, reached.user, at(undefined), UNPACED);
  const itemsOne = one?.items;
  const itemsTwo = two?.items;
  const itemsAll = all?.items;
  const summary = {
    operation: key,
    limit_parameter: limit,
    items_at_1: itemsOne ?? null,
    items_at_2: itemsTwo ?? null,
    items_without: itemsAll ?? null,
  };
  if (!one || !two || itemsOne === undefined || itemsTwo === undefined)
    return { summary: { ...summary, result: "not a list answer" } };
  const ignored =
    itemsOne > 1 && sameSet(itemsOne, itemsTwo) && (itemsAll === undefined || sameSet(itemsOne, itemsAll));
  if (!ignored) {
    const uncapped = itemsOne <= 1 ? await anySize(load, operation, limit, reached.user, at) : undefined;
    return uncapped ?? { summary: { ...summary, result: "the page size is honoured" } };
  }
  const path = itemsPath(one.exchange);
  const prepared = at(1);
  const repro: ReproScript | undefined =
    path === undefined
      ? undefined
      : {
          title: `${key} returns at most ${limit}=1 item`,
          steps: [
            {
              name: "page",
              as: reached.user,
              method: "GET",
              path: `${fillPath(operation.path, prepared.pathValues)}${buildQuery(prepared.query)}`,
            },
          ],
          assertions: [
            {
              kind: "json_lacks",
              step: "page",
              path: path ? `${path}.1` : "1",
              message: `${limit}=1 must return at most one item`,
            },
          ],
        };
  const statement = listStatement(one);
  const candidate = loadFinding(load, {
    defectClass: "unbounded-result",
    operation,
    title: `${key} ignores its ${limit} parameter and returns every item`,
    summary: `${key} documents \`${limit}\`, but ${limit}=1 answered ${itemsOne} items and ${limit}=2 answered ${itemsTwo}.${statement ? ` Its query: \`${statement}\`.` : ""} Every call returns the whole collection, which grows without bound. Fix: apply ${limit} (with a default and a maximum) in the query.`,
    impact: `Responses and queries grow with the table; one call can return every row, a cheap way to load the server.`,
    severity: operation.security === "public" ? "high" : "medium",
    confidence: 0.9,
    discriminator: limit,
    exchanges: [
      { label: `${limit}-1`, exchange: one.exchange },
      { label: `${limit}-2`, exchange: two.exchange },
    ],
    measurements: {
      operation: key,
      limit_parameter: limit,
      items_at_1: itemsOne,
      items_at_2: itemsTwo,
      list_statement: statement ?? null,
    },
    ...(repro ? { repro } : {}),
  });
  return { summary: { ...summary, result: "unbounded-result" }, candidate };
}

/** Page sizes far past any page a client needs; two, so a random answer cannot pass for a consistent one. */
const HUGE_PAGES = [5000, 10000];
/** More items than this in one answer is past any usual maximum page size. */
const USUAL_MAXIMUM = 100;

/**
 * A page size that is applied but never capped (OWASP API4): asked for thousands, the list answers more
 * than any usual page (and more than the maximum its document declares), the same count both times.
 */
async function anySize(
  load: LoadRun,
  operation: Operation,
  limit: string,
  user: string | undefined,
  at: (size: number | undefined) => PreparedRequest,
): Promise<LoadOutcome | undefined> {
  const key = operationKey(operation);
  const declared = operation.parameters.find((parameter) => parameter.name === limit)?.schema?.maximum;
  const ceiling = Math.max(USUAL_MAXIMUM, typeof declared === "number" ? declared : 0);
  const [first, second] = [
    await sample(load, user, at(HUGE_PAGES[0]), UNPACED),
    await sample(load, user, at(HUGE_PAGES[1]), UNPACED),
  ];
  const counts = [first?.items, second?.items];
  if (!first || !second || counts[0] === undefined || counts[0] <= ceiling || counts[1] !== counts[0])
    return undefined;
  const items = counts[0];
  const statement = listStatement(first);
  const summary = { operation: key, limit_parameter: limit, items_at_huge_page: items, ceiling };
  const candidate = loadFinding(load, {
    defectClass: "unbounded-result",
    operation,
    title: `${key} applies any ${limit} it is asked for: ${limit}=${HUGE_PAGES[0]} returned ${items} items`,
    summary: `${key} honours small values of \`${limit}\` but has no maximum: ${limit}=${HUGE_PAGES[0]} and ${limit}=${HUGE_PAGES[1]} both answered ${items} items, more than ${typeof declared === "number" ? `the documented maximum of ${declared}` : `any usual page (${USUAL_MAXIMUM})`}.${statement ? ` Its query: \`${statement}\`.` : ""} Fix: clamp ${limit} to a maximum in the handler.`,
    impact: "One call can still return every row: a cheap way to load the server and the database.",
    severity: operation.security === "public" ? "high" : "medium",
    confidence: 0.8,
    discriminator: `${limit}-uncapped`,
    exchanges: [
      { label: `${limit}-${HUGE_PAGES[0]}`, exchange: first.exchange },
      { label: `${limit}-${HUGE_PAGES[1]}`, exchange: second.exchange },
    ],
    measurements: { ...summary, list_statement: statement ?? null },
  });
  return { summary: { ...summary, result: "unbounded-result (no maximum)" }, candidate };
}

/** No page size documented: add items and see whether all come back, and whether the SELECT has a LIMIT. */
async function growsWithoutLimit(load: LoadRun, operation: Operation, create: number): Promise<LoadOutcome> {
  const key = operationKey(operation);
  const reached = await reach(load, operation, {}, undefined, UNPACED);
  if (!reached) return { summary: { operation: key, skipped: unreachedReason(load, key) } };
  const before = await sample(load, reached.user, clonePrepared(reached.prepared), UNPACED);
  if (before?.items === undefined) return { summary: { operation: key, result: "not a list answer" } };
  const statementBefore = listStatement(before);
  if (statementBefore && analyzeStatement(statementBefore).hasLimit) {
    return {
      summary: { operation: key, result: "its query carries a LIMIT", list_statement: statementBefore },
    };
  }
  const family = familyOfList(load, operation);
  if (!family || !load.factory.canCreate(family) || create === 0) {
    return {
      summary: {
        operation: key,
        items: before.items,
        result: "no page size, but nothing may be created to see it grow",
      },
    };
  }
  let created = 0;
  for (let index = 0; index < create; index += 1) {
    if (!(await addItem(load, family, reached.user))) break;
    created += 1;
  }
  const after = await sample(load, reached.user, clonePrepared(reached.prepared), UNPACED);
  const summary = { operation: key, items_before: before.items, created, items_after: after?.items ?? null };
  if (!after || after.items === undefined || created < 5)
    return { summary: { ...summary, result: "could not add enough items" } };
  const statement = listStatement(after) ?? statementBefore;
  const grewByAll = after.items >= before.items + created;
  // Without a log the query cannot be seen: only a list far past any usual page size counts.
  const unbounded = grewByAll && (statement ? !analyzeStatement(statement).hasLimit : after.items > 100);
  if (!unbounded)
    return { summary: { ...summary, result: grewByAll ? "grew, but a cap cannot be ruled out" : "capped" } };
  const candidate = loadFinding(load, {
    defectClass: "unbounded-result",
    operation,
    title: `${key} has no page size: it returns every row`,
    summary: `${key} takes no limit or page-size parameter. It answered ${before.items} items; after the probe added ${created}, it answered ${after.items}: all of them.${statement ? ` Its query has no LIMIT: \`${statement}\`.` : ""} The response grows with the table. Fix: a page size with a default and a maximum.`,
    impact: `Responses and queries grow with the table; one call can return every row, a cheap way to load the server.`,
    severity: operation.security === "public" ? "high" : "medium",
    confidence: statement ? 0.85 : 0.75,
    exchanges: [
      { label: "before", exchange: before.exchange },
      { label: `after-creating-${created}`, exchange: after.exchange },
    ],
    measurements: {
      operation: key,
      items_before: before.items,
      created,
      items_after: after.items,
      list_statement: statement ?? null,
    },
  });
  return { summary: { ...summary, result: "unbounded-result" }, candidate };
}
