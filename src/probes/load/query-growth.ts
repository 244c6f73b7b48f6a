import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { operationKey } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { clonePrepared } from "../api/request-builder.ts";
import { analyzeStatement } from "../code-access/sql-shape.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { surfaceBudget } from "../http/run-http.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { baseStats, untilBudget } from "../session/probe-run.ts";
import { loadFinding } from "./load-findings.ts";
import type { LoadRun, Sample } from "./load-run.ts";
import {
  addItem,
  cleanUp,
  familyOfList,
  limitParameter,
  listOperations,
  openLoadRun,
  quietestSample,
  reach,
  unreachedReason,
} from "./load-run.ts";

// measure_query_growth: statements per request of each list operation at two sizes — a small and a large
// page where the list documents a page size, else before and after the probe creates items (its own,
// removed afterwards) in the list's collection and, for lists built from other collections (reports,
// dashboards), in the other collections it can create. When the count grows with the items returned
// (Δqueries ≥ 0.8 × Δitems, at least 3 more items), one statement shape runs once per item: an N+1.

export interface GrowthOptions {
  operation?: string;
  small?: number;
  large?: number;
  /** Items the probe may create per collection to reach the larger size (capped at 25). */
  create?: number;
  samples?: number;
  max_operations?: number;
  max_requests?: number;
}

interface Point {
  label: string;
  /** The page size asked for, when the list has one. */
  size?: number;
  items: number;
  queries: number;
  shapes: Record<string, number>;
  sample: Sample;
}

interface Measured {
  operation: Operation;
  user: string | undefined;
  limit: string | undefined;
  /** A nested list measured under a parent of the probe's own: its items are created under that parent. */
  nested?: { family: ResourceFamily; parentValues: Record<string, string> };
  at: (size: number | undefined) => PreparedRequest;
  first: Point;
  second?: Point;
  summary: Record<string, unknown>;
}

const MIN_ITEM_GROWTH = 3;
const MAX_FAMILIES_GROWN = 4;

function pointOf(label: string, sample: Sample | undefined, size?: number): Point | undefined {
  if (!sample?.window || sample.items === undefined) return undefined;
  return {
    label,
    ...(size !== undefined ? { size } : {}),
    items: sample.items,
    queries: sample.window.queries.length,
    shapes: Object.fromEntries(sample.window.shapes),
    sample,
  };
}

/** The shape whose count grew the most between the two points (the statement run per item). */
function repeatedShape(
  small: Point,
  large: Point,
): { shape: string; small: number; large: number } | undefined {
  let best: { shape: string; small: number; large: number } | undefined;
  for (const [shape, count] of Object.entries(large.shapes)) {
    const before = small.shapes[shape] ?? 0;
    if (!best || count - before > best.large - best.small) best = { shape, small: before, large: count };
  }
  return best;
}

