import type { Table } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { schemaType } from "../schema-values/json-schema.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import { creationOperationsFor, propertySchema } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import { findTable, tableForName, tableForPath } from "./naming.ts";
import type { OwnedRecord } from "./record-creator.ts";
import { collectionName, RecordCreator } from "./record-creator.ts";
import { columnOfRow } from "./trial-values.ts";

// A reference the application checks when a row is written can still break when the parent goes: without
// a foreign key, deleting the parent leaves its children behind. The trial creates a parent and a child of
// its own through the API, deletes the parent through its documented DELETE, and looks (read-only, or
// through the API) whether the child outlived it. Only records the trial created are touched.

interface ChildPlan {
  createFamily: ResourceFamily;
  /** The parent goes in the path (`POST /cards/{id}/notes`)… */
  parameter?: string;
  /** …or in the body (`POST /notes { card_id }`). */
  property?: string;
  parentFamily: ResourceFamily;
}

const REFUSED_GONE = new Set([404, 410]);

function tableOf(tables: readonly Table[], family: ResourceFamily): Table | undefined {
  const name = collectionName(family.collection);
  if (!name) return undefined;
  // `/orders/{id}/lines` may be stored in `order_lines`: the path's other words settle an ambiguous name.
  return tableForName(tables, name) ?? tableForPath(tables, family.collection);
}

function childPlans(context: TrialContext, creator: RecordCreator, assumption: DataAssumption): ChildPlan[] {
  const child = findTable(context.tables, assumption.table);
  const parentTable = assumption.references
    ? findTable(context.tables, assumption.references.table)
    : undefined;
  if (!child || !parentTable) return [];
  const plans: ChildPlan[] = [];
  for (const family of creator.families) {
    if (!creator.creatable(family) || tableOf(context.tables, family) !== child) continue;
    for (const parameter of family.parentParameters) {
      const parentFamily = creator.parentFamilyOf(family.collection, parameter);
      if (parentFamily && tableOf(context.tables, parentFamily) === parentTable)
        plans.push({ createFamily: family, parameter, parentFamily });
    }
  }
  const column = assumption.columns[0]!;
  for (const { operation, property, fit } of creationOperationsFor(
    context.run.map.operations,
    assumption.table,
    column,
  )) {
    const family = creator.families.find((candidate) => candidate.create === operation);
    const parentFamily = creator.families.find(
      (candidate) =>
        candidate.item !== undefined &&
        candidate.parentParameters.length === 0 &&
        tableOf(context.tables, candidate) === parentTable,
    );
    if (fit === 2 && family && parentFamily && creator.creatable(family))
      plans.push({ createFamily: family, property, parentFamily });
  }
  return plans;
}

export async function apiOrphanTrial(context: TrialContext, assumption: DataAssumption): Promise<ApiTrial> {
  const skipped = (reason: string): ApiTrial => ({ outcome: "skipped", reason, exchanges: [] });
  const references = assumption.references;
  if (assumption.kind !== "foreign-key" || !references) return skipped("not a reference");
  const creator = new RecordCreator(context.run);
  const plans = childPlans(context, creator, assumption).slice(0, 2);
  if (plans.length === 0)
    return skipped(
      `no create operation makes a ${assumption.table} row under a ${references.table} of the probe's own`,
    );
  const reasons: string[] = [];
  try {
    for (const plan of plans) {
      const trial = await tryPlan(context, creator, assumption, plan);
      if (trial.outcome !== "skipped") return trial;
      reasons.push(trial.reason);
    }
  } finally {
    await creator.cleanUp();
  }
  return skipped(reasons.join("; "));
}

