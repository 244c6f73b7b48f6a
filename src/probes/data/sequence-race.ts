import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Table } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { operationKey } from "../api/operation-index.ts";
import { analyzeStatement } from "../code-access/sql-shape.ts";
import { tokenizeSql } from "../code-access/sql-tokens.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { TrialContext } from "./api-trials.ts";
import type { DataAnalysis } from "./data-analysis.ts";
import { propertyMatchesColumn, tableForName } from "./naming.ts";
import type { OwnedRecord } from "./record-creator.ts";
import { collectionName, RecordCreator } from "./record-creator.ts";
import { quoteName, readOnly } from "./target-database.ts";
import { columnOfRow } from "./trial-values.ts";

// A number the application hands out per parent (the 1st, 2nd, 3rd card of a board) and computes in code —
// `SELECT MAX(n) + 1`, a counter read from the parent, a COUNT — is only unique while requests come one at
// a time. The probe finds such a column by behaviour (a fresh parent of its own gets 1, 2, 3 in order) on
// a column the code writes from a bound value, fires concurrent creations under that parent and looks for
// a number handed out twice. Only records the probe created are involved; all are deleted afterwards.

const SEQUENTIAL = 3;
const MAX_FAMILIES = 3;
const ROUNDS = 3;

export interface SequenceOutcome {
  target: string;
  result: string;
}

interface Candidate {
  family: ResourceFamily;
  table: Table;
  columns: string[];
  /** The child's column that holds its parent's id. */
  parentColumn: string | undefined;
}

/** Whether the code's INSERTs into `table` write `column` from a bound value (the number is computed in code). */
function boundInCode(analysis: DataAnalysis, table: string, column: string): boolean | undefined {
  let seen = false;
  for (const access of analysis.scan.accesses) {
    if (!access.sql) continue;
    const shape = analyzeStatement(access.sql);
    if (shape.verb !== "insert" || shape.tables[0]?.name !== table.toLowerCase()) continue;
    const position = shape.insertColumns.indexOf(column.toLowerCase());
    if (position < 0) continue;
    seen = true;
    if (insertedItems(access.sql)[position] === "?") return true;
  }
  return seen ? false : undefined;
}

/** The items of an INSERT's VALUES (or SELECT) list, a bound parameter as `?`, anything else as text. */
function insertedItems(sql: string): string[] {
  const tokens = tokenizeSql(sql);
  const start = tokens.findIndex(
    (token, index) => (token.key === "values" && tokens[index + 1]?.text === "(") || token.key === "select",
  );
  if (start < 0) return [];
  const items: string[] = [];
  let depth = 0;
  let current: string[] = [];
  const open = tokens[start]!.key === "values" ? start + 2 : start + 1;
  for (let index = open; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    if (token.text === "(") depth += 1;
    if ((token.text === ")" && depth === 0) || (depth === 0 && token.key === "from")) break;
    if (token.text === ")") depth -= 1;
    if (token.text === "," && depth === 0) {
      items.push(current.join(" "));
      current = [];
      continue;
    }
    current.push(token.kind === "parameter" ? "?" : token.text);
  }
  items.push(current.join(" "));
  return items;
}

function candidates(analysis: DataAnalysis, creator: RecordCreator): Candidate[] {
  const found: Candidate[] = [];
  for (const family of creator.families) {
    if (family.parentParameters.length === 0 || !creator.creatable(family)) continue;
    const table = tableForName(analysis.tables, collectionName(family.collection));
    if (!table) continue;
    const parameter = family.parentParameters[family.parentParameters.length - 1]!;
    const parentFamily = creator.parentFamilyOf(family.collection, parameter);
    const parentTable = parentFamily
      ? tableForName(analysis.tables, collectionName(parentFamily.collection))
      : undefined;
    const parentColumn = table.foreign_keys.find(
      (key) =>
        key.columns.length === 1 &&
        parentTable &&
        key.references_table.toLowerCase() === parentTable.name.toLowerCase(),
    )?.columns[0];
    const columns = table.columns
      .filter(
        (column) =>
          !column.primary_key &&
          /int|num|serial|dec/i.test(column.type) &&
          !table.foreign_keys.some((key) => key.columns.includes(column.name)) &&
          !/_id$|Id$/.test(column.name) &&
          !uniquePerParent(table, column.name, parentColumn) &&
          boundInCode(analysis, table.name, column.name) !== false,
      )
      .map((column) => column.name);
    if (columns.length > 0) found.push({ family, table, columns, parentColumn });
  }
  return found.slice(0, MAX_FAMILIES);
}