export async function measureQueryGrowth(
  context: ToolContext,
  options: GrowthOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const load = await openLoadRun(
    context,
    "measure_query_growth",
    options.max_requests ?? surfaceBudget(context, 1200),
  );
  if (typeof load === "string") return load;
  if (!load.log)
    return {
      candidates: [],
      stats: {
        ...baseStats(load.run),
        skipped: "no statement log: statements per request cannot be counted",
      },
    };
  const samples = Math.min(Math.max(options.samples ?? 3, 1), 5);
  const small = Math.max(options.small ?? 2, 1);
  const large = Math.max(options.large ?? 20, small + MIN_ITEM_GROWTH);
  const perFamily = Math.min(Math.max(options.create ?? 10, 0), 25);
  const operations = listOperations(context, options.operation).slice(
    0,
    options.max_operations ?? surfaceBudget(context, 60),
  );
  const candidates: EnvelopeDraft[] = [];
  const summaries: Array<Record<string, unknown>> = [];
  const grown: string[] = [];
  try {
    await untilBudget(load.run, async () => {
      // 1. Baseline (and the large page, where there is one).
      const pending: Measured[] = [];
      for (const operation of operations) {
        if (context.signal.aborted) return;
        const measured = await baseline(load, operation, small, large, samples);
        if ("skipped" in measured) {
          summaries.push(measured);
          continue;
        }
        if (measured.second && measured.second.items - measured.first.items >= MIN_ITEM_GROWTH) {
          await settle(load, measured, samples);
          decide(load, measured, samples, candidates, summaries);
        } else pending.push(measured);
      }
      if (pending.length === 0 || perFamily === 0) {
        for (const measured of pending)
          summaries.push({ ...measured.summary, result: "one size only: growth not measured" });
        return;
      }
      // 2. Grow the data: nested lists under their own parent, then the lists' own collections, then
      // other collections they may be built from.
      for (const measured of pending) {
        if (!measured.nested) continue;
        let created = 0;
        for (let index = 0; index < perFamily; index += 1) {
          const attempt = await load.creator.create(measured.nested.family, measured.user, {
            parentValues: measured.nested.parentValues,
          });
          if (!attempt.record) break;
          created += 1;
        }
        if (created > 0) grown.push(`${measured.nested.family.collection} +${created} under one parent`);
      }
      for (const family of familiesToGrow(load, pending)) {
        const owner =
          pending.find((measured) => familyOfList(load, measured.operation) === family)?.user ??
          pending[0]!.user;
        let created = 0;
        for (let index = 0; index < perFamily; index += 1) {
          if (!(await addItem(load, family, owner))) break;
          created += 1;
        }
        if (created > 0) grown.push(`${family.collection} +${created}`);
      }
      // 3. Measure again and compare with the baseline.
      for (const measured of pending) {
        if (context.signal.aborted) return;
        const after = pointOf(
          `after creating (${grown.join(", ") || "nothing"})`,
          await quietestSample(load, measured.user, measured.at(measured.limit ? large : undefined), samples),
          measured.limit ? large : undefined,
        );
        if (after) measured.second = after;
        await settle(load, measured, samples);
        decide(load, measured, samples, candidates, summaries);
      }
    });
  } finally {
    await cleanUp(load);
  }
  return { candidates, stats: { ...baseStats(load.run), grown, operations: summaries } };
}

async function baseline(
  load: LoadRun,
  operation: Operation,
  small: number,
  large: number,
  samples: number,
): Promise<Measured | { operation: string; skipped: string }> {
  const key = operationKey(operation);
  const limit = limitParameter(operation);
  const own = await ownParent(load, operation);
  const reached = await reach(load, operation, limit ? { [limit]: String(small) } : {}, own);
  if (!reached) return { operation: key, skipped: unreachedReason(load, key) };
  const at = (size: number | undefined): PreparedRequest => {
    const prepared = clonePrepared(reached.prepared);
    if (limit && size !== undefined) prepared.query[limit] = String(size);
    return prepared;
  };
  // reach() sent the first request, which warms caches and lazy connections; it is not measured.
  const first = pointOf(
    limit ? `${limit}=${small}` : "before",
    await quietestSample(load, reached.user, at(limit ? small : undefined), samples),
    limit ? small : undefined,
  );
  if (!first) return { operation: key, skipped: "not a list answer, or no statements logged" };
  const second = limit
    ? pointOf(`${limit}=${large}`, await quietestSample(load, reached.user, at(large), samples), large)
    : undefined;
  return {
    operation,
    user: reached.user,
    limit,
    at,
    first,
    ...(second ? { second } : {}),
    ...(own ? { nested: { family: own.family, parentValues: own.pathValues } } : {}),
    summary: {
      operation: key,
      limit_parameter: limit ?? null,
      ...(own ? { under_own_parent: own.pathValues } : {}),
    },
  };
}

/**
 * For a list under a parent (`GET /boards/{id}/cards`) whose items the probe can create there: a parent of
 * the probe's own, so that the items it adds all land in the one list it measures.
 */
