import type { Operation, Table } from "../../map/system-map.ts";
import { isSafeWrite, operationKey } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { numberOf, propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import { checkMentions, NON_NEGATIVE, VALUE_SET } from "./assumptions.ts";
import { columnForProperty, findTable, tableForPath } from "./naming.ts";
import type { OwnedRecord } from "./record-creator.ts";
import { collectionName, RecordCreator } from "./record-creator.ts";
import { columnOfRow } from "./trial-values.ts";

// Domains the API document (or, for an undocumented operation, its handler's own checks) declares for what
// a request writes — `enum` for a state, `minimum` for an amount — that the column storing it does not
// enforce with a CHECK. The document says which values are
// legal; whether the application (or the database) keeps the others out is then tried with one request
// carrying an illegal value, read back from the row it created.

export interface DeclaredDomain {
  /** `POST /boards/{id}/cards`: the operation whose request schema declares it. */
  operation: string;
  property: string;
  values?: string[];
  minimum?: number;
}

const MAX_VALUES = 20;

function lowerBound(schema: JsonSchema): number | undefined {
  const minimum = numberOf(schema.minimum);
  if (typeof schema.exclusiveMinimum === "number") return schema.exclusiveMinimum;
  return minimum;
}

function writesTable(operation: Operation, tables: readonly Table[]): Table | undefined {
  const method = operation.method.toUpperCase();
  if (!["POST", "PUT", "PATCH"].includes(method) || !isSafeWrite(operation)) return undefined;
  // `/api/logistics/sprints` beside `/api/billing/sprints`: the path's other words pick the table.
  return collectionName(operation.path) ? tableForPath(tables, operation.path) : undefined;
}

/** The declared domains of every writing operation, as assumptions about the columns they fill. */
export function declaredDomainAssumptions(
  operations: readonly Operation[],
  tables: readonly Table[],
  document = "the API document",
): DataAssumption[] {
  const byId = new Map<string, DataAssumption>();
  for (const operation of operations) {
    const table = writesTable(operation, tables);
    const schema = requestSchema(operation);
    if (!table || !schema) continue;
    for (const [property, propertySchema] of Object.entries(propertiesOf(schema))) {
      const column = columnForProperty(table, property);
      const definition = table.columns.find((entry) => entry.name === column);
      if (!column || !definition || definition.primary_key) continue;
      if (table.foreign_keys.some((key) => key.columns.includes(column))) continue;
      const values = Array.isArray(propertySchema.enum)
        ? propertySchema.enum.filter((value): value is string => typeof value === "string")
        : [];
      const type = schemaType(propertySchema);
      const minimum = type === "integer" || type === "number" ? lowerBound(propertySchema) : undefined;
      const declared: DeclaredDomain = { operation: operationKey(operation), property };
      let assumption: Omit<DataAssumption, "id" | "sites"> | undefined;
      if (
        values.length >= 2 &&
        values.length <= MAX_VALUES &&
        /char|text|string|enum|^$/i.test(definition.type)
      ) {
        const check = checkMentions(table, column, VALUE_SET);
        assumption = {
          kind: "allowed-values",
          table: table.name,
          columns: [column],
          values: [...values].sort(),
          enforced: check !== undefined,
          ...(check ? { enforcedBy: `CHECK (${check})` } : {}),
          reason: `${declared.operation} declares ${property} as one of ${values.map((value) => `'${value}'`).join(", ")}`,
        };
        declared.values = values;
      } else if (
        minimum !== undefined &&
        minimum >= 0 &&
        /int|real|num|dec|float|double|money|^$/i.test(definition.type)
      ) {
        const check = checkMentions(table, column, NON_NEGATIVE);
        assumption = {
          kind: "non-negative",
          table: table.name,
          columns: [column],
          enforced: check !== undefined,
          ...(check ? { enforcedBy: `CHECK (${check})` } : {}),
          reason: `${declared.operation} declares ${property} with a minimum of ${minimum}`,
        };
        declared.minimum = minimum;
      }
      if (!assumption) continue;
      const id = `${assumption.kind}:${table.name}.${column}`;
      // Undocumented operations declare a domain through the checks their handler makes (the map reads
      // `not 0 <= x <= 100: return 400` as bounds); either way the declaration is not code that relies on it.
      const site = operation.documented
        ? { file: document, line: 0, via: `request schema of ${declared.operation} (${property})` }
        : {
            file: operation.handler?.file ?? "the source",
            line: 0,
            via: `checks the handler of ${declared.operation} makes (${property})`,
          };
      const existing = byId.get(id);
      if (existing) {
        existing.declared = [...(existing.declared ?? []), declared];
        existing.sites.push(site);
        continue;
      }
      byId.set(id, { ...assumption, id, sites: [site], declared: [declared] });
    }
  }
  return [...byId.values()];
}

/** Code-inferred and declared assumptions together: one per id, the declarations attached. */
export function mergeDeclared(inferred: DataAssumption[], declared: DataAssumption[]): DataAssumption[] {
  const byId = new Map(inferred.map((assumption) => [assumption.id, assumption]));
  for (const assumption of declared) {
    const existing = byId.get(assumption.id);
    if (!existing) {
      byId.set(assumption.id, assumption);
      continue;
    }
    existing.declared = [...(existing.declared ?? []), ...(assumption.declared ?? [])];
    existing.sites.push(...assumption.sites);
    if (assumption.values)
      existing.values = [...new Set([...(existing.values ?? []), ...assumption.values])].sort();
  }
  return [...byId.values()].sort((left, right) => left.id.localeCompare(right.id));
}

function illegalValue(domain: DeclaredDomain, seed: string, schema: JsonSchema): unknown {
  if (domain.values) return `qaas_invalid_${seed}`;
  const below = (domain.minimum ?? 0) - 1;
  return schemaType(schema) === "integer" ? Math.floor(below) : below - 0.5;
}

function sameValue(stored: unknown, sent: unknown): boolean {
  if (typeof sent === "number") return Number(stored) === sent;
  return String(stored).toLowerCase() === String(sent).toLowerCase();
}

/**
 * One write with a value outside the declared domain, through the declaring operation (a create, or an
 * update of a record the probe created), then the stored value read back by the record's id.
 */
export async function apiDomainTrial(context: TrialContext, assumption: DataAssumption): Promise<ApiTrial> {
  const skipped = (reason: string): ApiTrial => ({ outcome: "skipped", reason, exchanges: [] });
  const column = assumption.columns[0]!;
  const table = findTable(context.tables, assumption.table);
  const key = table?.columns.find((entry) => entry.primary_key)?.name ?? "id";
  const creator = new RecordCreator(context.run);
  const operations = context.run.map.operations;
  const declarations = (assumption.declared ?? [])
    .map((domain) => ({
      domain,
      operation: operations.find((entry) => operationKey(entry) === domain.operation),
    }))
    .filter(
      (entry): entry is { domain: DeclaredDomain; operation: Operation } => entry.operation !== undefined,
    )
    .sort(
      (left, right) => Number(right.operation.method === "POST") - Number(left.operation.method === "POST"),
    );
  // The record's own updates write the same property whether or not the document says so for them; the
  // value is chosen from the declaring create's schema (an update read from code has untyped fields).
  const declaringSchema = new Map<Operation, Operation>();
  for (const { domain, operation } of [...declarations]) {
    if (operation.method.toUpperCase() !== "POST") continue;
    const family = creator.families.find((candidate) => candidate.create === operation);
    const item = family ? creator.itemFamilyOf(family) : undefined;
    for (const update of item?.updates ?? []) {
      if (declarations.some((entry) => entry.operation === update) || !isSafeWrite(update)) continue;
      const carried = Object.keys(propertiesOf(requestSchema(update) ?? {}));
      if (carried.length > 0 && !carried.includes(domain.property)) continue;
      declarations.push({ domain: { ...domain, operation: operationKey(update) }, operation: update });
      declaringSchema.set(update, operation);
    }
  }
  const reasons: string[] = [];
  // A create that validates says nothing of an update that may not (Rails `update_column`, Django
  // `QuerySet.update`, a PATCH handler written later): every declaring write is tried before a refusal stands.
  let refused: ApiTrial | undefined;
  try {
    for (const { domain, operation } of declarations.slice(0, 4)) {
      const seed = uniqueSeed();
      const schema =
        propertiesOf(requestSchema(declaringSchema.get(operation) ?? operation) ?? {})[domain.property] ?? {};
      const value = illegalValue(domain, seed, schema);
      const written = await writeIllegal(context, creator, operation, domain.property, value);
      if (typeof written === "string") {
        reasons.push(written);
        continue;
      }
      const { record, exchange, user } = written;
      const exchanges = [{ label: "out-of-domain", exchange }];
      const what = domain.values
        ? `${domain.property} = '${String(value)}' (declared: ${domain.values.join(", ")})`
        : `${domain.property} = ${String(value)} (declared minimum: ${domain.minimum})`;
      if (!isSuccess(exchange)) {
        refused ??= {
          outcome: "rejected",
          reason: `${domain.operation} refused ${what} (${statusOf(exchange)})`,
          operation,
          user,
          exchanges,
          value,
        };
        continue;
      }
      const row = await columnOfRow(context.handle, assumption.table, key, record.id, column);
      let stored: boolean | undefined = row?.found ? sameValue(row.value, value) : undefined;
      if (stored === undefined) {
        const read = await creator.read(record, user);
        const json = (read && isSuccess(read) ? read.response?.json : exchange.response?.json) as
          | Record<string, unknown>
          | undefined;
        if (json && typeof json === "object" && domain.property in json)
          stored = sameValue(json[domain.property], value);
        if (read) exchanges.push({ label: "read-back", exchange: read });
      }
      if (stored === undefined) {
        reasons.push(`${domain.operation} accepted ${what}, but the stored value could not be read back`);
        continue;
      }
      if (!stored)
        return {
          outcome: "rejected",
          reason: `${domain.operation} accepted ${what} but stored another value`,
          operation,
          user,
          exchanges,
          value,
        };
      return {
        outcome: "confirmed",
        reason: `${domain.operation} accepted and stored ${what}`,
        operation,
        user,
        exchanges,
        value,
        ...(row?.found ? { verified: { query: row.query, rows: 1 } } : {}),
      };
    }
  } finally {
    await creator.cleanUp();
  }
  return refused ?? skipped(reasons.join("; ") || "no operation declares it");
}

/** Sends `property = value` through `operation`: as the create itself, or as an update of an own record. */
async function writeIllegal(
  context: TrialContext,
  creator: RecordCreator,
  operation: Operation,
  property: string,
  value: unknown,
): Promise<{ record: OwnedRecord; exchange: HttpExchange; user: string | undefined } | string> {
  const method = operation.method.toUpperCase();
  if (method === "POST") {
    const family = creator.families.find((candidate) => candidate.create === operation);
    if (!family || !creator.creatable(family)) return `${operationKey(operation)} may not be called`;
    for (const user of context.users) {
      const attempt = await creator.create(family, user, { overrides: { [property]: value } });
      if (!attempt.exchange) continue;
      const status = statusOf(attempt.exchange);
      if (status === 401 || status === 403) continue;
      if (attempt.record) return { record: attempt.record, exchange: attempt.exchange, user };
      if (!isSuccess(attempt.exchange))
        return { record: placeholder(family, user, attempt), exchange: attempt.exchange, user };
      return `${operationKey(operation)} answered no id`;
    }
    return `${operationKey(operation)} was refused to every user`;
  }
  const family = creator.families.find((candidate) => candidate.updates.includes(operation));
  const creation = family ? creator.creationFamilyOf(family) : undefined;
  if (!family || !creation) return `no record can be created to update through ${operationKey(operation)}`;
  for (const user of context.users) {
    const attempt = await creator.create(creation, user);
    const record = attempt.record;
    if (!record?.itemValues || creator.itemFamilyOf(creation) !== family) continue;
    const exchange = await creator.update(record, operation, user, { [property]: value });
    if (exchange) return { record, exchange, user };
  }
  return `no record of the probe's own could be updated through ${operationKey(operation)}`;
}

function placeholder(
  family: OwnedRecord["createFamily"],
  user: string | undefined,
  attempt: { request?: OwnedRecord["request"]; exchange?: HttpExchange },
): OwnedRecord {
  return {
    id: "",
    createFamily: family,
    itemFamily: undefined,
    owner: user,
    collectionValues: {},
    itemValues: undefined,
    parents: [],
    request: attempt.request!,
    exchange: attempt.exchange!,
    markers: [],
    removed: true,
  };
}
