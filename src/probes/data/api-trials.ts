import type { Operation, Table } from "../../map/system-map.ts";
import { isItemPath, isSafeWrite, resourceFamilies } from "../api/operation-index.ts";
import { sendAsRightRole, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, requestSchema, serializeBody } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { extractId, uniqueSeed } from "../api/resource-factory.ts";
import type { ReproScript, ReproStep } from "../evidence/failing-test.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import {
  buildQuery,
  fillPath,
  matchesTemplate,
  pathOfUrl,
  pathParameterNames,
  toTemplateForm,
} from "../http/target-url.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import { validValue } from "../schema-values/valid-value.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { DataAssumption } from "./assumptions.ts";
import { RecordCreator } from "./record-creator.ts";
import { findTable, nameForms, pathFitsTable, propertyMatchesColumn, snakeCase } from "./naming.ts";
import type { DatabaseHandle } from "./target-database.ts";
import { quoteName, readOnly } from "./target-database.ts";
import { countRows, distinctValues, uniqueValueFor } from "./trial-values.ts";

export { countRows } from "./trial-values.ts";

// Trials through the application itself, as a profile user: create the duplicate, the orphan or the
// unknown state with the operation whose request carries the column, and see whether it is accepted —
// then look in the database (read-only) to see that it was stored.

export interface TrialContext {
  run: ProbeRun;
  factory: ResourceFactory;
  tables: readonly Table[];
  handle: DatabaseHandle | undefined;
  users: Array<string | undefined>;
}

export interface ApiTrial {
  outcome: "confirmed" | "rejected" | "skipped";
  reason: string;
  operation?: Operation;
  user?: string;
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  /** The read-only query that showed the stored rows, and what it answered. */
  verified?: { query: string; rows: number };
  /** The key column the request carried (the others were implied by the caller or the path). */
  column?: string;
  value?: unknown;
  repro?: ReproScript;
}

// Sign-in and session endpoints hand out credentials; registration creates users and is fair game.
const CREDENTIAL_SEGMENT =
  /^(login|log-in|signin|sign-in|token|tokens|oauth|oauth2|refresh|logout|sign-out|session|sessions)$/i;

/** POST operations whose request body carries `column`, best fit for `table` first. */
export function creationOperationsFor(
  operations: readonly Operation[],
  table: string,
  column: string,
): Array<{ operation: Operation; property: string; fit: number }> {
  const found: Array<{ operation: Operation; property: string; fit: number }> = [];
  for (const operation of operations) {
    if (operation.method.toUpperCase() !== "POST" || isItemPath(operation.path) || !isSafeWrite(operation))
      continue;
    if (
      toTemplateForm(operation.path)
        .split("/")
        .some((segment) => CREDENTIAL_SEGMENT.test(segment))
    )
      continue;
    const schema = requestSchema(operation);
    if (!schema) continue;
    const property = Object.keys(propertiesOf(schema)).find((name) => propertyMatchesColumn(name, column));
    if (property) found.push({ operation, property, fit: pathFitsTable(operation.path, table) });
  }
  return found.sort((left, right) => right.fit - left.fit);
}

/** Ids for the body's other reference properties (`product_id` → a product the user can list). */
async function references(
  context: TrialContext,
  operation: Operation,
  user: string | undefined,
  skip: string,
) {
  const result: Record<string, string> = {};
  const schema = requestSchema(operation);
  if (!schema) return result;
  const families = context.factory.families;
  for (const name of Object.keys(propertiesOf(schema))) {
    if (name === skip) continue;
    const stem = name.match(/^(.+?)[_-]?(id|Id|ID)$/)?.[1];
    if (!stem) continue;
    const forms = nameForms(stem);
    const family = families.find((candidate) =>
      forms.includes(snakeCase(candidate.collection.split("/").filter(Boolean).pop() ?? "")),
    );
    const discovered = family ? await context.factory.discover(family, user) : undefined;
    if (discovered?.ids[0] !== undefined) {
      result[name] = discovered.ids[0];
      continue;
    }
    const parent = context.tables.find((table) => forms.includes(table.name.toLowerCase()));
    const key = parent?.columns.find((column) => column.primary_key)?.name;
    if (parent && key && context.handle) {
      const rows = await readOnly(context.handle, (run) =>
        run(`SELECT ${quoteName(key)} AS id FROM ${quoteName(parent.name)} LIMIT 1`),
      );
      if (rows?.[0]?.id !== undefined) result[name] = String(rows[0].id);
    }
  }
  return result;
}

