import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { isItemPath, isSafeWrite, operationKey } from "../api/operation-index.ts";
import { candidateUsers, sendPrepared } from "../api/probe-support.ts";
import { ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import type { DataAccess } from "../code-access/data-access-types.ts";
import { analyzeStatement } from "../code-access/sql-shape.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { statementLogOf } from "../load/statement-log.ts";
import { baseStats, openProbeRun, untilBudget, usableUsers } from "../session/probe-run.ts";
import type { TrialContext } from "./api-trials.ts";
import {
  countRows,
  creationOperationsFor,
  prepareRequest,
  propertySchema,
  removeCreated,
} from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import type { DataAnalysis } from "./data-analysis.ts";
import { dataAnalysis } from "./data-analysis.ts";
import { dataFinding } from "./data-findings.ts";
import { findTable, pathFitsTable } from "./naming.ts";
import { raceSequences } from "./sequence-race.ts";
import { quoteName, readOnly } from "./target-database.ts";
import { uniqueValueFor } from "./trial-values.ts";
import { apiUniqueTrial } from "./unique-trial.ts";

// probe_race: a handful of concurrent requests against an invariant the code keeps by itself — a
// uniqueness it checks before inserting, a counter it reads and writes back — and a look (read-only) at
// whether the invariant survived. Only a broken invariant is reported, as data-integrity.

export interface RaceOptions {
  assumptions?: string[];
  concurrency?: number;
  rounds?: number;
  max_requests?: number;
}

interface RaceResult {
  assumption: DataAssumption;
  title: string;
  summary: string;
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  details: Record<string, unknown>;
  verified: boolean;
}

export async function probeRace(
  context: ToolContext,
  options: RaceOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const analysis = await dataAnalysis(context);
  if (typeof analysis === "string") return analysis;
  const run = openProbeRun(context, "probe_race", { max_requests: options.max_requests ?? 250 });
  if (typeof run === "string") return run;
  if (!run.target.writesAllowed) {
    return {
      candidates: [],
      stats: {
        ...baseStats(run),
        skipped: "the target is external and does not allow writes: no concurrent writes sent",
      },
    };
  }
  const concurrency = Math.min(Math.max(options.concurrency ?? 6, 2), 10);
  const rounds = Math.min(Math.max(options.rounds ?? 2, 1), 4);
  const trial: TrialContext = {
    run,
    factory: new ResourceFactory(run),
    tables: analysis.tables,
    handle: analysis.handle,
    users: candidateUsers(await usableUsers(run)),
  };
  const wanted = options.assumptions ? new Set(options.assumptions) : undefined;
  const uniques = analysis.assumptions.filter(
    (assumption) =>
      assumption.kind === "unique" &&
      !assumption.enforced &&
      assumption.columns.length === 1 &&
      (wanted ? wanted.has(assumption.id) : assumption.checkedInCode === true),
  );
  const results: RaceResult[] = [];
  const sequenceDrafts: EnvelopeDraft[] = [];
  const outcomes: Array<{ target: string; result: string }> = [];
  await untilBudget(run, async () => {
    for (const assumption of uniques) {
      const result = await raceUnique(trial, assumption, concurrency, rounds);
      outcomes.push({
        target: assumption.id,
        result: typeof result === "string" ? result : "invariant broken",
      });
      if (typeof result !== "string") results.push(result);
    }
    const counters = await raceCounters(context, trial, analysis, concurrency, wanted);
    outcomes.push(...counters.outcomes);
    results.push(...counters.results);
    // Per-parent numbers are found by behaviour, not by an assumption id: only in the full pass.
    if (!wanted) {
      const sequences = await raceSequences(trial, analysis, concurrency);
      outcomes.push(...sequences.outcomes);
      sequenceDrafts.push(...sequences.candidates);
    }
  });
  const candidates = results.map((result) =>
    dataFinding(
      context,
      run,
      "probe_race",
      result.assumption,
      findTable(analysis.tables, result.assumption.table),
      {
        by: "race",
        race: {
          title: result.title,
          summary: result.summary,
          exchanges: result.exchanges,
          details: result.details,
        },
        verifiedInDatabase: result.verified,
      },
      analysis.declaresForeignKeys,
    ),
  );
  return {
    candidates: [...candidates, ...sequenceDrafts],
    stats: { ...baseStats(run), concurrency, outcomes },
  };
}

/** Check-then-insert: refused one after another, but do simultaneous creations get through? */
async function raceUnique(
  trial: TrialContext,
  assumption: DataAssumption,
  concurrency: number,
  rounds: number,
): Promise<RaceResult | string> {
  const sequential = await apiUniqueTrial(trial, assumption);
  if (sequential.outcome !== "rejected" || !sequential.operation || !/refused/.test(sequential.reason)) {
    return sequential.outcome === "confirmed"
      ? "duplicates are accepted even one after another (a missing constraint, reported by confirm_constraint)"
      : `no race tried: ${sequential.reason}`;
  }
  const operation = sequential.operation;
  const user = sequential.user;
  const column = assumption.columns[0]!;
  const property = creationOperationsFor([operation], assumption.table, column)[0]?.property ?? column;
  for (let round = 1; round <= rounds; round += 1) {
    const seed = uniqueSeed();
    const value = uniqueValueFor(propertySchema(operation, property), seed, property);
    const prepared = await Promise.all(
      Array.from({ length: concurrency }, () =>
        prepareRequest(trial, operation, user, uniqueSeed(), { [property]: value }),
      ),
    );
    const ready = prepared.filter((request) => request !== undefined);
    const exchanges = (
      await trial.run.client.together(
        () => Promise.all(ready.map((request) => sendPrepared(trial.run, user, request!))),
        ready.length,
      )
    ).filter((exchange): exchange is HttpExchange => exchange !== undefined);
    const accepted = exchanges.filter(isSuccess);
    const stored = await countRows(trial.handle, assumption.table, column, value);
    await removeCreated(trial, operation, user, accepted);
    const broken = stored ? stored.rows >= 2 : accepted.length >= 2;
    if (broken) {
      return {
        assumption,
        title: `${assumption.table}.${column} duplicates get through concurrent requests: uniqueness is only checked in code`,
        summary: `${accepted.length} of ${exchanges.length} simultaneous ${operationKey(operation)} requests with one ${column} were accepted${stored ? ` and ${assumption.table} then held ${stored.rows} rows with it` : ""}, although the application refuses the same duplicate sent after the first`,
        exchanges: [
          ...sequential.exchanges.map((entry) => ({
            label: `sequential-${entry.label}`,
            exchange: entry.exchange,
          })),
          ...accepted.slice(0, 3).map((exchange, index) => ({ label: `concurrent-${index + 1}`, exchange })),
        ],
        details: {
          operation: operationKey(operation),
          round,
          sent: exchanges.length,
          accepted: accepted.length,
          stored: stored ?? null,
        },
        verified: stored !== undefined,
      };
    }
  }
  return `the application's check held under ${concurrency} concurrent requests (${rounds} round(s))`;
}

interface CounterTarget {
  table: string;
  column: string;
  sites: DataAssumption["sites"];
}

/** `SELECT col …` then `UPDATE t SET col = ?` in one handler: a read-modify-write that can lose updates. */
function counterTargets(analysis: DataAnalysis): CounterTarget[] {
  const byScope = new Map<string, DataAccess[]>();
  for (const access of analysis.scan.accesses) {
    if (!access.sql) continue;
    const key = `${access.file}#${access.scope}`;
    byScope.set(key, [...(byScope.get(key) ?? []), access]);
  }
  const targets = new Map<string, CounterTarget>();
  for (const accesses of byScope.values()) {
    const shaped = accesses.map((access) => ({ access, shape: analyzeStatement(access.sql ?? "") }));
    for (const { access, shape } of shaped) {
      if (shape.verb !== "update") continue;
      const tableName = shape.tables[0]?.name;
      const table = tableName ? findTable(analysis.tables, tableName) : undefined;
      if (!table) continue;
      for (const assignment of shape.assignments) {
        if (assignment.kind !== "value" || assignment.literal !== undefined) continue;
        const column = table.columns.find((candidate) => candidate.name.toLowerCase() === assignment.column);
        if (!column || column.primary_key || !/int|real|num|dec|float|double/i.test(column.type)) continue;
        const read = shaped.find(
          (item) =>
            item.shape.verb === "select" &&
            item.shape.tables[0]?.name === tableName &&
            item.access.line < access.line,
        );
        if (!read) continue;
        targets.set(`${table.name}.${column.name}`, {
          table: table.name,
          column: column.name,
          sites: [
            { file: read.access.file, line: read.access.line, via: "read", sql: read.access.sql },
            { file: access.file, line: access.line, via: "written back", sql: access.sql },
          ],
        });
      }
    }
  }
  return [...targets.values()];
}

/** Finds the operation that runs the write (from the statement log), then races it. */
async function raceCounters(
  context: ToolContext,
  trial: TrialContext,
  analysis: DataAnalysis,
  concurrency: number,
  wanted: Set<string> | undefined,
): Promise<{ results: RaceResult[]; outcomes: Array<{ target: string; result: string }> }> {
  const results: RaceResult[] = [];
  const outcomes: Array<{ target: string; result: string }> = [];
  const targets = counterTargets(analysis).filter(
    (target) => !wanted || wanted.has(`counter:${target.table}.${target.column}`),
  );
  if (targets.length === 0) return { results, outcomes };
  const log = statementLogOf(context);
  if (typeof log === "string" || !trial.handle) {
    for (const target of targets)
      outcomes.push({
        target: `counter:${target.table}.${target.column}`,
        result: `not tried: ${typeof log === "string" ? log : "the database cannot be read"}`,
      });
    return { results, outcomes };
  }
  const user = trial.users[0];
  for (const target of targets) {
    const id = `counter:${target.table}.${target.column}`;
    const operations = trial.run.map.operations
      // Writes on an item (`PUT /posts/{id}`) or an action under one (`POST /posts/{id}/like`).
      .filter(
        (operation) =>
          ["POST", "PUT", "PATCH"].includes(operation.method.toUpperCase()) &&
          isSafeWrite(operation) &&
          isItemPath(operation.path.replace(/\/[^/{}]+$/, "")),
      )
      .filter((operation) => pathFitsTable(operation.path, target.table) > 0)
      .slice(0, 4);
    let result = "no operation was seen writing it";
    for (const operation of operations) {
      const prepared = await prepareRequest(trial, operation, user, uniqueSeed());
      if (!prepared) continue;
      const seen = await log.around(() => sendPrepared(trial.run, user, prepared));
      const write = seen.window.queries.find((query) => {
        const shape = analyzeStatement(query);
        return (
          shape.verb === "update" &&
          shape.tables[0]?.name === target.table.toLowerCase() &&
          shape.assignments.some((entry) => entry.column === target.column.toLowerCase())
        );
      });
      if (!seen.result || !isSuccess(seen.result) || !write) continue;
      const row = write.match(/\bWHERE\s+"?(\w+)"?\s*=\s*('(?:[^']|'')*'|-?\d+(?:\.\d+)?)/i);
      if (!row) continue;
      const key = row[2]!.startsWith("'") ? row[2]!.slice(1, -1).replace(/''/g, "'") : Number(row[2]);
      const placeholder = trial.handle.kind === "postgres" ? "$1" : "?";
      const sql = `SELECT ${quoteName(target.column)} AS v FROM ${quoteName(target.table)} WHERE ${quoteName(row[1]!)} = ${placeholder}`;
      const read = async () => {
        const rows = await readOnly(trial.handle!, (query) => query(sql, [key]));
        return rows?.[0]?.v === undefined ? undefined : Number(rows[0].v);
      };
      const first = await read();
      const single = await sendPrepared(trial.run, user, prepared);
      const second = await read();
      if (first === undefined || second === undefined || !single || !isSuccess(single) || second === first)
        continue;
      const unit = second - first;
      const exchanges = (
        await trial.run.client.together(
          () =>
            Promise.all(Array.from({ length: concurrency }, () => sendPrepared(trial.run, user, prepared))),
          concurrency,
        )
      ).filter((exchange): exchange is HttpExchange => exchange !== undefined);
      const accepted = exchanges.filter(isSuccess);
      const after = await read();
      if (after === undefined) continue;
      const expected = second + unit * accepted.length;
      const lost = Math.round((expected - after) / unit);
      const details = {
        operation: operationKey(operation as Operation),
        row: `${row[1]} = ${row[2]}`,
        before: second,
        per_request: unit,
        accepted: accepted.length,
        expected,
        after,
        lost_updates: lost,
      };
      if (lost >= 1) {
        const assumption: DataAssumption = {
          id,
          kind: "non-negative",
          table: target.table,
          columns: [target.column],
          enforced: false,
          sites: target.sites,
          reason: `${target.table}.${target.column} is read, changed in code and written back with \`SET ${target.column} = ?\``,
        };
        results.push({
          assumption,
          title: `${target.table}.${target.column} loses updates: it is read, changed in code and written back, and concurrent requests overwrite each other`,
          summary: `${accepted.length} simultaneous ${operationKey(operation as Operation)} requests should have moved ${target.column} from ${second} to ${expected}, but it ended at ${after}: ${lost} update(s) lost`,
          exchanges: accepted
            .slice(0, 3)
            .map((exchange, index) => ({ label: `concurrent-${index + 1}`, exchange })),
          details,
          verified: true,
        });
        result = `${lost} update(s) lost`;
      } else {
        result = "no update lost";
      }
      break;
    }
    outcomes.push({ target: id, result });
  }
  return { results, outcomes };
}
