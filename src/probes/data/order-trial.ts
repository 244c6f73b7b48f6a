import { operationKey } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import { numberBounds } from "../schema-values/valid-value.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import { findTable } from "./naming.ts";
import type { PairValues, PairWrite } from "./ordered-pairs.ts";
import { pairWrites } from "./ordered-pairs.ts";
import type { OwnedRecord } from "./record-creator.ts";
import { RecordCreator } from "./record-creator.ts";
import { columnOfRow } from "./trial-values.ts";

// The trial of an ordered pair (ordered-pairs.ts) through the application: the pair sent inverted through
// every write that carries it, read back. Only records the trial created are written, and all are
// deleted again.

/** A valid pair and an upper bound below its lower one, in the form the columns hold. */
export function pairValues(
  values: PairValues,
  schema: JsonSchema = {},
): { lower: unknown; upper: unknown; inverted: unknown } {
  if (values === "number") {
    const { min, max } = numberBounds(schema);
    const base = min ?? 0;
    const fits = max === undefined || base + 20 <= max;
    return fits
      ? { lower: base + 10, upper: base + 20, inverted: base + 5 }
      : { lower: base + 2, upper: base + 3, inverted: base + 1 };
  }
  if (values === "date") return { lower: "2024-03-01", upper: "2024-03-31", inverted: "2024-02-01" };
  return { lower: "2024-03-01T09:00:00Z", upper: "2024-03-31T17:00:00Z", inverted: "2024-02-01T09:00:00Z" };
}

function comparable(value: unknown, values: PairValues): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const number = values === "number" ? Number(value) : Date.parse(String(value));
  return Number.isFinite(number) ? number : undefined;
}

interface Stored {
  lower: unknown;
  upper: unknown;
  query?: string;
  readBack?: HttpExchange;
}

/** The record's pair as stored: from the database when it can be read, else through its read operation. */
async function storedPair(
  context: TrialContext,
  creator: RecordCreator,
  assumption: DataAssumption,
  record: OwnedRecord,
  write: PairWrite,
  answer: HttpExchange,
): Promise<Stored | undefined> {
  const [lower, upper] = assumption.columns as [string, string];
  const table = findTable(context.tables, assumption.table);
  const key = table?.columns.find((entry) => entry.primary_key)?.name ?? "id";
  if (record.id) {
    const low = await columnOfRow(context.handle, assumption.table, key, record.id, lower);
    const high = await columnOfRow(context.handle, assumption.table, key, record.id, upper);
    if (low?.found && high?.found) return { lower: low.value, upper: high.value, query: high.query };
  }
  const read = await creator.read(record, record.owner);
  const json = (read && isSuccess(read) ? read.response?.json : answer.response?.json) as
    | Record<string, unknown>
    | undefined;
  if (!json || typeof json !== "object" || !(write.lower in json) || !(write.upper in json)) return undefined;
  return { lower: json[write.lower], upper: json[write.upper], ...(read ? { readBack: read } : {}) };
}

const REFUSAL = new Set([400, 409, 422]);

interface Attempt {
  write: PairWrite;
  user: string | undefined;
  exchange: HttpExchange;
  stored?: Stored;
}

/**
 * The pair sent inverted through every write that carries it — the creates, then updates of records the
 * trial created with a valid pair — and read back. Confirmed when one write refuses the inverted pair
 * and another stores it.
 */
