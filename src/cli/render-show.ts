import { SEVERITIES } from "../envelope/taxonomy.ts";
import type { FindingRow, ShowView } from "./show-view.ts";
import { formatClock, formatCost, formatTimestamp, renderTable } from "./text-table.ts";

// The human form of `qaas show <run>`: a header with the spend, the findings most severe first, one row
// per agent with its outcome; the raw timeline only when asked for (`--timeline`).

export interface RenderShowOptions {
  /** Append the raw ledger timeline (`--timeline`); by default a person sees findings, agents and spend. */
  timeline?: boolean;
}

export function renderShow(view: ShowView, options: RenderShowOptions = {}): string {
  const sections = [header(view), findings(view), agents(view)];
  if (options.timeline) sections.push(timeline(view));
  else sections.push("(the raw ledger timeline: qaas show <run> --timeline, or qaas trace <run>)");
  return `${sections.join("\n\n")}\n`;
}

/** Most severe first, one line each: what a person opening a run wants to know first. */
function findings(view: ShowView): string {
  if (view.findings.length === 0) return "Findings (0)\n  (none)";
  const bySeverity = new Map<string, FindingRow[]>();
  for (const row of [...view.findings].sort((left, right) => rank(left.severity) - rank(right.severity))) {
    bySeverity.set(row.severity, [...(bySeverity.get(row.severity) ?? []), row]);
  }
  const counts = [...bySeverity].map(([severity, rows]) => `${rows.length} ${severity}`).join(", ");
  const table = renderTable(
    [
      { header: "severity", value: (row: FindingRow) => row.severity },
      { header: "class", value: (row) => row.defect_class },
      { header: "state", value: (row) => (row.ticket ? `${row.state} ${row.ticket}` : row.state) },
      { header: "id", value: (row) => row.id },
      { header: "title", value: (row) => row.title },
    ],
    [...bySeverity.values()].flat(),
  );
  return `Findings (${view.findings.length}: ${counts})\n${indent(table)}`;
}

function agents(view: ShowView): string {
  if (view.agents.length === 0) return "Agents\n  (no agent ran)";
  return `Agents\n${indent(
    renderTable(
      [
        { header: "agent", value: (row: ShowView["agents"][number]) => row.agent },
        { header: "outcome", value: (row) => row.outcome },
        { header: "invocations", value: (row) => String(row.invocations), align: "right" },
        { header: "cost", value: (row) => formatCost(row.cost_usd), align: "right" },
        { header: "tokens", value: (row) => String(row.tokens), align: "right" },
        { header: "turns", value: (row) => String(row.turns), align: "right" },
      ],
      view.agents,
    ),
  )}`;
}

function timeline(view: ShowView): string {
  if (view.timeline.length === 0) return "Timeline (UTC)\n  (the ledger is empty)";
  return `Timeline (UTC)\n${indent(
    renderTable(
      [
        { header: "seq", value: (row: ShowView["timeline"][number]) => String(row.seq), align: "right" },
        { header: "time", value: (row) => formatClock(row.at) },
        { header: "kind", value: (row) => row.kind },
        { header: "agent", value: (row) => row.agent ?? "" },
        { header: "summary", value: (row) => row.summary },
      ],
      view.timeline,
    ),
  )}`;
}

function rank(severity: string): number {
  const index = (SEVERITIES as readonly string[]).indexOf(severity);
  return index === -1 ? SEVERITIES.length : index;
}

function header(view: ShowView): string {
  const source =
    view.commit === null
      ? "unknown commit"
      : `${view.commit.slice(0, 12)}${view.branch ? ` on ${view.branch}` : ""}${view.dirty ? " (dirty)" : ""}`;
  const { budget } = view;
  const limits = [
    budget.usd !== null
      ? `${formatCost(budget.spent_usd)} of ${formatCost(budget.usd)}`
      : formatCost(budget.spent_usd),
    budget.tokens !== null
      ? `${budget.spent_tokens} of ${budget.tokens} tokens`
      : `${budget.spent_tokens} tokens`,
  ].join(", ");
  const lines = [
    `Run ${view.id}`,
    `  mode     ${view.mode}`,
    `  target   ${view.target} @ ${source}`,
    `  status   ${view.status}`,
    `  started  ${formatTimestamp(view.started)}${view.finished ? `   finished ${formatTimestamp(view.finished)}` : ""}`,
    `  budget   ${limits}${budget.usd === null && budget.tokens === null ? " (no budget set)" : ""}${budget.exceeded ? "  EXCEEDED" : ""}`,
  ];
  if (view.seat) lines.push(`  seat     ${view.seat}`);
  return lines.join("\n");
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