async function ownParent(
  load: LoadRun,
  operation: Operation,
): Promise<
  { user: string | undefined; pathValues: Record<string, string>; family: ResourceFamily } | undefined
> {
  const family = familyOfList(load, operation);
  if (!family || family.parentParameters.length === 0 || !load.creator.creatable(family)) return undefined;
  const parameter = family.parentParameters[family.parentParameters.length - 1]!;
  const parentFamily = load.creator.parentFamilyOf(family.collection, parameter);
  if (!parentFamily) return undefined;
  for (const user of load.users) {
    const parent = await load.creator.ensure(parentFamily, user);
    if (!parent) continue;
    const pathValues = { ...parent.collectionValues, ...(parent.itemValues ?? {}), [parameter]: parent.id };
    if (pathParameterNames(operation.path).every((name) => pathValues[name] !== undefined))
      return { user, pathValues, family };
  }
  return undefined;
}

/** Collections whose items may appear in the pending lists: their own first, then other creatable ones. */
function familiesToGrow(load: LoadRun, pending: Measured[]): ResourceFamily[] {
  const chosen: ResourceFamily[] = [];
  const add = (family: ResourceFamily | undefined) => {
    if (
      family &&
      load.factory.canCreate(family) &&
      !chosen.some((known) => known.collection === family.collection) &&
      chosen.length < MAX_FAMILIES_GROWN
    )
      chosen.push(family);
  };
  for (const measured of pending) if (!measured.nested) add(familyOfList(load, measured.operation));
  // Lists that read other collections (reports, dashboards) only grow with those: top-level ones first.
  const others = load.factory.families.filter(
    (family) => family.list && family.parentParameters.length === 0,
  );
  for (const family of others) add(family);
  return chosen;
}

/** Whether the statements grew with the items at the two points (before any confirmation). */
function grewPerItem(first: Point, second: Point): boolean {
  const itemGrowth = second.items - first.items;
  const repeated = repeatedShape(first, second);
  return (
    itemGrowth >= MIN_ITEM_GROWTH &&
    repeated !== undefined &&
    second.queries - first.queries >= itemGrowth * 0.8 &&
    repeated.large - repeated.small >= itemGrowth * 0.8
  );
}

/**
 * A growth that looks like an N+1 is measured once more at the larger point, and the quieter of the two
 * measurements kept: statements of other traffic that fell into one window must not make an N+1.
 */
async function settle(load: LoadRun, measured: Measured, samples: number): Promise<void> {
  const { first, second } = measured;
  if (!second || !grewPerItem(first, second)) return;
  const again = pointOf(
    second.label,
    await quietestSample(load, measured.user, measured.at(second.size), samples),
    second.size,
  );
  if (again && again.items === second.items && again.queries < second.queries) measured.second = again;
  measured.summary.confirmed_by_second_measurement = true;
}

