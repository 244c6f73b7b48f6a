import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { candidateUsers } from "../api/probe-support.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { baseStats, openProbeRun, untilBudget, usableUsers } from "../session/probe-run.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import { apiValueTrial } from "./api-trials.ts";
import type { DataAssumption } from "./assumptions.ts";
import type { DataAnalysis } from "./data-analysis.ts";
import { dataAnalysis } from "./data-analysis.ts";
import { dataFinding } from "./data-findings.ts";
import { apiDomainTrial } from "./declared-domains.ts";
import { apiDecrementTrial } from "./decrement-trial.ts";
import { findTable } from "./naming.ts";
import { apiOrderTrial } from "./order-trial.ts";
import { apiOrphanTrial } from "./orphan-trial.ts";
import { scratchTrial } from "./scratch-trials.ts";
import type { ScratchDatabase } from "./target-database.ts";
import { openScratch } from "./target-database.ts";
import { apiUniqueTrial } from "./unique-trial.ts";

// confirm_constraint: every assumption the schema does not enforce is tried — through the application
// when it is live and takes writes (strongest), else on a scratch database — and only what was shown to
// be accepted becomes a candidate. Nothing unconfirmed is reported.

export interface ConfirmOptions {
  /** Assumption ids (`unique:users.email`) to confirm; all unenforced ones when absent. */
  assumptions?: string[];
  /** `api` only, `scratch` only, or `auto` (API first, scratch when the API cannot show it). */
  via?: "auto" | "api" | "scratch";
  max_assumptions?: number;
  max_requests?: number;
}

export interface AssumptionOutcome {
  id: string;
  result: "confirmed" | "rejected-by-application" | "refused-by-database" | "unconfirmed";
  by?: "api" | "scratch";
  detail: string;
}

const API_KINDS = new Set(["unique", "foreign-key", "allowed-values", "ordered"]);

/** A decrement the code makes: an action taking more than a record holds can show it (decrement-trial.ts). */
function decrementedInCode(assumption: DataAssumption): boolean {
  return assumption.kind === "non-negative" && assumption.sites.some((site) => site.line > 0);
}

function triedThroughApi(assumption: DataAssumption): boolean {
  return (
    API_KINDS.has(assumption.kind) || (assumption.declared?.length ?? 0) > 0 || decrementedInCode(assumption)
  );
}

/**
 * The strongest trial the application allows: a value outside a declared domain, a duplicate, an orphan
 * written directly, else (for a reference the application checks on write) an orphan left by deleting
 * the parent. A `skipped` answer leaves the scratch copy to try.
 */
async function apiTrialFor(context: TrialContext, assumption: DataAssumption): Promise<ApiTrial> {
  if ((assumption.declared?.length ?? 0) > 0) {
    const declared = await apiDomainTrial(context, assumption);
    if (declared.outcome !== "confirmed" && decrementedInCode(assumption)) {
      // A create refusing a negative value says nothing of the decrement the code makes elsewhere.
      const taken = await apiDecrementTrial(context, assumption);
      return taken.outcome === "skipped" ? declared : taken;
    }
    if (declared.outcome !== "skipped" || !API_KINDS.has(assumption.kind)) return declared;
  }
  if (decrementedInCode(assumption)) return apiDecrementTrial(context, assumption);
  if (assumption.kind === "ordered") return apiOrderTrial(context, assumption);
  if (assumption.kind === "unique") return apiUniqueTrial(context, assumption);
  const direct = await apiValueTrial(context, assumption);
  if (assumption.kind !== "foreign-key" || direct.outcome === "confirmed") return direct;
  const orphan = await apiOrphanTrial(context, assumption);
  if (orphan.outcome !== "skipped") return orphan;
  return {
    ...direct,
    outcome: "skipped",
    reason: `${direct.reason}; deleting a parent: ${orphan.reason}`,
  };
}

