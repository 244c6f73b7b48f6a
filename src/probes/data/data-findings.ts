import { createHash } from "node:crypto";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import type { Table } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ApiTrial } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import type { ScratchTrial } from "./scratch-trials.ts";

// A confirmed data assumption → an envelope draft at `table.column`, with the code that assumes it, the
// schema that does not enforce it and the trial that proved it as artifacts.

const IDENTITY =
  /(email|username|user_name|login|handle|slug|sku|code|token|key|number|phone|reference|ref|uuid|external_id|name)$/i;
const MONEY = /(balance|credit|credits|amount|funds|wallet|points)$/i;
const QUANTITY = /(stock|quantity|qty|inventory|count|seats|remaining|available|capacity|units)$/i;

export type ConfirmedBy = "api" | "scratch" | "race";

/** Confidence by how the gap was shown (see DBA's rubric): the application itself beats a scratch copy. */
export function confidenceFor(
  assumption: DataAssumption,
  by: ConfirmedBy,
  verifiedInDatabase: boolean,
  declaresForeignKeys: boolean,
): number {
  const column = assumption.columns[assumption.columns.length - 1] ?? "";
  if (by === "race") return verifiedInDatabase ? 0.9 : 0.8;
  if (by === "api") {
    if (assumption.kind === "allowed-values") return verifiedInDatabase ? 0.8 : 0.75;
    return verifiedInDatabase ? 0.92 : 0.85;
  }
  switch (assumption.kind) {
    case "unique":
      return IDENTITY.test(column) || assumption.checkedInCode ? 0.75 : 0.6;
    case "foreign-key":
      // Children the code deletes itself are kept consistent by the application after all.
      return assumption.cascadedInCode ? 0.5 : declaresForeignKeys ? 0.75 : 0.6;
    case "non-negative":
      return MONEY.test(column) || QUANTITY.test(column) ? 0.8 : 0.65;
    case "allowed-values":
      return 0.5;
    case "not-null":
      return 0.45;
    case "ordered":
      return 0.5;
  }
}

/** Only the API document bounds it (no code relies on the bound by decrementing or branching). */
function declaredOnly(assumption: DataAssumption): boolean {
  return (assumption.declared?.length ?? 0) > 0 && !assumption.sites.some((site) => site.line > 0);
}

export function severityFor(assumption: DataAssumption): Severity {
  const column = assumption.columns[assumption.columns.length - 1] ?? "";
  if (declaredOnly(assumption))
    return assumption.kind === "non-negative" && MONEY.test(column) ? "high" : "low";
  switch (assumption.kind) {
    case "unique":
      return /(email|username|user_name|login|handle|token)$/i.test(column) ? "high" : "medium";
    case "foreign-key":
      return "medium";
    case "non-negative":
      return MONEY.test(column) ? "critical" : "high";
    case "allowed-values":
    case "ordered":
      return "medium";
    case "not-null":
      return "low";
  }
}

function describe(assumption: DataAssumption): { title: string; impact: string; fix: string } {
  const place = `${assumption.table}.${assumption.columns.join("+")}`;
  const column = assumption.columns[0]!;
  if (assumption.kind === "ordered") {
    const [lower, upper] = assumption.columns as [string, string];
    return {
      title: `${assumption.table}.${upper} can be stored before ${lower}: one write refuses it, another does not, and no CHECK relates them`,
      impact: `Spans that end before they start reach every reader of ${assumption.table}: durations and overlaps come out negative, availability and billing go wrong.`,
      fix: `CHECK (${upper} >= ${lower}), and validate the pair on every write (the update too, against the stored other half)`,
    };
  }
  if (declaredOnly(assumption)) return describeDeclared(assumption, column);
  switch (assumption.kind) {
    case "unique":
      return {
        title: `${place} is not unique in the database, yet the code treats it as identifying one row`,
        impact: `Duplicate ${assumption.table} rows with the same ${assumption.columns.join(" + ")} can be stored; lookups then return an arbitrary one of them.`,
        fix: `CREATE UNIQUE INDEX ON ${assumption.table} (${assumption.columns.join(", ")})`,
      };
    case "foreign-key":
      return {
        title: `${assumption.table}.${column} has no foreign key to ${assumption.references?.table}`,
        impact: `${assumption.table} rows can point at ${assumption.references?.table} rows that do not exist; joins silently drop them and deletes leave orphans.`,
        fix: `FOREIGN KEY (${column}) REFERENCES ${assumption.references?.table} (${assumption.references?.column})`,
      };
    case "non-negative":
      return {
        title: `${assumption.table}.${column} can go negative: it is decremented without a CHECK (${column} >= 0)`,
        impact: `Concurrent or oversized decrements drive ${column} below zero (oversold stock, negative balances) and nothing in the database stops it.`,
        fix: `CHECK (${column} >= 0), or decrement with \`WHERE ${column} >= ?\` and check the changed row count`,
      };
    case "allowed-values":
      return {
        title: `${assumption.table}.${column} accepts any value; the code expects one of ${assumption.values?.map((value) => `'${value}'`).join(", ")}`,
        impact: `A row with an unexpected ${column} falls through every branch of the code that switches on it.`,
        fix: `CHECK (${column} IN (${assumption.values?.map((value) => `'${value}'`).join(", ")}))`,
      };
    case "not-null":
      return {
        title: `${assumption.table}.${column} accepts NULL although every insert writes it`,
        impact: `A NULL ${column} reaches code that never expects one.`,
        fix: `ALTER ${assumption.table}.${column} SET NOT NULL (after backfilling)`,
      };
  }
}