/** A valid request for `operation` as `user`, path ids and body references filled, `overrides` applied. */
export async function prepareRequest(
  context: TrialContext,
  operation: Operation,
  user: string | undefined,
  seed: string,
  overrides: Record<string, unknown> = {},
): Promise<PreparedRequest | undefined> {
  const located = await context.factory.pathValuesFor(operation, user);
  if (!located) return undefined;
  const refs = await references(context, operation, user, Object.keys(overrides)[0] ?? "");
  const prepared = buildRequest(operation, {
    seed,
    pathValues: located.values,
    reference: (name) => refs[name],
  });
  if (prepared.body === undefined && Object.keys(overrides).length === 0) return prepared;
  const body =
    prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body) ? prepared.body : {};
  prepared.body = { ...(body as Record<string, unknown>), ...overrides };
  return prepared;
}

function prepare(
  context: TrialContext,
  operation: Operation,
  property: string,
  value: unknown,
  user: string | undefined,
  seed: string,
): Promise<PreparedRequest | undefined> {
  return prepareRequest(context, operation, user, seed, { [property]: value });
}

export function propertySchema(operation: Operation, property: string): JsonSchema {
  const schema = requestSchema(operation);
  return (schema ? propertiesOf(schema)[property] : undefined) ?? { type: "string" };
}

function stepOf(
  name: string,
  prepared: PreparedRequest,
  user: string | undefined,
  swaps: Array<[string, string]>,
): ReproStep {
  const swap = (text: string) => swaps.reduce((current, [from, to]) => current.split(from).join(to), text);
  const body = serializeBody(prepared);
  return {
    name,
    as: user,
    method: prepared.operation.method.toUpperCase(),
    path: swap(`${fillPath(prepared.operation.path, prepared.pathValues)}${buildQuery(prepared.query)}`),
    ...(body !== undefined
      ? { body: swap(body), contentType: prepared.contentType ?? "application/json" }
      : {}),
  };
}

/**
 * Cleans up what a trial created, when the resource can be deleted by id: through its own item path, or a
 * namesake's (`POST /boards/{id}/cards` creates what `DELETE /cards/{id}` removes).
 */
export async function removeCreated(
  context: TrialContext,
  operation: Operation,
  user: string | undefined,
  exchanges: HttpExchange[],
) {
  const creator = new RecordCreator(context.run);
  const family = creator.families.find((candidate) => candidate.create === operation);
  const item = family ? creator.itemFamilyOf(family) : undefined;
  if (!item?.remove || !item.idParameter || !item.item || !isSafeWrite(item.remove)) return;
  const others = pathParameterNames(item.item).filter((name) => name !== item.idParameter);
  if (others.length > 0 && item !== family) return;
  for (const exchange of exchanges) {
    if (!isSuccess(exchange)) continue;
    const id = extractId(exchange, item);
    if (id === undefined) continue;
    const prepared = buildRequest(item.remove, {
      seed: uniqueSeed(),
      pathValues: { ...pathValuesOf(exchange, operation), [item.idParameter]: id },
    });
    await sendPrepared(context.run, user, prepared).catch(() => undefined);
  }
}

/** The path values a sent request used (read back from its URL against the operation's template). */
function pathValuesOf(exchange: HttpExchange, operation: Operation): Record<string, string> {
  return matchesTemplate(toTemplateForm(operation.path), pathOfUrl(exchange.request.url)) ?? {};
}

// Columns a request does not carry but that two requests of one user under one parent share: the
// caller's scope (tenant, organisation, owner…), filled in by the application from the session.
const SCOPE_COLUMN =
  /^(tenant|org|organization|organisation|account|workspace|team|company|owner|user|customer|member|group|site|project|space)_?id$/i;

interface UniquePlan {
  operation: Operation;
  property: string;
  /** The column the request carries; the other columns of the key are implied. */
  column: string;
  implied: string[];
  fit: number;
}

/** A path parameter of `operation` that names the parent `column` refers to (`/boards/{id}/x` → board_id). */
function impliedByPath(operation: Operation, table: Table | undefined, column: string): boolean {
  const segments = toTemplateForm(operation.path).split("/").filter(Boolean);
  const reference = table?.foreign_keys.find(
    (key) => key.columns.length === 1 && key.columns[0]!.toLowerCase() === column.toLowerCase(),
  )?.references_table;
  const stem = column.match(/^(.+?)_?id$/i)?.[1];
  const names = new Set([...(reference ? nameForms(reference) : []), ...(stem ? nameForms(stem) : [])]);
  return segments.some(
    (segment, index) =>
      segment.startsWith("{") && index > 0 && names.has(snakeCase(segments[index - 1]!)),
  );
}