async function tryPlan(
  context: TrialContext,
  creator: RecordCreator,
  assumption: DataAssumption,
  plan: ChildPlan,
): Promise<ApiTrial> {
  const references = assumption.references!;
  const column = assumption.columns[0]!;
  const skipped = (reason: string, exchanges: ApiTrial["exchanges"] = []): ApiTrial => ({
    outcome: "skipped",
    reason,
    exchanges,
  });
  const parentCreation = creator.creationFamilyOf(plan.parentFamily);
  if (!parentCreation) return skipped(`no ${references.table} can be created to delete afterwards`);
  let parent: OwnedRecord | undefined;
  let user: string | undefined;
  for (const candidate of context.users) {
    const attempt = await creator.create(parentCreation, candidate);
    if (attempt.record) {
      parent = attempt.record;
      user = candidate;
      break;
    }
  }
  if (!parent)
    return skipped(`${parentCreation.create?.method} ${parentCreation.collection} created nothing`);
  if (!parent.itemFamily?.remove || !parent.itemValues)
    return skipped(`no documented DELETE for a ${references.table} of the probe's own`);
  const parentValues = { ...parent.collectionValues, ...parent.itemValues };
  const childAttempt = plan.parameter
    ? await creator.create(plan.createFamily, user, {
        parentValues: { ...parentValues, [plan.parameter]: parent.id },
      })
    : await creator.create(plan.createFamily, user, {
        overrides: {
          [plan.property!]: ["integer", "number"].includes(
            schemaType(propertySchema(plan.createFamily.create!, plan.property!)),
          )
            ? Number(parent.id)
            : parent.id,
        },
      });
  const child = childAttempt.record;
  if (!child)
    return skipped(
      `${plan.createFamily.create?.method} ${plan.createFamily.collection}: ${childAttempt.reason}`,
    );
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [
    { label: "create-parent", exchange: parent.exchange },
    { label: "create-child", exchange: child.exchange },
  ];
  const childTable = findTable(context.tables, assumption.table);
  const childKey = childTable?.columns.find((entry) => entry.primary_key)?.name ?? "id";
  const linked = await columnOfRow(context.handle, assumption.table, childKey, child.id, column);
  if (linked && (!linked.found || String(linked.value) !== parent.id))
    return skipped(
      `the created ${assumption.table} row does not hold its parent's id in ${column}`,
      exchanges,
    );
  const deleted = await creator.remove(parent);
  if (deleted) exchanges.push({ label: "delete-parent", exchange: deleted });
  if (!deleted || !isSuccess(deleted)) {
    const status = statusOf(deleted);
    if (status === 409 || status === 400 || status === 422)
      return {
        outcome: "rejected",
        reason: `the application refuses to delete a ${references.table} that still has ${assumption.table} (${status})`,
        exchanges,
      };
    return skipped(`the parent could not be deleted (${status || "not sent"})`, exchanges);
  }
  // The parent must really be gone (not archived), or the child is no orphan.
  const parentRow = await columnOfRow(
    context.handle,
    references.table,
    references.column,
    parent.id,
    references.column,
  );
  const parentRead = parentRow ? undefined : await creator.read(parent, user);
  const parentGone = parentRow ? !parentRow.found : REFUSED_GONE.has(statusOf(parentRead));
  if (!parentGone)
    return {
      outcome: "rejected",
      reason: `${references.table} ${parent.id} is still there after its DELETE (kept, not removed)`,
      exchanges,
    };
  const childRow = await columnOfRow(context.handle, assumption.table, childKey, child.id, column);
  // A child with no item path of its own is looked for in the list it was created in.
  const childRead = (await creator.read(child, user)) ?? (await listUnder(context, child, user));
  const readable =
    childRead !== undefined &&
    isSuccess(childRead) &&
    child.markers.some((marker) => (childRead.response?.body ?? "").includes(marker));
  if (childRead) exchanges.push({ label: "read-child-after", exchange: childRead });
  const survives = childRow ? childRow.found : readable;
  if (!childRow && childRead === undefined)
    return skipped(
      `neither the database nor a read operation can tell whether the ${assumption.table} row is left`,
      exchanges,
    );
  if (!survives)
    return {
      outcome: "rejected",
      reason: `deleting the ${references.table} also removed its ${assumption.table} (the application deletes them itself)`,
      exchanges,
    };
  const via = `${parent.itemFamily.remove.method.toUpperCase()} ${parent.itemFamily.item}`;
  return {
    outcome: "confirmed",
    operation: plan.createFamily.create!,
    user,
    exchanges,
    reason: `after ${via} deleted a ${references.table} row of the probe's own, the ${assumption.table} row created under it ${
      childRow ? `was still stored with ${column} = ${parent.id}` : "could still be read through the API"
    }${readable && childRow ? " and read through the API" : ""}`,
    ...(childRow ? { verified: { query: childRow.query, rows: 1 } } : {}),
  };
}

/** The list the record was created in (`GET /orders/{id}/lines`), read as its creator. */
async function listUnder(
  context: TrialContext,
  record: OwnedRecord,
  user: string | undefined,
): Promise<HttpExchange | undefined> {
  const list = record.createFamily.list;
  if (!list) return undefined;
  const prepared = buildRequest(list, { seed: uniqueSeed(), pathValues: record.collectionValues });
  return sendPrepared(context.run, user, prepared).catch(() => undefined);
}
