import type { Table } from "../../map/system-map.ts";
import type { CodeAccessScan, DataAccess } from "../code-access/data-access-types.ts";
import type { StatementShape } from "../code-access/sql-shape.ts";
import { analyzeStatement } from "../code-access/sql-shape.ts";
import type { DeclaredDomain } from "./declared-domains.ts";
import { namedReferences } from "./named-references.ts";
import { columnForProperty, findTable, tableForName } from "./naming.ts";
import type { PairValues } from "./ordered-pairs.ts";

// Assumptions the code makes about its data, read from how it queries, compared with what the schema
// enforces. Only an assumption the schema does NOT enforce is worth confirming; the rest are listed so a
// person (or a model) can see what was checked.

export type AssumptionKind =
  | "unique"
  | "foreign-key"
  | "non-negative"
  | "not-null"
  | "allowed-values"
  | "ordered";

export interface AssumptionSite {
  file: string;
  line: number;
  via: string;
  sql?: string;
}

export interface DataAssumption {
  /** `unique:users.email`: stable, and what tools take to name an assumption. */
  id: string;
  kind: AssumptionKind;
  table: string;
  columns: string[];
  references?: { table: string; column: string };
  values?: string[];
  enforced: boolean;
  enforcedBy?: string;
  /** Check-then-insert in one handler: uniqueness the code enforces itself (and a race can break). */
  checkedInCode?: boolean;
  /** References: the code deletes the children by this column itself (a cascade in code). */
  cascadedInCode?: boolean;
  /**
   * References inferred from a column's name alone (`order_id` beside a table `orders`): only the
   * application leaving an orphan confirms it, never a scratch copy accepting one.
   */
  namedOnly?: boolean;
  /**
   * Uniqueness among the rows with these literal values only ("one active per owner": a partial unique
   * index `… WHERE status = 'active'`); the literal columns are part of `columns`.
   */
  where?: Record<string, string>;
  /** Ordered pairs (`columns` = lower, upper): what their values are, to choose a valid and an inverted pair. */
  pair?: PairValues;
  /** The request schemas of the API document that declare this column's domain. */
  declared?: DeclaredDomain[];
  sites: AssumptionSite[];
  reason: string;
}

interface Collected {
  byId: Map<string, DataAssumption>;
  /** `table|col,col` of lookups the code also reads as many rows: not a uniqueness assumption. */
  readAsMany: Set<string>;
}

function siteOf(access: DataAccess): AssumptionSite {
  return {
    file: access.file,
    line: access.line,
    via: access.via,
    ...(access.sql ? { sql: access.sql } : {}),
  };
}

function add(
  collected: Collected,
  assumption: Omit<DataAssumption, "id" | "sites">,
  site: AssumptionSite,
): void {
  const id = `${assumption.kind}:${assumption.table}.${assumption.columns.join(",")}`;
  const existing = collected.byId.get(id);
  if (existing) {
    if (!existing.sites.some((known) => known.file === site.file && known.line === site.line))
      existing.sites.push(site);
    if (assumption.values) existing.values = [...new Set([...(existing.values ?? []), ...assumption.values])];
    existing.checkedInCode ||= assumption.checkedInCode ?? false;
    return;
  }
  collected.byId.set(id, { ...assumption, id, sites: [site] });
}

/** Resolves `alias.column` / `column` of a statement to a schema table and column. */
function resolveColumn(
  shape: StatementShape,
  tables: readonly Table[],
  reference: { qualifier?: string; column: string },
): { table: Table; column: string } | undefined {
  const candidates = reference.qualifier
    ? shape.tables.filter(
        (entry) => entry.alias === reference.qualifier || entry.name === reference.qualifier,
      )
    : shape.tables;
  for (const entry of candidates) {
    const table = findTable(tables, entry.name);
    const column = table?.columns.find((candidate) => candidate.name.toLowerCase() === reference.column);
    if (table && column) return { table, column: column.name };
  }
  return undefined;
}