/**
 * How to send a duplicate: the create operations that carry one column of the key in their body while
 * every other column of the key is implied (the caller's scope, or the parent in the path), so that two
 * requests of one user with one value collide on the whole key.
 */
function uniquePlans(context: TrialContext, assumption: DataAssumption): UniquePlan[] {
  const table = findTable(context.tables, assumption.table);
  const plans: UniquePlan[] = [];
  for (const column of assumption.columns) {
    const others = assumption.columns.filter((other) => other !== column);
    for (const candidate of creationOperationsFor(context.run.map.operations, assumption.table, column)) {
      const carried = Object.keys(propertiesOf(requestSchema(candidate.operation) ?? {}));
      const implied = others.every(
        (other) =>
          !carried.some((property) => propertyMatchesColumn(property, other)) &&
          (SCOPE_COLUMN.test(other) || impliedByPath(candidate.operation, table, other)),
      );
      if (implied) plans.push({ ...candidate, column, implied: others });
    }
  }
  return plans.sort((left, right) => right.fit - left.fit);
}

/** Two creations with one value of a column (or a key with implied columns) the code treats as unique. */
export async function apiUniqueTrial(context: TrialContext, assumption: DataAssumption): Promise<ApiTrial> {
  const skipped = (reason: string): ApiTrial => ({ outcome: "skipped", reason, exchanges: [] });
  const candidates = uniquePlans(context, assumption).slice(0, 3);
  if (candidates.length === 0)
    return skipped(
      assumption.columns.length === 1
        ? `no create operation carries ${assumption.columns[0]} in its request body`
        : `no create operation carries one column of ${assumption.columns.join(" + ")} with the others implied by the caller or the path`,
    );
  const reasons: string[] = [];
  for (const { operation, property, fit, column, implied } of candidates) {
    if (fit === 0 && !context.handle) {
      reasons.push(
        `${operation.method} ${operation.path} does not name ${assumption.table} and the database cannot be read to check it`,
      );
      continue;
    }
    const seed = uniqueSeed();
    const value = uniqueValueFor(propertySchema(operation, property), seed, property);
    const first = await sendAsRightRole(context.run, context.users, (user) =>
      prepare(context, operation, property, value, user, seed),
    );
    if (!first || !isSuccess(first.exchange)) {
      reasons.push(
        `${operation.method} ${operation.path} did not create (${first ? statusOf(first.exchange) : "not sent"})`,
      );
      continue;
    }
    const stored = await countRows(context.handle, assumption.table, column, value);
    if (stored && stored.rows === 0) {
      reasons.push(
        `${operation.method} ${operation.path} does not store ${property} in ${assumption.table}.${column}`,
      );
      await removeCreated(context, operation, first.user, [first.exchange]);
      continue;
    }
    const secondSeed = uniqueSeed();
    const secondRequest = await prepare(context, operation, property, value, first.user, secondSeed);
    const second = secondRequest ? await sendPrepared(context.run, first.user, secondRequest) : undefined;
    const exchanges = [{ label: "first", exchange: first.exchange }];
    if (second) exchanges.push({ label: "duplicate", exchange: second });
    const repro: ReproScript | undefined = secondRequest
      ? {
          title: `a second ${assumption.table} with the same ${column} is refused`,
          steps: [
            stepOf("first", first.prepared, first.user, [[seed, "{{unique}}"]]),
            stepOf("duplicate", secondRequest, first.user, [
              [seed, "{{unique}}"],
              [secondSeed, "{{unique}}b"],
            ]),
          ],
          assertions: [
            {
              kind: "not_success",
              step: "duplicate",
              message: `a duplicate ${column} must be refused (it is assumed unique)`,
            },
          ],
        }
      : undefined;
    const base = { operation, user: first.user, exchanges, value, ...(repro ? { repro } : {}) };
    if (!second || !isSuccess(second)) {
      await removeCreated(context, operation, first.user, [first.exchange]);
      const status = second ? statusOf(second) : 0;
      return {
        ...base,
        outcome: "rejected",
        reason: `the application refused the duplicate (${status}): it checks ${column} itself`,
      };
    }
    const family = resourceFamilies(context.run.map.operations).find(
      (candidate) => candidate.create === operation,
    );
    const ids = family ? [extractId(first.exchange, family), extractId(second, family)] : [];
    if (ids[0] !== undefined && ids[0] === ids[1]) {
      return {
        ...base,
        outcome: "rejected",
        reason: "both requests answered the same record (an upsert), not a duplicate",
      };
    }
    const verified = await countRows(context.handle, assumption.table, column, value);
    const spread = context.handle
      ? await Promise.all(
          implied.map((other) => distinctValues(context.handle!, assumption.table, column, value, other)),
        )
      : [];
    await removeCreated(context, operation, first.user, [first.exchange, second]);
    if (verified && verified.rows < 2) {
      return {
        ...base,
        outcome: "rejected",
        reason: `both requests succeeded but ${assumption.table} holds ${verified.rows} row(s) with that ${column}`,
      };
    }
    const split = implied.filter((_, index) => spread[index] !== undefined && spread[index] !== 1);
    if (split.length > 0) {
      return {
        ...base,
        outcome: "rejected",
        reason: `both were stored, but with different ${split.join(", ")}: not a duplicate of the whole key`,
      };
    }
    return {
      ...base,
      column,
      outcome: "confirmed",
      reason:
        implied.length > 0
          ? `both creations were accepted with one ${column} and the same ${implied.join(", ")}`
          : "both creations were accepted",
      ...(verified ? { verified } : {}),
    };
  }
  return skipped(reasons.join("; ") || "no operation could create the record");
}

