import type { Operation } from "../../map/system-map.ts";
import { isSafeWrite } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import { findTable, propertyMatchesColumn, tableForName, tableForPath } from "./naming.ts";
import { collectionName, RecordCreator } from "./record-creator.ts";
import { columnOfRow } from "./trial-values.ts";

// A quantity the code decrements without a lower bound (`SET stock = stock - ?`, no `WHERE stock >= ?`) and
// the table without a CHECK: the action that takes units out of a record (`POST /items/{id}/consume`,
// `/reserve`, `/withdraw`) is asked for more than the record of the probe's own holds. Confirmed only when
// the stored value is then read below zero — from the database when it can be read, else from the record
// read back through the API. A refusal (409, 422) is the application keeping the rule.

const TAKE = 1000;
/** Body fields an undocumented action most often takes its amount in. */
const AMOUNT_NAMES = ["amount", "quantity", "qty", "count", "units"];

function amountBody(action: Operation): Record<string, number> | undefined {
  const properties = propertiesOf(requestSchema(action) ?? {});
  const names = Object.keys(properties);
  // An operation read from code, not a document, has fields of unknown type: its amount goes by name.
  const named = names.filter((name) => AMOUNT_NAMES.includes(name.toLowerCase()));
  if (!action.documented && named.length > 0) return Object.fromEntries(named.map((name) => [name, TAKE]));
  if (names.length === 0) return Object.fromEntries(AMOUNT_NAMES.map((name) => [name, TAKE]));
  const numeric = names.filter((name) => ["integer", "number"].includes(schemaType(properties[name] ?? {})));
  return numeric.length > 0 ? Object.fromEntries(numeric.map((name) => [name, TAKE])) : undefined;
}

/** An action on a record of the probe's own asked to take more than it holds; the stored value read back. */
export async function apiDecrementTrial(
  context: TrialContext,
  assumption: DataAssumption,
): Promise<ApiTrial> {
  const skipped = (reason: string): ApiTrial => ({ outcome: "skipped", reason, exchanges: [] });
  const table = findTable(context.tables, assumption.table);
  const column = assumption.columns[0]!;
  if (!table || assumption.kind !== "non-negative")
    return skipped("not a decremented column of a known table");
  const creator = new RecordCreator(context.run);
  const families = creator.families.filter((family) => {
    const name = collectionName(family.collection);
    const stored = name
      ? (tableForName(context.tables, name) ?? tableForPath(context.tables, family.collection))
      : undefined;
    return stored === table && creator.creatable(family) && family.create !== undefined;
  });
  const reasons: string[] = [];
  try {
    for (const family of families.slice(0, 2)) {
      const item = creator.itemFamilyOf(family);
      const actions = (item?.children ?? []).filter(
        (operation) =>
          operation.method.toUpperCase() === "POST" && isSafeWrite(operation) && amountBody(operation),
      );
      if (actions.length === 0) {
        reasons.push(`no action under ${item?.item ?? family.collection} takes an amount`);
        continue;
      }
      const carried = Object.keys(propertiesOf(requestSchema(family.create!) ?? {})).find((name) =>
        propertyMatchesColumn(name, column),
      );
      for (const user of context.users) {
        const made = await creator.create(family, user, carried ? { overrides: { [carried]: 1 } } : {});
        const record = made.record;
        if (!record) {
          reasons.push(`${family.create!.method} ${family.collection}: ${made.reason}`);
          continue;
        }
        for (const action of actions.slice(0, 3)) {
          const taken = await creator.update(record, action, user, amountBody(action)!);
          if (!taken) continue;
          const exchanges = [
            { label: "create", exchange: record.exchange },
            { label: "take-more-than-held", exchange: taken },
          ];
          const key = `${action.method.toUpperCase()} ${action.path}`;
          if (!isSuccess(taken)) {
            reasons.push(`${key} refused taking ${TAKE} (${statusOf(taken)})`);
            continue;
          }
          const idColumn = table.columns.find((entry) => entry.primary_key)?.name ?? "id";
          const row = await columnOfRow(context.handle, table.name, idColumn, record.id, column);
          let value: number | undefined = row?.found ? Number(row.value) : undefined;
          if (value === undefined) {
            const read = await creator.read(record, user);
            if (read) exchanges.push({ label: "read-back", exchange: read });
            const json = (read && isSuccess(read) ? read.response?.json : undefined) as
              | Record<string, unknown>
              | undefined;
            const stored = json?.[column];
            if (typeof stored === "number" || (typeof stored === "string" && stored.trim() !== ""))
              value = Number(stored);
          }
          if (value === undefined || Number.isNaN(value)) {
            reasons.push(`${key} answered ${statusOf(taken)} but ${column} could not be read back`);
            continue;
          }
          const base = { operation: action, user, exchanges, value };
          if (value >= 0)
            return {
              ...base,
              outcome: "rejected",
              reason: `${key} answered ${statusOf(taken)} and ${column} stayed at ${value}`,
            };
          return {
            ...base,
            outcome: "confirmed",
            reason: `${key} took ${TAKE} from a record holding far less and ${column} was stored as ${value}`,
            ...(row?.found ? { verified: { query: row.query, rows: 1 } } : {}),
          };
        }
        break;
      }
    }
  } finally {
    await creator.cleanUp();
  }
  return skipped(reasons.join("; ") || `no creatable resource stores ${assumption.table}`);
}
