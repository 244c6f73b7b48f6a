import type { ShowView } from "./show-view.ts";
import { formatClock, formatCost, formatTimestamp, renderTable } from "./text-table.ts";

// The human form of `qaas show <run>`: a header, the timeline, one row per agent, the findings.

export function renderShow(view: ShowView): string {
  const sections = [
    header(view),
    `Timeline (UTC)\n${
      view.timeline.length === 0
        ? "  (the ledger is empty)"
        : indent(
            renderTable(
              [
                { header: "seq", value: (row) => String(row.seq), align: "right" },
                { header: "time", value: (row) => formatClock(row.at) },
                { header: "kind", value: (row) => row.kind },
                { header: "agent", value: (row) => row.agent ?? "" },
                { header: "summary", value: (row) => row.summary },
              ],
              view.timeline,
            ),
          )
    }`,
    `Agents\n${
      view.agents.length === 0
        ? "  (no agent ran)"
        : indent(
            renderTable(
              [
                { header: "agent", value: (row) => row.agent },
                { header: "invocations", value: (row) => String(row.invocations), align: "right" },
                { header: "cost", value: (row) => formatCost(row.cost_usd), align: "right" },
                { header: "tokens", value: (row) => String(row.tokens), align: "right" },
                { header: "turns", value: (row) => String(row.turns), align: "right" },
                { header: "outcome", value: (row) => row.outcome },
              ],
              view.agents,
            ),
          )
    }`,
    `Findings (${view.findings.length})\n${
      view.findings.length === 0
        ? "  (none)"
        : indent(
            renderTable(
              [
                { header: "id", value: (row) => row.id },
                { header: "severity", value: (row) => row.severity },
                { header: "class", value: (row) => row.defect_class },
                { header: "state", value: (row) => (row.ticket ? `${row.state} ${row.ticket}` : row.state) },
                { header: "title", value: (row) => row.title },
              ],
              view.findings,
            ),
          )
    }`,
  ];
  return `${sections.join("\n\n")}\n`;
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
