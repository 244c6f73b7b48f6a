import type { Operation } from "../../map/system-map.ts";
import { isSafeWrite } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest, requestSchema } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import { propertySchema } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import { propertyMatchesColumn } from "./naming.ts";
import type { OwnedRecord } from "./record-creator.ts";
import { RecordCreator } from "./record-creator.ts";
import { countRows, uniqueValueFor } from "./trial-values.ts";

// Uniqueness a create handler checks but an update does not (Rails validations skipped by `update_column`,
// Django's `QuerySet.update`, a PATCH written after the create): two records of the probe's own with
// different values, then the second renamed to the first's value through the record's own update. With
// no unique index both rows now hold it. The proof is the stored rows — counted in the database when it
// can be read, else the records read back (their item, or the list they were created in) — never the
// update's answer alone.

export interface DuplicatePlan {
  operation: Operation;
  property: string;
  column: string;
}

/** Update operations of the created record whose request carries `column` (or, undocumented, any body). */
function updatesCarrying(
  updates: readonly Operation[],
  column: string,
): Array<{ update: Operation; property?: string }> {
  const found: Array<{ update: Operation; property?: string }> = [];
  for (const update of updates) {
    if (!isSafeWrite(update) || !["PATCH", "PUT"].includes(update.method.toUpperCase())) continue;
    const properties = Object.keys(propertiesOf(requestSchema(update) ?? {}));
    const property = properties.find((name) => propertyMatchesColumn(name, column));
    if (property) found.push({ update, property });
    else if (properties.length === 0) found.push({ update });
  }
  return found;
}

function valueIn(body: unknown, property: string): unknown {
  return body && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>)[property]
    : undefined;
}

/** Rows of the list the records were created in whose `property` equals `value`, as their creator sees it. */
async function listedWith(
  context: TrialContext,
  record: OwnedRecord,
  user: string | undefined,
  property: string,
  value: unknown,
): Promise<{ count: number; exchange: HttpExchange } | undefined> {
  const list = record.createFamily.list;
  if (!list) return undefined;
  const prepared = buildRequest(list, { seed: uniqueSeed(), pathValues: record.collectionValues });
  const exchange = await sendPrepared(context.run, user, prepared).catch(() => undefined);
  if (!exchange || !isSuccess(exchange)) return undefined;
  const json = exchange.response?.json;
  const rows = Array.isArray(json)
    ? json
    : (Object.values((json ?? {}) as Record<string, unknown>).find(Array.isArray) as unknown[] | undefined);
  if (!rows) return undefined;
  const count = rows.filter((row) => String(valueIn(row, property)) === String(value)).length;
  return { count, exchange };
}

/** A duplicate made by renaming a second record of the probe's own to the first one's value. */
export async function updateDuplicateTrial(
  context: TrialContext,
  assumption: DataAssumption,
  plan: DuplicatePlan,
): Promise<ApiTrial | undefined> {
  const creator = new RecordCreator(context.run);
  const family = creator.families.find((candidate) => candidate.create === plan.operation);
  const itemFamily = family ? creator.itemFamilyOf(family) : undefined;
  if (!family || !itemFamily || !creator.creatable(family)) return undefined;
  const schema = propertySchema(plan.operation, plan.property);
  try {
    for (const { update, property = plan.property } of updatesCarrying(itemFamily.updates, plan.column).slice(
      0,
      2,
    )) {
      for (const user of context.users) {
        const literal = assumption.where?.[plan.column];
        const value = literal ?? uniqueValueFor(schema, uniqueSeed(), plan.property);
        const first = (await creator.create(family, user, { overrides: { [plan.property]: value } })).record;
        if (!first) continue;
        // Under a conditional key the second record starts outside the condition (another allowed value).
        const other =
          literal === undefined
            ? uniqueValueFor(schema, uniqueSeed(), plan.property)
            : ((Array.isArray(schema.enum) ? schema.enum.find((entry) => entry !== literal) : undefined) ??
              `${literal}-other`);
        const second = (await creator.create(family, user, { overrides: { [plan.property]: other } })).record;
        if (!second) continue;
        const renamed = await creator.update(second, update, user, { [property]: value });
        if (!renamed) continue;
        const exchanges = [
          { label: "first", exchange: first.exchange },
          { label: "second", exchange: second.exchange },
          { label: "rename-to-duplicate", exchange: renamed },
        ];
        const base = { operation: update, user, exchanges, value, column: plan.column };
        const key = `${update.method.toUpperCase()} ${update.path}`;
        if (!isSuccess(renamed))
          return {
            ...base,
            outcome: "rejected",
            reason: `${key} refused the duplicate (${statusOf(renamed)})`,
          };
        const counted = await countRows(context.handle, assumption.table, plan.column, value);
        if (counted)
          return counted.rows >= 2
            ? {
                ...base,
                outcome: "confirmed",
                reason: `${key} renamed a second record to a taken ${plan.column}`,
                verified: counted,
              }
            : {
                ...base,
                outcome: "rejected",
                reason: `${key} answered ${statusOf(renamed)} but ${counted.rows} row(s) hold the value`,
              };
        const listed = await listedWith(context, first, user, plan.property, value);
        if (listed) exchanges.push({ label: "list-after", exchange: listed.exchange });
        if (listed?.count === undefined) continue;
        return listed.count >= 2
          ? {
              ...base,
              outcome: "confirmed",
              reason: `${key} renamed a second record to a taken ${plan.column}; the list then showed ${listed.count} records with it`,
            }
          : {
              ...base,
              outcome: "rejected",
              reason: `${key} answered ${statusOf(renamed)} but the list shows ${listed.count}`,
            };
      }
    }
  } finally {
    await creator.cleanUp();
  }
  return undefined;
}
