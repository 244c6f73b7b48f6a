import type { Operation, Table } from "../../map/system-map.ts";
import { hasSegment, isItemPath, isSafeWrite } from "../api/operation-index.ts";
import { sendAsRightRole, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, requestSchema } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { extractId, uniqueSeed } from "../api/resource-factory.ts";
import type { ReproScript, ReproStep } from "../evidence/failing-test.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { matchesTemplate, pathOfUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { DataAssumption } from "./assumptions.ts";
import { findTable, nameForms, pathFitsTable, propertyMatchesColumn, snakeCase } from "./naming.ts";
import { RecordCreator } from "./record-creator.ts";
import type { DatabaseHandle } from "./target-database.ts";
import { quoteName, readOnly } from "./target-database.ts";
import { countRows } from "./trial-values.ts";

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
    if (hasSegment(operation.path, CREDENTIAL_SEGMENT)) continue;
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

export function prepareWith(
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

export function stepOf(
  name: string,
  prepared: PreparedRequest,
  user: string | undefined,
  swaps: Array<[string, string]>,
): ReproStep {
  const swap = (text: string) => swaps.reduce((current, [from, to]) => current.split(from).join(to), text);
  // The trial's own swaps say what is unique; the prepared seed is not swapped a second time.
  const step = stepFromPrepared(name, { ...prepared, seed: undefined }, user);
  step.path = swap(step.path);
  if (step.body !== undefined) step.body = swap(step.body);
  return step;
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
    prepareWith(context, operation, property, value, user, seed),
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
  // An operation that does not name the table may write it or not: its refusal says nothing about it.
  if (!isSuccess(sent.exchange) && chosen.fit === 0) {
    return {
      ...base,
      outcome: "skipped",
      reason: `${operation.method} ${operation.path} refused it (${statusOf(sent.exchange)}), but it does not name ${assumption.table}`,
    };
  }
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
