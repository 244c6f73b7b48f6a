import type { Operation, Table } from "../../map/system-map.ts";
import { resourceFamilies } from "../api/operation-index.ts";
import { sendAsRightRole, sendPrepared } from "../api/probe-support.ts";
import { requestSchema } from "../api/request-builder.ts";
import { extractId, uniqueSeed } from "../api/resource-factory.ts";
import type { ReproScript } from "../evidence/failing-test.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { toTemplateForm } from "../http/target-url.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import { creationOperationsFor, prepareWith, propertySchema, removeCreated, stepOf } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import { findTable, nameForms, propertyMatchesColumn, snakeCase } from "./naming.ts";
import { countRows, distinctValues, uniqueValueFor } from "./trial-values.ts";
import { updateDuplicateTrial } from "./update-duplicate.ts";

// Duplicates through the application: two creations with one value of a column the code reads as a key —
// or, for a key of several columns, one carried by the request while the others are implied by who sends
// it (the tenant, the owner) or by the parent in the path — then a read-only look at what was stored.

// Columns a request does not carry but that two requests of one user under one parent share: the
// caller's scope (tenant, organisation, owner…), filled in by the application from the session.
const SCOPE_COLUMN =
  /^(tenant|org|organization|organisation|account|workspace|team|company|owner|user|customer|member|group|site)_?id$/i;

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
    (segment, index) => segment.startsWith("{") && index > 0 && names.has(snakeCase(segments[index - 1]!)),
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
    // A conditional key ("one active per owner") collides only on its literal value.
    const value =
      assumption.where?.[column] ?? uniqueValueFor(propertySchema(operation, property), seed, property);
    const first = await sendAsRightRole(context.run, context.users, (user) =>
      prepareWith(context, operation, property, value, user, seed),
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
    const secondRequest = await prepareWith(context, operation, property, value, first.user, secondSeed);
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
      // The create checks; the record's own update may not.
      const renamed = await updateDuplicateTrial(context, assumption, { operation, property, column });
      if (renamed?.outcome === "confirmed") return renamed;
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
