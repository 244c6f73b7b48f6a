import path from "node:path";
import { buildShowView, type ShowView } from "../cli/show-view.ts";
import type { DefectEnvelope } from "../envelope/envelope.ts";
import { SEVERITIES } from "../envelope/taxonomy.ts";
import { readEnvelopes } from "../score/read-run.ts";
import type { LedgerEntry } from "../store/ledger-kinds.ts";
import { RunStore } from "../store/run-store.ts";
import { numberField, stringField } from "../store/run-summary.ts";
import { type ReportEvidence, readEvidence } from "./report-evidence.ts";
import { type RememberedFinding, readRunHistory, type TrendPoint } from "./run-history.ts";

// Everything the report formats say about one run, read once from the run's files (ledger, envelopes,
// artifacts, run.json) and the earlier runs of its target. It does not need report.json: the REPORTER
// builds it before the run has finished and written that file. Every renderer takes this model only.

export type FindingChange = "new" | "recurring";

export interface ReportFinding {
  envelope: DefectEnvelope;
  change: FindingChange;
  evidence: ReportEvidence[];
}

/** One agent invocation that ended: how it ended, and why when it did not complete. */
export interface InvocationOutcome {
  agent: string;
  invocation: string;
  outcome: string;
  detail: string | null;
  turns: number;
  cost_usd: number;
}

export interface BlindSpot {
  kind:
    | "skipped-agent"
    | "failed-agent"
    | "unavailable-tool"
    | "tool-error"
    | "denied"
    | "target-down"
    | "budget"
    | "unreadable-finding";
  agent: string | null;
  detail: string;
  /** How many times the same thing happened in the run. */
  count: number;
}

/** The run's header is what `qaas show` says of it. */
export interface ReportModel
  extends Pick<
    ShowView,
    "mode" | "target" | "status" | "started" | "finished" | "commit" | "branch" | "dirty"
  > {
  runId: string;
  /** Most severe first, then in the order they were found. */
  findings: ReportFinding[];
  /** Findings of the previous run of this target that this run did not find again. */
  fixed: RememberedFinding[];
  previousRunId: string | null;
  agents: ShowView["agents"];
  invocations: InvocationOutcome[];
  blindSpots: BlindSpot[];
  spend: ShowView["budget"];
  trend: TrendPoint[];
  generatedAt: string;
}

export interface ReportOptions {
  /** Read artifact contents (screenshots, exchanges, tests) into the model; off for formats that link only. */
  evidence?: boolean;
  now?: Date;
}

export function loadReportModel(home: string, runId: string, options: ReportOptions = {}): ReportModel {
  return buildReportModel(RunStore.open(home, runId), options);
}

export function buildReportModel(store: RunStore, options: ReportOptions = {}): ReportModel {
  const view = buildShowView(store);
  const { entries } = store.readLedger();
  const { envelopes, skipped } = readEnvelopes(store.envelopesDir);
  const history = readRunHistory(store.home, store.runId, view.target, view.started);
  const current = new Set(envelopes.map((envelope) => envelope.dedupe.fingerprint));
  const findings = [...envelopes]
    .sort(
      (left, right) =>
        severityRank(left.severity) - severityRank(right.severity) ||
        Date.parse(left.discovered_at) - Date.parse(right.discovered_at) ||
        left.id.localeCompare(right.id),
    )
    .map((envelope) => ({
      envelope,
      change: history.previous.has(envelope.dedupe.fingerprint) ? ("recurring" as const) : ("new" as const),
      evidence: options.evidence === false ? [] : readEvidence(store, envelope),
    }));
  const blindSpots = blindSpotsOf(entries);
  for (const file of skipped) {
    blindSpots.push({
      kind: "unreadable-finding",
      agent: null,
      detail: `${path.basename(file.file)}: ${file.problems.join("; ")}`,
      count: 1,
    });
  }
  return {
    runId: store.runId,
    mode: view.mode,
    target: view.target,
    status: view.status,
    started: view.started,
    finished: view.finished,
    commit: view.commit,
    branch: view.branch,
    dirty: view.dirty,
    findings,
    fixed: [...history.previous.values()].filter((finding) => !current.has(finding.fingerprint)),
    previousRunId: history.previousRunId,
    agents: view.agents,
    invocations: invocationsOf(entries),
    blindSpots,
    spend: view.budget,
    trend: history.trend,
    generatedAt: (options.now ?? new Date()).toISOString(),
  };
}

