import { SEVERITIES } from "../envelope/taxonomy.ts";
import type { ReportModel } from "./report-model.ts";

// A summary short enough for a pull-request comment: counts, what changed since the previous run, the
// most severe findings one line each, and what the run could not reach. It never exceeds
// MARKDOWN_LIMIT characters (lines are dropped, never cut mid-way) and holds no links: the full report is
// the HTML file beside it. Finding text comes from the target (it may hold payloads), so Markdown and
// HTML syntax in it is escaped.

export const MARKDOWN_LIMIT = 4000;
const TOP_FINDINGS = 10;
const BLIND_SPOTS = 5;
const LINE_LIMIT = 200;

export function renderMarkdown(model: ReportModel, limit = MARKDOWN_LIMIT): string {
  const counts = SEVERITIES.map(
    (severity) =>
      `${severity} ${model.findings.filter((finding) => finding.envelope.severity === severity).length}`,
  ).join(" · ");
  const newCount = model.findings.filter((finding) => finding.change === "new").length;
  const changes = model.previousRunId
    ? `new ${newCount} · recurring ${model.findings.length - newCount} · not found again ${model.fixed.length} (since ${escapeMarkdown(model.previousRunId)})`
    : "first run of this target: every finding is new";
  const spend = `spend $${model.spend.spent_usd.toFixed(4)}, ${model.spend.spent_tokens} tokens${model.spend.exceeded ? " (budget reached: results are partial)" : ""}`;
  const head = [
    `### qaas ${escapeMarkdown(model.mode)} run on ${escapeMarkdown(model.target)}: ${model.findings.length} finding(s), ${escapeMarkdown(model.status)}`,
    "",
    `Run \`${model.runId.replaceAll("`", "")}\`${model.commit ? ` at ${escapeMarkdown(model.commit.slice(0, 12))}` : ""} · ${counts}`,
    "",
    `${changes} · ${spend}`,
  ];
  const findingLines = model.findings
    .slice(0, TOP_FINDINGS)
    .map(({ envelope, change }) =>
      cap(
        `- **${envelope.severity}** ${escapeMarkdown(envelope.defect_class)}: ${escapeMarkdown(envelope.title)} (${escapeMarkdown(`${envelope.location.kind} ${envelope.location.value}`)})${change === "new" ? " *new*" : ""}${envelope.tracker.state === "held" ? " *held*" : ""}`,
      ),
    );
  const moreFindings = model.findings.length - findingLines.length;
  const failedAgents = model.agents.filter((agent) => agent.outcome === "failed").map((agent) => agent.agent);
  const blindLines = model.blindSpots
    .filter((spot) => spot.kind !== "tool-error" && spot.kind !== "denied")
    .slice(0, BLIND_SPOTS)
    .map((spot) =>
      cap(
        `- ${spot.agent ? `${escapeMarkdown(spot.agent)}: ` : ""}${escapeMarkdown(spot.detail)}${spot.count > 1 ? ` (×${spot.count})` : ""}`,
      ),
    );

  const sections: string[][] = [head];
  if (findingLines.length > 0) sections.push(["", "**Most severe**", "", ...findingLines]);
  if (failedAgents.length > 0)
    sections.push(["", `Agents that failed: ${failedAgents.map(escapeMarkdown).join(", ")}`]);
  if (blindLines.length > 0) sections.push(["", "**Not reached**", "", ...blindLines]);
  return fitWithin(sections, moreFindings, limit);
}

/** Drops the least important lines (last findings first, then blind spots) until the text fits. */
function fitWithin(sections: string[][], moreFindings: number, limit: number): string {
  let omitted = moreFindings;
  const render = () => {
    const text = sections.map((section) => section.join("\n")).join("\n");
    return omitted > 0 ? `${text}\n\n…and ${omitted} more finding(s) in the full report.\n` : `${text}\n`;
  };
  let text = render();
  while (text.length > limit) {
    const findings = sections.find((section) => section.includes("**Most severe**"));
    const withLines =
      findings && findings.length > 4 ? findings : sections.findLast((section) => section.length > 4);
    if (withLines && withLines.length > 4) {
      if (withLines === findings) omitted += 1;
      withLines.pop();
    } else if (sections.length > 1) sections.pop();
    else return `${text.slice(0, limit - 2)}…\n`;
    text = render();
  }
  return text;
}

function cap(line: string): string {
  return line.length > LINE_LIMIT ? `${line.slice(0, LINE_LIMIT - 1)}…` : line;
}

/** Markdown and inline HTML in target-controlled text become literal characters. */
function escapeMarkdown(value: string): string {
  return value
    .replace(/\s+/g, " ")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replace(/[\\`*_[\]|~]/g, (character) => `\\${character}`);
}