function decide(
  load: LoadRun,
  measured: Measured,
  samples: number,
  candidates: EnvelopeDraft[],
  summaries: Array<Record<string, unknown>>,
): void {
  const { first, second, operation } = measured;
  const key = operationKey(operation);
  const points = [first, second].filter((point): point is Point => point !== undefined);
  const summary = {
    ...measured.summary,
    points: points.map((point) => ({ label: point.label, items: point.items, queries: point.queries })),
  };
  if (!second) {
    summaries.push({ ...summary, result: "one size only: growth not measured" });
    return;
  }
  const itemGrowth = second.items - first.items;
  const queryGrowth = second.queries - first.queries;
  const repeated = repeatedShape(first, second);
  const shapeGrowth = repeated ? repeated.large - repeated.small : 0;
  if (itemGrowth < MIN_ITEM_GROWTH) {
    // Nothing could be added, but one list already shows it: a statement run once for each item it answers.
    const once = oncePerItem(first);
    if (!once) {
      summaries.push({ ...summary, result: `items grew by ${itemGrowth} only` });
      return;
    }
    candidates.push(
      nPlusOne(load, measured, samples, points, once, {
        text: `${key} ran ${first.queries} statements for ${first.items} items (${first.label}; nothing could be added to measure a second size), each measured ${samples}× and the minimum kept. The statement \`${once.shape}\` ran ${once.large} times: once for each item.`,
        perItem: 1,
        exchanges: [{ label: "items", exchange: first.sample.exchange }],
        bound: { prepared: measured.at(first.size), maxQueries: first.queries - once.large + 2 },
        largest: first,
      }),
    );
    summaries.push({ ...summary, result: "n-plus-one", repeated_statement: once.shape });
    return;
  }
  if (!repeated || queryGrowth < itemGrowth * 0.8 || shapeGrowth < itemGrowth * 0.8) {
    summaries.push({
      ...summary,
      result: `statements grew by ${queryGrowth} for ${itemGrowth} more items: no N+1`,
    });
    return;
  }
  const perItem = Math.round((shapeGrowth / itemGrowth) * 10) / 10;
  candidates.push(
    nPlusOne(load, measured, samples, points, repeated, {
      text: `${key} ran ${first.queries} statements for ${first.items} items (${first.label}) and ${second.queries} for ${second.items} (${second.label}); each measured ${samples}× and the minimum kept. The statement \`${repeated.shape}\` ran ${repeated.small} then ${repeated.large} times: about ${perItem} per item.`,
      perItem,
      exchanges: [
        { label: "fewer-items", exchange: first.sample.exchange },
        { label: "more-items", exchange: second.sample.exchange },
      ],
      bound: {
        prepared: measured.at(second.size),
        maxQueries: Math.max(first.queries + 2, second.queries - shapeGrowth + 2),
      },
      largest: second,
    }),
  );
  summaries.push({ ...summary, result: "n-plus-one", repeated_statement: repeated.shape });
}

/** Past this many items, one shape run once for each of them is no coincidence. */
const MIN_ITEMS_ONCE_EACH = 10;

/** The statement one list runs once for each item it answers (one more or less), with many items. */
function oncePerItem(point: Point): { shape: string; small: number; large: number } | undefined {
  if (point.items < MIN_ITEMS_ONCE_EACH) return undefined;
  const found = Object.entries(point.shapes).find(([, count]) => Math.abs(count - point.items) <= 1);
  return found ? { shape: found[0], small: 0, large: found[1] } : undefined;
}

function nPlusOne(
  load: LoadRun,
  measured: Measured,
  samples: number,
  points: Point[],
  repeated: { shape: string; small: number; large: number },
  evidence: {
    text: string;
    perItem: number;
    exchanges: Array<{ label: string; exchange: HttpExchange }>;
    bound: { prepared: PreparedRequest; maxQueries: number };
    largest: Point;
  },
): EnvelopeDraft {
  const key = operationKey(measured.operation);
  const table = analyzeStatement(repeated.shape).tables[0]?.name;
  return loadFinding(load, {
    defectClass: "n-plus-one",
    operation: measured.operation,
    title: `${key} runs one query per returned item (N+1${table ? ` on ${table}` : ""})`,
    summary: `${evidence.text} At ten times the data the request runs ten times the queries. Fix: load the related rows in one query (a JOIN, or WHERE … IN (…) over the page's ids).`,
    impact:
      "Latency and database load grow linearly with the number of items; large pages or busy lists slow every caller down.",
    severity: evidence.perItem >= 2 ? "high" : "medium",
    confidence: 0.9,
    ...(table ? { discriminator: table } : {}),
    exchanges: evidence.exchanges,
    measurements: {
      operation: key,
      samples_per_point: samples,
      points: points.map((point) => ({
        label: point.label,
        items: point.items,
        queries: point.queries,
        shapes: point.shapes,
      })),
      repeated_statement: repeated,
      statements_at_larger_size: evidence.largest.sample.window?.queries.slice(0, 60) ?? [],
    },
    queryBound: { user: measured.user, ...evidence.bound, shape: repeated.shape },
  });
}