function describeDeclared(
  assumption: DataAssumption,
  column: string,
): { title: string; impact: string; fix: string } {
  const domain = assumption.declared![0]!;
  if (assumption.kind === "allowed-values") {
    const values = (assumption.values ?? []).map((value) => `'${value}'`).join(", ");
    return {
      title: `${assumption.table}.${column} stores values outside the declared set (${values}) and has no CHECK`,
      impact: `Rows with a ${column} no reader expects are stored; code and clients that switch on it fall through.`,
      fix: `CHECK (${column} IN (${values})), and validate ${domain.property} in ${domain.operation}`,
    };
  }
  const minimum = domain.minimum ?? 0;
  return {
    title: `${assumption.table}.${column} stores values below the declared minimum (${minimum}) and has no CHECK`,
    impact: `Out-of-range ${column} values are stored and flow into every total and report built from them.`,
    fix: `CHECK (${column} >= ${minimum}), and validate ${domain.property} in ${domain.operation}`,
  };
}

function slugOf(assumption: DataAssumption): string {
  const hash = createHash("sha256").update(assumption.id).digest("hex").slice(0, 8);
  const base = `${assumption.kind}-${assumption.table}-${assumption.columns.join("-")}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 60);
  return `${base}-${hash}`;
}

function siteLines(assumption: DataAssumption): string {
  return assumption.sites
    .slice(0, 8)
    .map(
      (site) =>
        `${site.file}:${site.line} (${site.via})${site.sql ? `: ${site.sql.replace(/\s+/g, " ").trim()}` : ""}`,
    )
    .join("\n");
}

export interface ConfirmationEvidence {
  by: ConfirmedBy;
  api?: ApiTrial;
  scratch?: ScratchTrial & { database: string };
  /** For races: the exchanges and the counts that show the broken invariant. */
  race?: {
    title?: string;
    summary: string;
    exchanges: ApiTrial["exchanges"];
    details: Record<string, unknown>;
  };
  verifiedInDatabase: boolean;
}

/** The envelope draft for one confirmed assumption. `run` is needed when the proof went through the API. */
export function dataFinding(
  context: ToolContext,
  run: ProbeRun | undefined,
  tool: string,
  assumption: DataAssumption,
  table: Table | undefined,
  evidence: ConfirmationEvidence,
  declaresForeignKeys: boolean,
): EnvelopeDraft {
  const slug = slugOf(assumption);
  const folder = `${tool}/${slug}`;
  const { title, impact, fix } = describe(assumption);
  const column = assumption.columns[assumption.columns.length - 1]!;
  const location = { kind: "table" as const, value: `${assumption.table}.${column}` };
  const related = assumption.columns
    .slice(0, -1)
    .map((name) => ({ kind: "table" as const, value: `${assumption.table}.${name}` }));
  const confidence = confidenceFor(assumption, evidence.by, evidence.verifiedInDatabase, declaresForeignKeys);
  const isRace = evidence.by === "race";
  const proof =
    evidence.by === "api"
      ? `Confirmed through the application: ${evidence.api?.reason}${evidence.api?.verified ? ` (the database then held ${evidence.api.verified.rows} matching row(s))` : ""}.`
      : evidence.by === "race"
        ? `Confirmed with concurrent requests: ${evidence.race?.summary}.`
        : `Confirmed on ${evidence.scratch?.database}: ${evidence.scratch?.description} was accepted.`;
  const summary = [
    `Assumption: ${assumption.reason}.`,
    `Where: ${assumption.sites
      .slice(0, 3)
      .map((site) => `${site.file}:${site.line}`)
      .join(", ")}.`,
    `Schema: ${table ? `${table.name} has no constraint enforcing it` : "the table's constraints could not be read"}.`,
    proof,
    `Fix: ${fix}.`,
  ].join(" ");
  const artifacts: EnvelopeDraft["evidence"] = [
    {
      kind: "artifact",
      description: `code that makes the assumption (${assumption.sites.length} place(s))`,
      uri: context.putArtifact(
        `${folder}/assumption.txt`,
        `${assumption.reason}\n\n${siteLines(assumption)}\n`,
      ),
    },
  ];
  if (table) {
    artifacts.push({
      kind: "artifact",
      description: `schema of ${table.name} as the database enforces it`,
      uri: context.putArtifact(`${folder}/schema.json`, `${JSON.stringify(table, null, 2)}\n`),
    });
  }
  if (evidence.scratch) {
    const script = evidence.scratch.statements
      .map((statement) => `${statement.sql};\n-- parameters: ${JSON.stringify(statement.parameters)}`)
      .join("\n");
    artifacts.push({
      kind: "artifact",
      description: `trial on ${evidence.scratch.database}: ${evidence.scratch.accepted ? "accepted" : "refused"}`,
      uri: context.putArtifact(
        `${folder}/trial.sql`,
        `-- ${evidence.scratch.description}\n-- result: ${evidence.scratch.accepted ? "accepted" : `refused: ${evidence.scratch.error}`}\n${script}\n`,
      ),
    });
  }
  if (evidence.race) {
    artifacts.push({
      kind: "artifact",
      description: "concurrent requests and the counts before and after",
      uri: context.putArtifact(`${folder}/race.json`, `${JSON.stringify(evidence.race.details, null, 2)}\n`),
    });
  }
  const defectClass = isRace ? ("data-integrity" as const) : ("missing-constraint" as const);
  // Sites read from the API document carry no line: only code is a source location.
  const codeSite = assumption.sites.find((site) => site.line > 0);
  const source = codeSite ? { file: codeSite.file, line: codeSite.line } : undefined;
  const exchanges = evidence.api?.exchanges ?? evidence.race?.exchanges ?? [];
  if (run && exchanges.length > 0) {
    const draft = buildFinding(run, {
      domain: "data",
      defectClass,
      title: isRace
        ? (evidence.race?.title ?? `${location.value}: concurrent requests break a rule the code enforces`)
        : title,
      summary,
      impact,
      location,
      ...(related.length > 0 ? { related } : {}),
      severity: severityFor(assumption),
      confidence,
      ...(assumption.columns.length > 1 ? { discriminator: assumption.columns.join(",") } : {}),
      exchanges,
      ...(evidence.api?.repro && !isRace ? { repro: evidence.api.repro } : {}),
      suggestedFixArea: source?.file,
    });
    draft.evidence.push(...artifacts);
    if (source) draft.location.source = source;
    return EnvelopeDraftSchema.parse(draft);
  }
  const steps = evidence.scratch
    ? [
        `Copy the database (for SQLite: \`sqlite3 live.db "VACUUM INTO 'copy.db'"\`).`,
        `On the copy, run the statements of ${folder}/trial.sql: the database accepts ${evidence.scratch.description}.`,
        `Expected: the database refuses it (${fix}).`,
      ]
    : [proof];
  return EnvelopeDraftSchema.parse({
    domain: "data",
    defect_class: defectClass,
    title: title.length > 200 ? `${title.slice(0, 199)}…` : title,
    summary,
    location: { ...location, ...(related.length > 0 ? { related } : {}), ...(source ? { source } : {}) },
    evidence: artifacts,
    reproduction: { steps },
    impact,
    severity: severityFor(assumption),
    confidence,
    suggested_fix_area: source?.file ?? null,
    autonomy_eligible: false,
    ...(assumption.columns.length > 1 ? { dedupe: { discriminator: assumption.columns.join(",") } } : {}),
  });
}
