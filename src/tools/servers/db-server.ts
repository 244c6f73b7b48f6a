import { z } from "zod";
import { confirmConstraints } from "../../probes/data/confirm-constraints.ts";
import { checkCredentialStorage } from "../../probes/data/credential-storage.ts";
import { dataAnalysis } from "../../probes/data/data-analysis.ts";
import { queryLog } from "../../probes/data/query-log-probe.ts";
import { probeRace } from "../../probes/data/race-probe.ts";
import { probeStateIntegrity } from "../../probes/data/state-integrity.ts";
import { databaseOf, loadTables } from "../../probes/data/target-database.ts";
import { explainStatement } from "../../probes/load/query-plan.ts";
import { probeActions } from "../../probes/session/probe-run.ts";
import { err, fromProbe, ok } from "../result.ts";
import { defineTool, type ToolDefinition } from "../tool.ts";

// The db server: the schema as the database enforces it, the assumptions the code makes about its data,
// trials that confirm them (through the application, or on a scratch copy — never the live data), races,
// the statement log and query plans. Probe tools answer `{ candidates, stats }` with evidence written.
// Composite probes declare a read of the target (probeActions) and skip writes themselves where the
// target forbids them; a file named by an input is declared as a read.

const AssumptionKind = z.enum([
  "unique",
  "foreign-key",
  "non-negative",
  "not-null",
  "allowed-values",
  "ordered",
]);
const SqlitePath = z
  .string()
  .min(1)
  .describe("a SQLite file relative to the target root (default: the profile's database.path)");

const dbSchema = defineTool({
  name: "db_schema",
  server: "db",
  description:
    "Read the database schema as the database enforces it (tables, columns, primary and foreign keys, unique and plain indexes, CHECK constraints), read-only. Answers a summary and an artifact with every table.",
  input: z.strictObject({ path: SqlitePath.optional() }),
  actions: (input) => (input.path ? [{ kind: "read_file", path: input.path }] : []),
  async run(input, context) {
    const handle = databaseOf(context, input.path);
    const loaded = await loadTables(context, handle);
    if (loaded.tables.length === 0) return err(`no schema: ${loaded.note ?? "the database has no tables"}`);
    const uri = context.putArtifact("db_schema/schema.json", `${JSON.stringify(loaded.tables, null, 2)}\n`);
    return ok({
      kind: typeof handle === "string" ? (context.systemMap()?.database?.kind ?? null) : handle.kind,
      source: loaded.source,
      ...(loaded.note ? { note: loaded.note } : {}),
      uri,
      tables: loaded.tables.map((table) => ({
        name: table.name,
        columns: table.columns.map(
          (column) =>
            `${column.name} ${column.type}${column.nullable ? "" : " NOT NULL"}${column.primary_key ? " PK" : ""}`,
        ),
        unique: table.indexes.filter((index) => index.unique).map((index) => index.columns.join(",")),
        indexes: table.indexes.filter((index) => !index.unique).map((index) => index.columns.join(",")),
        foreign_keys: table.foreign_keys.map(
          (key) => `${key.columns.join(",")} → ${key.references_table}(${key.references_columns.join(",")})`,
        ),
        checks: table.checks,
      })),
    });
  },
});

const inferDataAssumptions = defineTool({
  name: "infer_data_assumptions",
  server: "db",
  description:
    "Read the code's data access (SQL strings, query builders and ORMs in JS/TS and Python) and infer what it assumes: single-row lookups (unique, also by a scope column plus a natural key), joins (foreign keys), decrements (non-negative), always-written columns (not null), fixed string states (allowed values), the enums and minimums the API document declares for the columns requests write, and ordered pairs (a start and its end, a minimum and its maximum) that requests write. Each assumption says whether the schema enforces it and where the code makes it.",
  input: z.strictObject({
    kinds: z.array(AssumptionKind).optional(),
    include_enforced: z.boolean().default(true),
  }),
  async run(input, context) {
    const analysis = await dataAnalysis(context, { refresh: true });
    if (typeof analysis === "string") return err(analysis);
    const assumptions = analysis.assumptions.filter(
      (assumption) =>
        (!input.kinds || input.kinds.includes(assumption.kind)) &&
        (input.include_enforced || !assumption.enforced),
    );
    const uri = context.putArtifact(
      "infer_data_assumptions/assumptions.json",
      `${JSON.stringify(assumptions, null, 2)}\n`,
    );
    return ok({
      uri,
      schema_from: analysis.schemaSource,
      code: {
        files: analysis.scan.files,
        accesses: analysis.scan.accesses.length,
        single_row_lookups: analysis.scan.accesses.filter((access) => access.cardinality === "single").length,
        problems: analysis.scan.problems.slice(0, 10),
      },
      counts: {
        total: analysis.assumptions.length,
        enforced: analysis.assumptions.filter((assumption) => assumption.enforced).length,
        unenforced: analysis.assumptions.filter((assumption) => !assumption.enforced).length,
      },
      assumptions: assumptions.map((assumption) => ({
        id: assumption.id,
        kind: assumption.kind,
        table: assumption.table,
        columns: assumption.columns,
        ...(assumption.references ? { references: assumption.references } : {}),
        ...(assumption.values ? { values: assumption.values } : {}),
        enforced: assumption.enforced,
        ...(assumption.enforcedBy ? { enforced_by: assumption.enforcedBy } : {}),
        ...(assumption.checkedInCode ? { checked_in_code: true } : {}),
        reason: assumption.reason,
        sites: assumption.sites.slice(0, 5).map((site) => `${site.file}:${site.line} (${site.via})`),
      })),
    });
  },
});