export async function confirmConstraints(
  context: ToolContext,
  options: ConfirmOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const analysis = await dataAnalysis(context);
  if (typeof analysis === "string") return analysis;
  const wanted = options.assumptions ? new Set(options.assumptions) : undefined;
  // Weak assumptions (a column every insert writes; a fixed set of states) are only tried when asked
  // for by id: shown on a scratch copy alone they would be held anyway, and they are often by design.
  const pending = analysis.assumptions
    .filter(
      (assumption) =>
        !assumption.enforced && (wanted ? wanted.has(assumption.id) : assumption.kind !== "not-null"),
    )
    .slice(0, options.max_assumptions ?? 25);
  const via = options.via ?? "auto";
  const notes: string[] = [];
  let run: ProbeRun | undefined;
  let trialContext: TrialContext | undefined;
  if (via !== "scratch" && pending.some(triedThroughApi)) {
    const opened = openProbeRun(context, "confirm_constraint", { max_requests: options.max_requests ?? 200 });
    if (typeof opened === "string") notes.push(`no trial through the application: ${opened}`);
    else if (!opened.target.writesAllowed) {
      run = opened;
      notes.push("no trial through the application: the target is external and does not allow writes");
    } else {
      run = opened;
      trialContext = {
        run,
        factory: new ResourceFactory(run),
        tables: analysis.tables,
        handle: analysis.handle,
        users: candidateUsers(await usableUsers(run)),
      };
    }
  }
  const scratchReason = scratchRefusal(context, analysis);
  if (scratchReason && via !== "api") notes.push(`no scratch trials: ${scratchReason}`);
  let scratch: ScratchDatabase | undefined;
  const outcomes: AssumptionOutcome[] = [];
  const candidates: EnvelopeDraft[] = [];
  const body = async () => {
    for (const assumption of pending) {
      if (context.signal.aborted) break;
      let api: ApiTrial | undefined;
      if (trialContext && triedThroughApi(assumption)) {
        api = await apiTrialFor(trialContext, assumption);
        if (api.outcome === "confirmed") {
          candidates.push(
            finding(context, run, analysis, assumption, {
              by: "api",
              api,
              verifiedInDatabase: api.verified !== undefined,
            }),
          );
          outcomes.push({ id: assumption.id, result: "confirmed", by: "api", detail: api.reason });
          continue;
        }
        if (api.outcome === "rejected") {
          outcomes.push({
            id: assumption.id,
            result: "rejected-by-application",
            by: "api",
            detail: api.reason,
          });
          continue;
        }
      }
      // A scratch copy shows what the schema lets in; for a domain only the API document declares, that
      // is already known from the schema, and only the application storing it would be a finding.
      const fromCode = assumption.sites.some((site) => site.line > 0);
      // A reference known only by its name needs the application to leave an orphan (see assumptions.ts).
      const scratchWorthIt =
        ((assumption.kind !== "allowed-values" && fromCode) || wanted !== undefined) &&
        !assumption.namedOnly &&
        assumption.kind !== "ordered";
      if (via === "api" || scratchReason || !analysis.handle || !scratchWorthIt) {
        const detail = !scratchWorthIt
          ? `${api?.reason ?? "not tried through the application"}; a scratch copy alone would not make it fileable (pass its id to try)`
          : (api?.reason ?? scratchReason ?? "no way to try it");
        outcomes.push({ id: assumption.id, result: "unconfirmed", detail });
        continue;
      }
      scratch ??= await openScratch(analysis.handle);
      const trial = await scratchTrial(scratch, analysis.tables, assumption);
      if (typeof trial === "string") {
        outcomes.push({ id: assumption.id, result: "unconfirmed", detail: trial });
      } else if (!trial.accepted) {
        outcomes.push({
          id: assumption.id,
          result: "refused-by-database",
          by: "scratch",
          detail: trial.error ?? "refused",
        });
      } else {
        const evidence = {
          by: "scratch" as const,
          scratch: { ...trial, database: scratch.description },
          verifiedInDatabase: true,
        };
        candidates.push(finding(context, undefined, analysis, assumption, evidence));
        outcomes.push({ id: assumption.id, result: "confirmed", by: "scratch", detail: trial.description });
      }
    }
  };
  try {
    if (run) await untilBudget(run, body);
    else await body();
  } finally {
    await scratch?.close();
  }
  const stats = {
    ...(run ? baseStats(run) : {}),
    assumptions: analysis.assumptions.length,
    enforced: analysis.assumptions.filter((assumption) => assumption.enforced).length,
    examined: outcomes.length,
    outcomes,
    schema_from: analysis.schemaSource,
    notes: [...notes, ...(run?.notes ?? [])],
  };
  return { candidates, stats };
}

function finding(
  context: ToolContext,
  run: ProbeRun | undefined,
  analysis: DataAnalysis,
  assumption: DataAssumption,
  evidence: Parameters<typeof dataFinding>[5],
): EnvelopeDraft {
  const table = findTable(analysis.tables, assumption.table);
  // A composite key is reported at the column the request carried (the natural key), the others related.
  const carried = evidence.api?.column;
  const ordered =
    carried && assumption.columns.length > 1 && assumption.columns.includes(carried)
      ? { ...assumption, columns: [...assumption.columns.filter((column) => column !== carried), carried] }
      : assumption;
  return dataFinding(
    context,
    run,
    "confirm_constraint",
    ordered,
    table,
    evidence,
    analysis.declaresForeignKeys,
  );
}

/**
 * Why no scratch trial may run. A SQLite copy never touches the live file; a PostgreSQL trial is a
 * rolled-back transaction on the live server, so it is only run where the target allows writes.
 */
export function scratchRefusal(context: ToolContext, analysis: DataAnalysis): string | undefined {
  if (!analysis.handle) return analysis.databaseNote ?? "the database cannot be reached";
  if (analysis.handle.kind === "postgres") {
    const environment = context.target?.profile.environment;
    if (environment?.mode === "external" && !environment.allow_writes) {
      return "the PostgreSQL database belongs to an external target that does not allow writes (not even rolled back)";
    }
  }
  return undefined;
}