/** A unique index over the column (alone or with the parent) already refuses the duplicate. */
function uniquePerParent(table: Table, column: string, parentColumn: string | undefined): boolean {
  return table.indexes.some(
    (index) =>
      index.unique &&
      index.columns.includes(column) &&
      index.columns.every((name) => name === column || name === parentColumn),
  );
}

/** The number a created record got in `column`: from its answer, else from its row. */
async function sequenceValue(
  trial: TrialContext,
  table: Table,
  record: OwnedRecord,
  column: string,
): Promise<number | undefined> {
  const json = record.exchange.response?.json;
  const objects = [json, ...(json && typeof json === "object" ? Object.values(json) : [])].filter(
    (value): value is Record<string, unknown> =>
      Boolean(value) && typeof value === "object" && !Array.isArray(value),
  );
  for (const object of objects) {
    const key = Object.keys(object).find((name) => propertyMatchesColumn(name, column));
    if (key !== undefined && typeof object[key] === "number") return object[key] as number;
  }
  const primary = table.columns.find((entry) => entry.primary_key)?.name ?? "id";
  const row = await columnOfRow(trial.handle, table.name, primary, record.id, column);
  return row?.found && row.value !== null && row.value !== undefined ? Number(row.value) : undefined;
}

export async function raceSequences(
  trial: TrialContext,
  analysis: DataAnalysis,
  concurrency: number,
): Promise<{ candidates: EnvelopeDraft[]; outcomes: SequenceOutcome[] }> {
  const creator = new RecordCreator(trial.run);
  const drafts: EnvelopeDraft[] = [];
  const outcomes: SequenceOutcome[] = [];
  if (!creator.writesAllowed) return { candidates: drafts, outcomes };
  try {
    for (const candidate of candidates(analysis, creator)) {
      const target = `sequence:${candidate.table.name} via ${operationKey(candidate.family.create!)}`;
      const result = await raceOne(trial, creator, candidate, Math.max(concurrency, 10));
      outcomes.push({ target, result: typeof result === "string" ? result : "duplicates handed out" });
      if (typeof result !== "string") drafts.push(result);
    }
  } finally {
    await creator.cleanUp();
  }
  return { candidates: drafts, outcomes };
}

async function raceOne(
  trial: TrialContext,
  creator: RecordCreator,
  candidate: Candidate,
  concurrency: number,
): Promise<EnvelopeDraft | string> {
  const { family, table } = candidate;
  const parameter = family.parentParameters[family.parentParameters.length - 1]!;
  const parentFamily = creator.parentFamilyOf(family.collection, parameter);
  const parentCreation = parentFamily ? creator.creationFamilyOf(parentFamily) : undefined;
  if (!parentCreation) return `no parent of the probe's own can be created for ${family.collection}`;
  let parent: OwnedRecord | undefined;
  let user: string | undefined;
  for (const candidateUser of trial.users) {
    parent = (await creator.create(parentCreation, candidateUser)).record;
    if (parent) {
      user = candidateUser;
      break;
    }
  }
  if (!parent) return "no parent could be created";
  const parentValues = { ...parent.collectionValues, ...(parent.itemValues ?? {}), [parameter]: parent.id };
  if (!pathParameterNames(family.collection).every((name) => parentValues[name] !== undefined))
    return "the parent's path values do not fill the collection path";
  const sequential: OwnedRecord[] = [];
  for (let index = 0; index < SEQUENTIAL; index += 1) {
    const record = (await creator.create(family, user, { parentValues })).record;
    if (!record) return `${operationKey(family.create!)} did not create under a fresh parent`;
    sequential.push(record);
  }
  const sequenceColumns: string[] = [];
  for (const column of candidate.columns) {
    const values = await Promise.all(sequential.map((record) => sequenceValue(trial, table, record, column)));
    const first = values[0];
    if (
      first !== undefined &&
      (first === 0 || first === 1) &&
      values.every((value, index) => value === first + index)
    )
      sequenceColumns.push(column);
  }
  if (sequenceColumns.length === 0) return "no column numbers the records of one parent 1, 2, 3";
  const column = sequenceColumns[0]!;
  for (let round = 1; round <= ROUNDS; round += 1) {
    const attempts = await creator.createTogether(family, user, concurrency, { parentValues });
    const created = attempts
      .map((attempt) => attempt.record)
      .filter((record): record is OwnedRecord => record !== undefined);
    const numbered = await Promise.all(
      created.map(async (record) => ({ record, value: await sequenceValue(trial, table, record, column) })),
    );
    const counts = new Map<number, OwnedRecord[]>();
    for (const { record, value } of numbered) {
      if (value === undefined) continue;
      counts.set(value, [...(counts.get(value) ?? []), record]);
    }
    const duplicated = [...counts.entries()].filter(([, records]) => records.length > 1);
    if (duplicated.length === 0) continue;
    const stored = await storedDuplicates(trial, candidate, column, parent.id);
    if (stored === 0) continue;
    return finding(trial, candidate, column, {
      parent,
      sequential,
      duplicated,
      sent: attempts.length,
      accepted: created.length,
      round,
      stored,
    });
  }
  return `${column} stayed unique under ${concurrency} concurrent creations (${ROUNDS} round(s))`;
}