export function severityRank(severity: string): number {
  const index = (SEVERITIES as readonly string[]).indexOf(severity);
  return index === -1 ? SEVERITIES.length : index;
}

function invocationsOf(entries: readonly LedgerEntry[]): InvocationOutcome[] {
  const outcomes: InvocationOutcome[] = [];
  for (const entry of entries) {
    const agent = entry.agent ?? stringField(entry.data, "agent") ?? "?";
    const invocation = String(entry.data.invocation ?? `seq-${entry.seq}`);
    const base = {
      agent,
      invocation,
      turns: numberField(entry.data, "turns") ?? 0,
      cost_usd: numberField(entry.data, "cost_usd") ?? 0,
    };
    if (entry.kind === "agent_finished")
      outcomes.push({ ...base, outcome: stringField(entry.data, "outcome") ?? "completed", detail: null });
    else if (entry.kind === "agent_failed")
      outcomes.push({ ...base, outcome: "failed", detail: stringField(entry.data, "error") ?? null });
    else if (entry.kind === "agent_skipped")
      outcomes.push({ ...base, outcome: "skipped", detail: stringField(entry.data, "reason") ?? null });
    else if (entry.kind === "agent_dead_lettered")
      outcomes.push({ ...base, outcome: "dead_lettered", detail: stringField(entry.data, "error") ?? null });
  }
  return outcomes;
}

/** What the run could not reach and why, each distinct cause once with how often it happened. */
function blindSpotsOf(entries: readonly LedgerEntry[]): BlindSpot[] {
  const spots = new Map<string, BlindSpot>();
  const add = (kind: BlindSpot["kind"], agent: string | null, detail: string) => {
    const key = `${kind}\u0000${agent ?? ""}\u0000${detail}`;
    const spot = spots.get(key);
    if (spot) spot.count += 1;
    else spots.set(key, { kind, agent, detail, count: 1 });
  };
  for (const entry of entries) {
    const agent = entry.agent ?? stringField(entry.data, "agent") ?? null;
    switch (entry.kind) {
      case "agent_skipped":
        add("skipped-agent", agent, stringField(entry.data, "reason") ?? "skipped");
        break;
      case "agent_failed":
      case "agent_dead_lettered":
        add("failed-agent", agent, stringField(entry.data, "error") ?? "failed");
        break;
      case "agent_started": {
        const unavailable = entry.data.unavailable_tools;
        if (Array.isArray(unavailable) && unavailable.length > 0)
          add(
            "unavailable-tool",
            agent,
            `tools not available in this version: ${unavailable.map(String).join(", ")}`,
          );
        break;
      }
      case "tool_called":
        if (entry.data.ok === false)
          add(
            "tool-error",
            agent,
            `${stringField(entry.data, "tool") ?? "?"}: ${stringField(entry.data, "error") ?? "failed"}`,
          );
        break;
      case "tool_denied":
        add(
          "denied",
          agent,
          `${stringField(entry.data, "tool") ?? "?"} denied (${stringField(entry.data, "rule") ?? "?"}): ${stringField(entry.data, "reason") ?? ""}`,
        );
        break;
      case "target_down":
        add("target-down", null, stringField(entry.data, "message") ?? "the target stopped answering");
        break;
      case "budget_exceeded":
        add(
          "budget",
          agent,
          `budget reached (${stringField(entry.data, "scope") ?? "run"}): later work was not dispatched`,
        );
        break;
      default:
        break;
    }
  }
  return [...spots.values()];
}