/** One creation whose column holds a value the code never expects: a missing parent, an unknown state. */
export async function apiValueTrial(context: TrialContext, assumption: DataAssumption): Promise<ApiTrial> {
  const skipped = (reason: string): ApiTrial => ({ outcome: "skipped", reason, exchanges: [] });
  const column = assumption.columns[0]!;
  const candidates = creationOperationsFor(context.run.map.operations, assumption.table, column).filter(
    (candidate) => candidate.fit > 0 || context.handle,
  );
  const chosen = candidates[0];
  if (!chosen) return skipped(`no create operation carries ${column} in its request body`);
  const { operation, property } = chosen;
  const seed = uniqueSeed();
  const schema = propertySchema(operation, property);
  const numeric = ["integer", "number"].includes(schemaType(schema));
  const value =
    assumption.kind === "foreign-key"
      ? numeric
        ? 1_900_000_000 + Math.floor(Math.random() * 90_000_000)
        : `qaas-missing-${seed}`
      : `qaas_invalid_${seed}`;
  const sent = await sendAsRightRole(context.run, context.users, (user) =>
    prepare(context, operation, property, value, user, seed),
  );
  if (!sent) return skipped(`${operation.method} ${operation.path} could not be sent`);
  const exchanges = [
    { label: assumption.kind === "foreign-key" ? "orphan" : "unknown-value", exchange: sent.exchange },
  ];
  const what =
    assumption.kind === "foreign-key"
      ? `a ${column} that matches no ${assumption.references?.table}`
      : `${column} = '${String(value)}'`;
  const repro: ReproScript = {
    title: `${assumption.table} with ${what} is refused`,
    steps: [stepOf(exchanges[0]!.label, sent.prepared, sent.user, [[seed, "{{unique}}"]])],
    assertions: [{ kind: "not_success", step: exchanges[0]!.label, message: `${what} must be refused` }],
  };
  const base = { operation, user: sent.user, exchanges, value, repro };
  if (!isSuccess(sent.exchange)) {
    return {
      ...base,
      outcome: "rejected",
      reason: `the application refused it (${statusOf(sent.exchange)})`,
    };
  }
  const verified = await countRows(context.handle, assumption.table, column, value);
  if (assumption.kind === "foreign-key" && context.handle && assumption.references) {
    const parent = await countRows(
      context.handle,
      assumption.references.table,
      assumption.references.column,
      value,
    );
    if (parent && parent.rows > 0) {
      await removeCreated(context, operation, sent.user, [sent.exchange]);
      return { ...base, outcome: "rejected", reason: "the value exists in the referenced table after all" };
    }
  }
  await removeCreated(context, operation, sent.user, [sent.exchange]);
  if (verified && verified.rows === 0) {
    return {
      ...base,
      outcome: "rejected",
      reason: `accepted, but no ${assumption.table} row holds that ${column}`,
    };
  }
  if (!verified && !findTable(context.tables, assumption.table))
    return skipped("the table could not be checked");
  return {
    ...base,
    outcome: "confirmed",
    reason: "the application accepted and stored it",
    ...(verified ? { verified } : {}),
  };
}

/** Generated strings are lower-cased (applications often normalise them) and must carry the seed. */
export function normalizeValue(value: unknown, seed: string): unknown {
  if (typeof value !== "string") return typeof value === "number" ? value : `qaas-${seed}`;
  const lower = value.toLowerCase();
  if (lower.includes(seed)) return lower;
  const at = lower.indexOf("@");
  if (at > 0) return `${lower.slice(0, at)}.${seed}${lower.slice(at)}`;
  return `${lower}-${seed}`.slice(0, 120);
}