const confirmConstraint = defineTool({
  name: "confirm_constraint",
  server: "db",
  description:
    "Confirm the unenforced assumptions (or the given ids): through the application as a profile user when it is live and takes writes (two creations with one value in one scope, an orphan reference, a parent deleted under its own child, a value outside the declared enum or minimum read back from the row), else on a scratch copy of the database (SQLite copy; a rolled-back PostgreSQL transaction only where writes are allowed). Never writes the live data of an external target. Answers missing-constraint candidates for what was accepted, and every outcome.",
  input: z.strictObject({
    assumptions: z.array(z.string()).optional(),
    via: z.enum(["auto", "api", "scratch"]).default("auto"),
    max_assumptions: z.number().int().positive().max(60).optional(),
    max_requests: z.number().int().positive().max(1000).optional(),
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await confirmConstraints(context, input));
  },
});

const probeRaceTool = defineTool({
  name: "probe_race",
  server: "db",
  description:
    "Send a handful of concurrent requests against an invariant the code keeps by itself — a uniqueness it checks before inserting (refused one after another), a counter it reads and writes back, a per-parent number it hands out (1, 2, 3 under a fresh parent of the probe's own) — and check (read-only) whether it held. Answers data-integrity candidates for broken invariants. Skips writes on external targets without allow_writes.",
  input: z.strictObject({
    assumptions: z.array(z.string()).optional(),
    concurrency: z.number().int().min(2).max(10).optional(),
    rounds: z.number().int().min(1).max(4).optional(),
    max_requests: z.number().int().positive().max(500).optional(),
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await probeRace(context, input));
  },
});

const probeStateIntegrityTool = defineTool({
  name: "probe_state_integrity",
  server: "db",
  description:
    "Through the API alone, on records the probe creates itself: repeat each one-shot action under an item (`POST /loans/{id}/return`) in turn and at once and read back whether the number it moves (stock, paid, refunded) moved again; resend a creation that takes an Idempotency-Key with the same key, in turn and at once, and read back whether it made two records; change the parts of a derived field (quantity × price → total, lines → total or count, start + duration → end) and read back whether it followed; edit twice with the same version (a `version` property or If-Match) and read back whether the stale edit overwrote the newer one. Answers data-integrity candidates confirmed by a read-back. Skips writes on external targets without allow_writes.",
  input: z.strictObject({
    filter: z.string().optional(),
    max_requests: z.number().int().positive().max(1500).optional(),
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await probeStateIntegrity(context, input));
  },
});

const checkCredentialStorageTool = defineTool({
  name: "check_credential_storage",
  server: "db",
  description:
    "Read (read-only) the stored password of each profile user with a known password from the tables that hold a password-like column beside a username or email, and say whether it is the password itself, its base64 or an unsalted MD5/SHA digest rather than a salted hash. Answers sensitive-data-exposure candidates; the passwords never appear in the evidence.",
  input: z.strictObject({}),
  async run(_input, context) {
    return fromProbe(await checkCredentialStorage(context));
  },
});

const queryLogTool = defineTool({
  name: "query_log",
  server: "db",
  description:
    "Read the target's SQL statement log: the last `tail` statements, or (with `operation`, a GET) the statements one request to it runs, with their normalised shapes and counts.",
  input: z.strictObject({
    operation: z.string().optional(),
    query: z.record(z.string(), z.string()).optional(),
    user: z.string().optional(),
    tail: z.number().int().positive().max(500).optional(),
  }),
  actions: (input, context) => (input.operation ? probeActions(context) : []),
  async run(input, context) {
    return fromProbe(await queryLog(context, input));
  },
});

const explainQuery = defineTool({
  name: "explain_query",
  server: "db",
  description:
    "Show how the database would run one SELECT/UPDATE/DELETE without running it (SQLite EXPLAIN QUERY PLAN read-only; PostgreSQL EXPLAIN in a read-only transaction), and which filtered columns have no index.",
  input: z.strictObject({ sql: z.string().min(1).max(20_000), path: SqlitePath.optional() }),
  actions: (input) => (input.path ? [{ kind: "read_file", path: input.path }] : []),
  async run(input, context) {
    const handle = databaseOf(context, input.path);
    if (typeof handle === "string") return err(handle);
    const { tables } = await loadTables(context, handle);
    const result = await explainStatement(handle, tables, input.sql);
    if (result.error) return err(`EXPLAIN failed: ${result.error}`);
    return ok(result);
  },
});

export const dbTools: ToolDefinition[] = [
  dbSchema,
  inferDataAssumptions,
  confirmConstraint,
  probeRaceTool,
  probeStateIntegrityTool,
  checkCredentialStorageTool,
  queryLogTool,
  explainQuery,
];