/** What already guarantees that the `columns` of `table` are unique, if anything. */
export function uniquenessEnforcedBy(table: Table, columns: readonly string[]): string | undefined {
  const wanted = new Set(columns.map((column) => column.toLowerCase()));
  const primary = table.columns
    .filter((column) => column.primary_key)
    .map((column) => column.name.toLowerCase());
  if (primary.length > 0 && primary.every((column) => wanted.has(column))) return "the primary key";
  const index = table.indexes.find(
    (entry) =>
      entry.unique &&
      entry.columns.length > 0 &&
      entry.columns.every((column) => wanted.has(column.toLowerCase())),
  );
  return index ? `unique index ${index.name} (${index.columns.join(", ")})` : undefined;
}

function isUniqueColumn(table: Table, column: string): boolean {
  return uniquenessEnforcedBy(table, [column]) !== undefined;
}

export function checkMentions(
  table: Table,
  column: string,
  pattern: (name: string) => RegExp,
): string | undefined {
  return table.checks.find((check) => pattern(column).test(check));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
export const NON_NEGATIVE = (name: string) =>
  new RegExp(
    `\\b${escapeRegExp(name)}\\b\\s*(>=\\s*0|>\\s*-?0|between\\s+0)|\\b0\\s*(<=|<)\\s*"?${escapeRegExp(name)}\\b`,
    "i",
  );
export const VALUE_SET = (name: string) =>
  new RegExp(`\\b${escapeRegExp(name)}\\b"?\\s*(in\\s*\\(|=\\s*')`, "i");
// `SELECT COUNT(*)`, `SELECT COALESCE(MAX(n), 0) + 1`: a number computed over rows, not a row looked up.
const COUNTING =
  /^\s*select\s+(distinct\s+)?((coalesce|ifnull|nullif|round|abs|cast)\s*\(\s*)*(count|sum|max|min|avg|total)\s*\(/i;
/** Columns naming whose rows they are (the caller's scope), not what a row is. */
const RANGE_OPERATORS = new Set(["<", ">", "<=", ">=", "between"]);
const SCOPE_KEY =
  /^(tenant|org|organization|organisation|account|workspace|team|company|owner|user|customer|member|group|site)_?id$/i;
const STATE_VALUE = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;
const FREE_TEXT =
  /(name|title|email|description|body|text|note|comment|message|content|url|path|label|slug|address)$/i;

export function inferAssumptions(tables: readonly Table[], scan: CodeAccessScan): DataAssumption[] {
  const collected: Collected = { byId: new Map(), readAsMany: new Set() };
  const insertsByTable = new Map<string, Array<{ columns: string[]; site: AssumptionSite }>>();
  /** `table|column` of `DELETE FROM table WHERE column = ?`: children the code removes by their parent. */
  const deletedBy = new Set<string>();
  const lookupsByScope = new Map<
    string,
    Array<{ table: string; columns: string[]; where?: Record<string, string> }>
  >();
  const literalValues = new Map<
    string,
    { table: Table; column: string; values: Set<string>; site: AssumptionSite }
  >();

  for (const access of scan.accesses) {
    const site = siteOf(access);
    if (access.kind === "orm") {
      inferOrmLookup(collected, tables, scan, access, site);
      continue;
    }
    const shape = analyzeStatement(access.sql ?? "");
    const primary = shape.tables[0] ? findTable(tables, shape.tables[0].name) : undefined;
    if (shape.verb === "select" && primary) {
      const keys = shape.equalities
        .filter((equality) => equality.literal === undefined)
        .map((equality) => resolveColumn(shape, tables, equality.column))
        .filter((resolved) => resolved?.table === primary)
        .map((resolved) => resolved!.column);
      const keyColumns = [...new Set(keys)].sort();
      // A range beside the equalities (`berth_id = ? AND starts_on < ? AND ends_on > ?`) finds an overlap,
      // not a row by its key.
      const ranged = shape.filters.some((filter) => RANGE_OPERATORS.has(filter.operator.toLowerCase()));
      // By a scope alone (`owner_id = ? AND status = 'active'`) the literal is part of the key: one row in
      // that state per scope. By a natural key (`email = ? AND status = 'active'`) the key is the column.
      const where = keyColumns.every((column) => SCOPE_KEY.test(column))
        ? literalKeys(shape, tables, primary)
        : undefined;
      if (keyColumns.length > 0 && where) {
        // `WHERE owner_id = ? AND status = 'active'` fetched as one: one such row per owner (conditional).
        const columns = [...new Set([...keyColumns, ...Object.keys(where)])].sort();
        if (access.cardinality !== "many" && !COUNTING.test(access.sql ?? "") && !shape.hasGroupBy) {
          const scoped = lookupsByScope.get(`${access.file}#${access.scope}`) ?? [];
          scoped.push({ table: primary.name, columns, where });
          lookupsByScope.set(`${access.file}#${access.scope}`, scoped);
        }
        if (access.cardinality === "many") collected.readAsMany.add(`${primary.name}|${columns.join(",")}`);
        if (
          access.cardinality === "single" &&
          !shape.aggregateOnly &&
          !shape.hasOrderBy &&
          !shape.hasGroupBy &&
          !ranged
        )
          addUnique(collected, primary, columns, site, "read as a single row", false, where);
      }
      // With a literal condition the key is the conditional one above, not the parameters alone.
      if (keyColumns.length > 0 && !where) {
        // An existence check (`SELECT 1`/`SELECT id` … one row), not a count against a quota or a listing.
        const existenceCheck =
          access.cardinality !== "many" && !COUNTING.test(access.sql ?? "") && !shape.hasGroupBy;
        if (existenceCheck) {
          const scoped = lookupsByScope.get(`${access.file}#${access.scope}`) ?? [];
          scoped.push({ table: primary.name, columns: keyColumns });
          lookupsByScope.set(`${access.file}#${access.scope}`, scoped);
        }
        if (access.cardinality === "many")
          collected.readAsMany.add(`${primary.name}|${keyColumns.join(",")}`);
        const lookup =
          access.cardinality === "single" &&
          !shape.aggregateOnly &&
          !shape.hasOrderBy &&
          !shape.hasGroupBy &&
          !ranged;
        if (lookup) addUnique(collected, primary, keyColumns, site, "read as a single row");
      }
    }
    for (const join of shape.joins) inferForeignKey(collected, tables, shape, join, site);
    if (shape.verb === "update" && primary) {
      for (const assignment of shape.assignments) {
        if (assignment.kind !== "decrement" || assignment.guarded) continue;
        const column = primary.columns.find((entry) => entry.name.toLowerCase() === assignment.column);
        if (!column) continue;
        const check = checkMentions(primary, column.name, NON_NEGATIVE);
        add(
          collected,
          {
            kind: "non-negative",
            table: primary.name,
            columns: [column.name],
            enforced: check !== undefined,
            ...(check ? { enforcedBy: `CHECK (${check})` } : {}),
            reason: `decremented with \`SET ${column.name} = ${column.name} - …\` and no lower bound in the WHERE clause`,
          },
          site,
        );
      }
    }
    if (shape.verb === "insert" && primary) {
      const list = insertsByTable.get(primary.name) ?? [];
      list.push({ columns: shape.insertColumns, site });
      insertsByTable.set(primary.name, list);
      const scoped = lookupsByScope.get(`${access.file}#${access.scope}`) ?? [];
      for (const lookup of scoped) {
        if (lookup.table !== primary.name) continue;
        if (!lookup.columns.every((column) => shape.insertColumns.includes(column.toLowerCase()))) continue;
        addUnique(
          collected,
          primary,
          lookup.columns,
          site,
          "checked for an existing row before inserting",
          true,
          lookup.where,
        );
      }
    }
    if (shape.verb === "delete" && primary) {
      for (const equality of shape.equalities) {
        const resolved = resolveColumn(shape, tables, equality.column);
        if (resolved?.table === primary) deletedBy.add(`${primary.name}|${resolved.column}`);
      }
    }
    collectLiterals(shape, tables, primary, site, literalValues);
  }
  for (const assumption of collected.byId.values()) {
    if (assumption.kind === "foreign-key" && deletedBy.has(`${assumption.table}|${assumption.columns[0]}`))
      assumption.cascadedInCode = true;
  }
  for (const { assumption, site } of namedReferences(tables, insertsByTable)) {
    if (!collected.byId.has(`foreign-key:${assumption.table}.${assumption.columns[0]}`))
      add(collected, assumption, site);
  }
  inferNotNull(collected, tables, insertsByTable);
  inferAllowedValues(collected, scan, tables, literalValues);
  const kept = [...collected.byId.values()].filter(
    (assumption) =>
      assumption.kind !== "unique" ||
      assumption.checkedInCode ||
      !collected.readAsMany.has(`${assumption.table}|${assumption.columns.join(",")}`),
  );
  const keptIds = new Set(kept.map((assumption) => assumption.id));
  return (
    kept
      // A conditional key is only worth stating when the plain one (without the literal columns) is not.
      .filter((assumption) => {
        if (!assumption.where) return true;
        const plain = assumption.columns.filter((column) => !(column in assumption.where!));
        return !keptIds.has(`unique:${assumption.table}.${plain.join(",")}`);
      })
      .sort((left, right) => left.id.localeCompare(right.id))
  );
}

function addUnique(
  collected: Collected,
  table: Table,
  columns: string[],
  site: AssumptionSite,
  how: string,
  checkedInCode = false,
  where?: Record<string, string>,
): void {
  const enforcedBy = uniquenessEnforcedBy(table, columns);
  add(
    collected,
    {
      kind: "unique",
      table: table.name,
      columns,
      enforced: enforcedBy !== undefined,
      ...(enforcedBy ? { enforcedBy } : {}),
      ...(checkedInCode ? { checkedInCode } : {}),
      ...(where ? { where } : {}),
      reason: where
        ? `${table.name} looked up by ${columns.filter((column) => !(column in where)).join(" + ")} among rows with ${Object.entries(
            where,
          )
            .map(([column, value]) => `${column} = '${value}'`)
            .join(" and ")}, and ${how}`
        : `${table.name} looked up by ${columns.join(" + ")} and ${how}`,
    },
    site,
  );
}

function inferOrmLookup(
  collected: Collected,
  tables: readonly Table[],
  scan: CodeAccessScan,
  access: DataAccess,
  site: AssumptionSite,
): void {
  if (access.cardinality !== "single" || !access.model || !access.columns) return;
  const table = tableForName(tables, access.model, scan.modelTables);
  if (!table) return;
  const columns = access.columns.map((property) =>
    columnForProperty(table, property, access.model, scan.modelColumns),
  );
  if (columns.some((column) => column === undefined)) return;
  addUnique(
    collected,
    table,
    [...new Set(columns as string[])].sort(),
    site,
    `fetched as one with ${access.via}`,
  );
}

function inferForeignKey(
  collected: Collected,
  tables: readonly Table[],
  shape: StatementShape,
  join: StatementShape["joins"][number],
  site: AssumptionSite,
): void {
  const left = resolveColumn(shape, tables, join.left);
  const right = resolveColumn(shape, tables, join.right);
  if (!left || !right || left.table === right.table) return;
  const leftKey = isUniqueColumn(left.table, left.column);
  const rightKey = isUniqueColumn(right.table, right.column);
  if (leftKey === rightKey) return;
  const [child, parent] = leftKey ? [right, left] : [left, right];
  const declared = child.table.foreign_keys.find(
    (key) =>
      key.columns.length === 1 &&
      key.columns[0]!.toLowerCase() === child.column.toLowerCase() &&
      key.references_table.toLowerCase() === parent.table.name.toLowerCase(),
  );
  add(
    collected,
    {
      kind: "foreign-key",
      table: child.table.name,
      columns: [child.column],
      references: { table: parent.table.name, column: parent.column },
      enforced: declared !== undefined,
      ...(declared ? { enforcedBy: `foreign key ${child.column} → ${parent.table.name}` } : {}),
      reason: `joined \`${child.table.name}.${child.column} = ${parent.table.name}.${parent.column}\`: every ${child.table.name} row is expected to have its ${parent.table.name}`,
    },
    site,
  );
}

function collectLiterals(
  shape: StatementShape,
  tables: readonly Table[],
  primary: Table | undefined,
  site: AssumptionSite,
  into: Map<string, { table: Table; column: string; values: Set<string>; site: AssumptionSite }>,
): void {
  const record = (table: Table, column: string, values: string[]) => {
    const key = `${table.name}.${column}`;
    const entry = into.get(key) ?? { table, column, values: new Set<string>(), site };
    for (const value of values) entry.values.add(value);
    into.set(key, entry);
  };
  for (const comparison of shape.literalComparisons) {
    const resolved = resolveColumn(shape, tables, comparison.column);
    if (resolved) record(resolved.table, resolved.column, comparison.values);
  }
  if (!primary) return;
  for (const assignment of shape.assignments) {
    if (assignment.kind === "value" && assignment.literal !== undefined) {
      const column = columnForProperty(primary, assignment.column);
      if (column) record(primary, column, [assignment.literal]);
    }
  }
  for (const [name, value] of Object.entries(shape.insertLiterals)) {
    const column = columnForProperty(primary, name);
    if (column) record(primary, column, [value]);
  }
}

/** A column every INSERT into its table writes, yet the schema lets be NULL. */
function inferNotNull(
  collected: Collected,
  tables: readonly Table[],
  insertsByTable: Map<string, Array<{ columns: string[]; site: AssumptionSite }>>,
): void {
  for (const [name, inserts] of insertsByTable) {
    const table = findTable(tables, name);
    if (!table || inserts.length === 0) continue;
    for (const column of table.columns) {
      if (column.primary_key || !column.nullable) continue;
      if (column.default !== null && column.default !== undefined) continue;
      if (!inserts.every((insert) => insert.columns.includes(column.name.toLowerCase()))) continue;
      for (const insert of inserts) {
        add(
          collected,
          {
            kind: "not-null",
            table: table.name,
            columns: [column.name],
            enforced: false,
            reason: `every INSERT into ${table.name} writes ${column.name}, but the column accepts NULL`,
          },
          insert.site,
        );
      }
    }
  }
}

/** A column the code compares with (or sets to) a small fixed set of strings, without a CHECK. */
function inferAllowedValues(
  collected: Collected,
  scan: CodeAccessScan,
  tables: readonly Table[],
  literalValues: Map<string, { table: Table; column: string; values: Set<string>; site: AssumptionSite }>,
): void {
  for (const comparison of scan.comparisons) {
    const owners = tables.filter((table) =>
      table.columns.some((column) => column.name === comparison.property),
    );
    const withSql = owners.filter((table) => literalValues.has(`${table.name}.${comparison.property}`));
    const targets = owners.length === 1 ? owners : withSql;
    for (const table of targets) {
      const key = `${table.name}.${comparison.property}`;
      const entry = literalValues.get(key) ?? {
        table,
        column: comparison.property,
        values: new Set<string>(),
        site: { file: comparison.file, line: comparison.line, via: "comparison with string literals" },
      };
      for (const value of comparison.values) entry.values.add(value);
      literalValues.set(key, entry);
    }
  }
  for (const entry of literalValues.values()) {
    const values = [...entry.values].filter((value) => STATE_VALUE.test(value));
    if (values.length < 2 || values.length > 12 || values.length !== entry.values.size) continue;
    const column = entry.table.columns.find((candidate) => candidate.name === entry.column);
    if (
      !column ||
      column.primary_key ||
      FREE_TEXT.test(column.name) ||
      !/char|text|string|enum|^$/i.test(column.type)
    )
      continue;
    if (entry.table.foreign_keys.some((key) => key.columns.includes(column.name))) continue;
    const check = checkMentions(entry.table, column.name, VALUE_SET);
    add(
      collected,
      {
        kind: "allowed-values",
        table: entry.table.name,
        columns: [column.name],
        values: values.sort(),
        enforced: check !== undefined,
        ...(check ? { enforcedBy: `CHECK (${check})` } : {}),
        reason: `the code only ever uses ${values.map((value) => `'${value}'`).join(", ")} for ${entry.table.name}.${column.name}`,
      },
      entry.site,
    );
  }
}

/** `column = 'literal'` conditions of a statement on its own table, or undefined when there are none. */
function literalKeys(
  shape: StatementShape,
  tables: readonly Table[],
  primary: Table,
): Record<string, string> | undefined {
  const where: Record<string, string> = {};
  for (const equality of shape.equalities) {
    if (equality.literal === undefined) continue;
    const resolved = resolveColumn(shape, tables, equality.column);
    if (resolved?.table === primary) where[resolved.column] = equality.literal;
  }
  return Object.keys(where).length > 0 ? where : undefined;
}