/** Numbers stored more than once under the parent (read-only), when the database can be read. */
async function storedDuplicates(
  trial: TrialContext,
  candidate: Candidate,
  column: string,
  parentId: string,
): Promise<number | undefined> {
  if (!trial.handle || !candidate.parentColumn) return undefined;
  const placeholder = trial.handle.kind === "postgres" ? "$1" : "?";
  const query = `SELECT ${quoteName(column)} AS v, COUNT(*) AS n FROM ${quoteName(candidate.table.name)} WHERE CAST(${quoteName(candidate.parentColumn)} AS TEXT) = ${placeholder} GROUP BY ${quoteName(column)} HAVING COUNT(*) > 1`;
  const rows = await readOnly(trial.handle, (run) => run(query, [parentId]));
  return rows?.length;
}

function finding(
  trial: TrialContext,
  candidate: Candidate,
  column: string,
  seen: {
    parent: OwnedRecord;
    sequential: OwnedRecord[];
    duplicated: Array<[number, OwnedRecord[]]>;
    sent: number;
    accepted: number;
    round: number;
    stored: number | undefined;
  },
): EnvelopeDraft {
  const operation = candidate.family.create!;
  const key = operationKey(operation);
  const place = `${candidate.table.name}.${column}`;
  const [value, records] = seen.duplicated[0]!;
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [
    { label: "create-parent", exchange: seen.parent.exchange },
    ...seen.sequential.map((record, index) => ({
      label: `sequential-${index + 1}`,
      exchange: record.exchange,
    })),
    ...records
      .slice(0, 2)
      .map((record, index) => ({ label: `concurrent-duplicate-${index + 1}`, exchange: record.exchange })),
  ];
  const verified = seen.stored !== undefined;
  const summary = [
    `${key} numbers the records of one parent in ${place}: three creations one after another under a fresh parent of the probe's own got ${seen.sequential.length === 3 ? "consecutive numbers" : "a sequence"}.`,
    `${seen.sent} simultaneous creations under that parent (${seen.accepted} accepted) handed out ${seen.duplicated.length} number(s) more than once (${column} = ${value} to ${records.length} records)${verified ? `; ${candidate.table.name} then held ${seen.stored} duplicated ${column} value(s) for that parent` : ""}.`,
    "The next number is computed in code (read, then written) without a lock or a unique index, so concurrent requests read the same value.",
    `Fix: a UNIQUE index on (${candidate.parentColumn ?? "parent"}, ${column}) and an atomic allocation (a counter updated with \`SET n = n + 1 … RETURNING\`, or the insert retried on conflict).`,
  ].join(" ");
  return buildFinding(trial.run, {
    domain: "data",
    defectClass: "data-integrity",
    title: `${key} hands out the same ${column} twice under concurrent requests`,
    summary,
    impact: `Two ${candidate.table.name} records share one ${column} within a parent: references by number become ambiguous and lookups return the wrong record.`,
    location: { kind: "endpoint", value: key },
    related: [{ kind: "table", value: place }],
    severity: "medium",
    confidence: verified ? 0.9 : 0.8,
    discriminator: place,
    exchanges,
  });
}