export async function apiOrderTrial(context: TrialContext, assumption: DataAssumption): Promise<ApiTrial> {
  const table = findTable(context.tables, assumption.table);
  const values = assumption.pair;
  if (!table || !values || assumption.columns.length !== 2)
    return { outcome: "skipped", reason: "not an ordered pair of a known table", exchanges: [] };
  const pair = { lower: assumption.columns[0]!, upper: assumption.columns[1]!, values };
  const creator = new RecordCreator(context.run);
  const writes = pairWrites(creator.families, context.tables, table, pair);
  const reasons: string[] = [];
  let refused: Attempt | undefined;
  let stored: Attempt | undefined;
  const inverted = (attempt: Attempt) => {
    const low = comparable(attempt.stored?.lower, values);
    const high = comparable(attempt.stored?.upper, values);
    return low !== undefined && high !== undefined && high < low;
  };
  // A refusal speaks for the order only when the same write with the pair the right way round passes.
  const judge = async (
    attempt: Attempt,
    record: OwnedRecord | undefined,
    control: () => Promise<HttpExchange | undefined>,
  ) => {
    const status = statusOf(attempt.exchange);
    if (REFUSAL.has(status)) {
      if (refused) return;
      const passed = await control();
      if (passed && isSuccess(passed)) refused = attempt;
      else
        reasons.push(
          `${operationKey(attempt.write.operation)} refused the inverted pair, and the valid one too`,
        );
      return;
    }
    if (!isSuccess(attempt.exchange) || !record) {
      reasons.push(`${operationKey(attempt.write.operation)} answered ${status}`);
      return;
    }
    attempt.stored = await storedPair(context, creator, assumption, record, attempt.write, attempt.exchange);
    if (inverted(attempt)) stored ??= attempt;
    else
      reasons.push(
        `${operationKey(attempt.write.operation)} accepted the inverted pair but did not store it`,
      );
  };
  try {
    for (const write of writes.creates.slice(0, 2)) {
      if (refused && stored) break;
      const schema = propertiesOf(requestSchema(write.operation) ?? {})[write.lower];
      const chosen = pairValues(values, schema);
      for (const user of context.users) {
        if (!creator.creatable(write.family)) break;
        const attempt = await creator.create(write.family, user, {
          overrides: { [write.lower]: chosen.lower, [write.upper]: chosen.inverted },
        });
        if (!attempt.exchange) {
          reasons.push(attempt.reason);
          break;
        }
        const status = statusOf(attempt.exchange);
        if (status === 401 || status === 403) continue;
        const valid = { [write.lower]: chosen.lower, [write.upper]: chosen.upper };
        await judge({ write, user, exchange: attempt.exchange }, attempt.record, async () => {
          return (await creator.create(write.family, user, { overrides: valid })).exchange;
        });
        break;
      }
    }
    for (const write of writes.updates.slice(0, 3)) {
      if (refused && stored) break;
      const creation = creator.creationFamilyOf(write.family);
      const creates = writes.creates.find((entry) => entry.family === creation);
      if (!creation || !creates) {
        reasons.push(`no record can be created to update through ${operationKey(write.operation)}`);
        continue;
      }
      const schema = propertiesOf(requestSchema(creates.operation) ?? {})[creates.lower];
      const chosen = pairValues(values, schema);
      for (const user of context.users) {
        const made = await creator.create(creation, user, {
          overrides: { [creates.lower]: chosen.lower, [creates.upper]: chosen.upper },
        });
        const status = made.exchange ? statusOf(made.exchange) : 0;
        if (status === 401 || status === 403) continue;
        const record = made.record;
        if (!record?.itemValues) {
          reasons.push(
            `${operationKey(creates.operation)} did not create a record with a valid pair (${status})`,
          );
          break;
        }
        const exchange = await creator.update(record, write.operation, user, {
          [write.lower]: chosen.lower,
          [write.upper]: chosen.inverted,
        });
        const valid = { [write.lower]: chosen.lower, [write.upper]: chosen.upper };
        if (exchange)
          await judge({ write, user, exchange }, record, () =>
            creator.update(record, write.operation, user, valid),
          );
        break;
      }
    }
  } finally {
    await creator.cleanUp();
  }
  return verdict(assumption, refused, stored, reasons);
}

function verdict(
  assumption: DataAssumption,
  refused: Attempt | undefined,
  stored: Attempt | undefined,
  reasons: string[],
): ApiTrial {
  const [lower, upper] = assumption.columns as [string, string];
  if (stored && refused) {
    const keep = stored.stored!;
    const exchanges = [
      { label: "refused-inverted", exchange: refused.exchange },
      { label: "stored-inverted", exchange: stored.exchange },
      ...(keep.readBack ? [{ label: "read-back", exchange: keep.readBack }] : []),
    ];
    return {
      outcome: "confirmed",
      reason: `${operationKey(refused.write.operation)} refuses ${upper} before ${lower} (${statusOf(refused.exchange)}), but ${operationKey(stored.write.operation)} stored ${upper} = ${String(keep.upper)} before ${lower} = ${String(keep.lower)}`,
      operation: stored.write.operation,
      user: stored.user,
      exchanges,
      column: upper,
      value: keep.upper,
      ...(keep.query ? { verified: { query: keep.query, rows: 1 } } : {}),
    };
  }
  if (stored)
    return {
      outcome: "skipped",
      reason: `${operationKey(stored.write.operation)} stored ${upper} before ${lower}, but no write refuses that: the application does not treat the order as a rule`,
      exchanges: [],
    };
  if (refused)
    return {
      outcome: "rejected",
      reason: `every write that was tried refuses ${upper} before ${lower} (${operationKey(refused.write.operation)}: ${statusOf(refused.exchange)})${reasons.length ? `; ${reasons.join("; ")}` : ""}`,
      operation: refused.write.operation,
      user: refused.user,
      exchanges: [{ label: "refused-inverted", exchange: refused.exchange }],
    };
  return { outcome: "skipped", reason: reasons.join("; ") || "no write carries the pair", exchanges: [] };
}
