import type { JsonSchema } from "../schema-values/json-schema.ts";
import { numberOf } from "../schema-values/json-schema.ts";
import { safeRegExp, validValue } from "../schema-values/valid-value.ts";
import type { DatabaseHandle } from "./target-database.ts";
import { quoteName, readOnly } from "./target-database.ts";

// Values for trials and how to find them again in the database: a value nobody else has (it carries the
// run's seed) that the request schema still accepts, and a count that survives the application
// normalising the case of what it stores.

/** A valid value for `schema` that carries `seed`, so that rows holding it are the probe's own. */
export function uniqueValueFor(schema: JsonSchema, seed: string, name: string): unknown {
  const generated = validValue(schema, { seed, name });
  if (typeof generated !== "string") return generated;
  const pattern = typeof schema.pattern === "string" ? safeRegExp(schema.pattern) : undefined;
  const minLength = numberOf(schema.minLength) ?? 0;
  const maxLength = numberOf(schema.maxLength) ?? Number.POSITIVE_INFINITY;
  const lower = generated.toLowerCase();
  const at = lower.indexOf("@");
  const candidates = [
    lower.includes(seed) ? lower : undefined,
    at > 0 ? `${lower.slice(0, at)}.${seed}${lower.slice(at)}` : undefined,
    `${lower}-${seed}`,
    `qaas-${seed}`,
    `q${seed}`,
    `Q${seed.toUpperCase()}`,
    `Q${seed}`,
    `q_${seed}`,
    seed,
  ].filter((value): value is string => value !== undefined);
  const fits = (value: string) =>
    value.length >= minLength && value.length <= maxLength && (!pattern || pattern.test(value));
  return candidates.find(fits) ?? generated;
}

/**
 * Rows of `table` whose `column` holds `value`. Strings compare without case: applications often store a
 * code upper-cased or an email lower-cased, and the row is still the one the request created.
 */
export async function countRows(
  handle: DatabaseHandle | undefined,
  table: string,
  column: string,
  value: unknown,
): Promise<{ query: string; rows: number } | undefined> {
  if (!handle) return undefined;
  const placeholder = handle.kind === "postgres" ? "$1" : "?";
  const left = typeof value === "string" ? `LOWER(CAST(${quoteName(column)} AS TEXT))` : quoteName(column);
  const right = typeof value === "string" ? `LOWER(${placeholder})` : placeholder;
  const query = `SELECT COUNT(*) AS n FROM ${quoteName(table)} WHERE ${left} = ${right}`;
  const rows = await readOnly(handle, (run) => run(query, [value]));
  const count = rows?.[0]?.n;
  return count === undefined ? undefined : { query, rows: Number(count) };
}

/** How many different values `other` takes over the rows `countRows` would count. */
export async function distinctValues(
  handle: DatabaseHandle,
  table: string,
  column: string,
  value: unknown,
  other: string,
): Promise<number | undefined> {
  const placeholder = handle.kind === "postgres" ? "$1" : "?";
  const left = typeof value === "string" ? `LOWER(CAST(${quoteName(column)} AS TEXT))` : quoteName(column);
  const right = typeof value === "string" ? `LOWER(${placeholder})` : placeholder;
  const query = `SELECT COUNT(DISTINCT ${quoteName(other)}) AS n FROM ${quoteName(table)} WHERE ${left} = ${right}`;
  const rows = await readOnly(handle, (run) => run(query, [value]));
  const count = rows?.[0]?.n;
  return count === undefined ? undefined : Number(count);
}

/** One column of the row whose primary key is `id` (undefined: no such row, or no database). */
export async function columnOfRow(
  handle: DatabaseHandle | undefined,
  table: string,
  key: string,
  id: string,
  column: string,
): Promise<{ found: boolean; value: unknown; query: string } | undefined> {
  if (!handle) return undefined;
  const placeholder = handle.kind === "postgres" ? "$1" : "?";
  const query = `SELECT ${quoteName(column)} AS v FROM ${quoteName(table)} WHERE CAST(${quoteName(key)} AS TEXT) = ${placeholder}`;
  const rows = await readOnly(handle, (run) => run(query, [id]));
  if (rows === undefined) return undefined;
  return { found: rows.length > 0, value: rows[0]?.v, query };
}
