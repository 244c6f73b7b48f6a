import { DOMAINS, SEVERITIES } from "../envelope/taxonomy.ts";
import { escapeHtml as h, safeImageSource } from "./html-text.ts";
import type { ReportEvidence } from "./report-evidence.ts";
import type { ReportFinding, ReportModel } from "./report-model.ts";
import { renderTrendChart, SEVERITY_COLOURS } from "./trend-chart.ts";

// The run report as one self-contained HTML file: inline CSS, inline SVG, screenshots as data: URIs, no
// script and no external URL, and a Content-Security-Policy that forbids both, so it can be opened from
// a mail or a CI artifact without reaching anything. Every piece of run text is escaped through `h`.

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:24px;color:#111827}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
table{border-collapse:collapse;margin:4px 0}th,td{border:1px solid #e5e7eb;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f9fafb}td.n{text-align:right}.muted{color:#6b7280}
.badge{display:inline-block;border-radius:3px;padding:0 6px;color:#fff;font-size:12px;margin-right:4px}
.tag{display:inline-block;border:1px solid #d1d5db;border-radius:3px;padding:0 5px;font-size:12px;margin-right:4px}
details{border:1px solid #e5e7eb;border-radius:4px;margin:6px 0;padding:4px 10px}summary{cursor:pointer}
pre{background:#f3f4f6;padding:8px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-word;font-size:12px}
img{max-width:100%;border:1px solid #d1d5db}dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}dt{color:#6b7280}dd{margin:0}
`;

export function renderHtml(model: ReportModel): string {
  const title = `qaas report: ${model.target}, run ${model.runId}`;
  return [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(title)}</title><style>${STYLE}</style></head><body>`,
    header(model),
    summary(model),
    changes(model),
    `<h2>Trend</h2><p class="muted">Findings per run of ${h(model.target)} by severity (${model.trend.length} run(s), this one last).</p>${renderTrendChart(model.trend)}`,
    findings(model),
    agents(model),
    blindSpots(model),
    spend(model),
    `<p class="muted">Generated ${h(model.generatedAt)} by qaas.</p>`,
    "</body></html>",
    "",
  ].join("\n");
}

function header(model: ReportModel): string {
  const source = model.commit
    ? `${model.commit.slice(0, 12)}${model.branch ? ` on ${model.branch}` : ""}${model.dirty ? " (dirty)" : ""}`
    : "unknown commit";
  return `<h1>${h(model.target)}: ${model.findings.length} finding(s)</h1>
<dl><dt>run</dt><dd>${h(model.runId)} (${h(model.mode)}, ${h(model.status)})</dd>
<dt>source</dt><dd>${h(source)}</dd>
<dt>started</dt><dd>${h(model.started)}${model.finished ? ` · finished ${h(model.finished)}` : ""}</dd></dl>`;
}

function badge(severity: string): string {
  return `<span class="badge" style="background:${SEVERITY_COLOURS[severity] ?? "#6b7280"}">${h(severity)}</span>`;
}

function summary(model: ReportModel): string {
  const domains = DOMAINS.filter((domain) =>
    model.findings.some((finding) => finding.envelope.domain === domain),
  );
  const count = (severity: string, domain?: string) =>
    model.findings.filter(
      (finding) =>
        finding.envelope.severity === severity &&
        (domain === undefined || finding.envelope.domain === domain),
    ).length;
  const rows = SEVERITIES.map(
    (severity) =>
      `<tr><th>${badge(severity)}</th>${domains.map((domain) => `<td class="n">${count(severity, domain) || ""}</td>`).join("")}<td class="n"><b>${count(severity)}</b></td></tr>`,
  ).join("");
  const held = model.findings.filter((finding) => finding.envelope.tracker.state === "held").length;
  return `<h2>Summary</h2>
<table><tr><th>severity</th>${domains.map((domain) => `<th>${h(domain)}</th>`).join("")}<th>total</th></tr>${rows}</table>
<p>${model.findings.length} finding(s)${held > 0 ? `, ${held} held for a person (not fileable as they stand)` : ""}.</p>`;
}

function changes(model: ReportModel): string {
  if (!model.previousRunId) {
    return `<h2>Since the previous run</h2><p>This is the first run of ${h(model.target)} in this store: every finding is new.</p>`;
  }
  const newCount = model.findings.filter((finding) => finding.change === "new").length;
  const fixed =
    model.fixed.length === 0
      ? ""
      : `<table><tr><th>severity</th><th>class</th><th>title</th><th>location</th></tr>${model.fixed
          .map(
            (finding) =>
              `<tr><td>${badge(finding.severity)}</td><td>${h(finding.defect_class)}</td><td>${h(finding.title)}</td><td>${h(finding.location)}</td></tr>`,
          )
          .join("")}</table>`;
  return `<h2>Since the previous run</h2>
<p>Compared by fingerprint with run ${h(model.previousRunId)}: <b>${newCount}</b> new, <b>${model.findings.length - newCount}</b> recurring, <b>${model.fixed.length}</b> not found again (fixed, or not reached this time: see what the run could not reach).</p>${fixed}`;
}

function findings(model: ReportModel): string {
  if (model.findings.length === 0) return "<h2>Findings</h2><p>No findings.</p>";
  return `<h2>Findings</h2>${model.findings.map(finding).join("\n")}`;
}

function finding(item: ReportFinding): string {
  const { envelope } = item;
  const source = envelope.location.source
    ? ` (${h(envelope.location.source.file)}${envelope.location.source.line ? `:${envelope.location.source.line}` : ""})`
    : "";
  const related = envelope.location.related?.length
    ? `<dt>also at</dt><dd>${envelope.location.related.map((place) => h(`${place.kind} ${place.value}`)).join("<br>")}</dd>`
    : "";
  const steps = envelope.reproduction.steps.length
    ? `<dt>steps</dt><dd><ol>${envelope.reproduction.steps.map((step) => `<li>${h(step)}</li>`).join("")}</ol></dd>`
    : "";
  const open = envelope.severity === "critical" || envelope.severity === "high" ? " open" : "";
  return `<details${open} id="${h(envelope.id)}"><summary>${badge(envelope.severity)}<span class="tag">${h(item.change)}</span><span class="tag">${h(envelope.domain)} / ${h(envelope.defect_class)}</span> ${h(envelope.title)}</summary>
<p>${h(envelope.summary)}</p>
<dl><dt>location</dt><dd>${h(`${envelope.location.kind} ${envelope.location.value}`)}${source}</dd>${related}
<dt>impact</dt><dd>${h(envelope.impact)}</dd>
<dt>confidence</dt><dd>${envelope.confidence}${envelope.reproduction.flake_rate !== undefined ? ` · flake rate ${envelope.reproduction.flake_rate}` : ""}</dd>
<dt>state</dt><dd>${h(envelope.tracker.state)}${envelope.tracker.key ? ` ${h(envelope.tracker.key)}` : ""}</dd>
<dt>found by</dt><dd>${h(envelope.discovered_by)} at ${h(envelope.discovered_at)}</dd>
<dt>fingerprint</dt><dd>${h(envelope.dedupe.fingerprint)}</dd>${steps}
${envelope.reproduction.test ? `<dt>test</dt><dd><code>${h(envelope.reproduction.test.command)}</code></dd>` : ""}</dl>
${envelope.reproduction.curl ? `<p><b>curl</b></p><pre>${h(envelope.reproduction.curl)}</pre>` : ""}
${item.evidence.map(evidence).join("\n")}
</details>`;
}

function evidence(item: ReportEvidence): string {
  const heading = `<p><b>${h(item.kind)}</b>: ${h(item.description)}${item.uri ? ` <span class="muted">${h(item.uri)}</span>` : ""}</p>`;
  if (item.problem) return `${heading}<p class="muted">not shown: ${h(item.problem)}</p>`;
  if (item.image) {
    const source = safeImageSource(item.image);
    return source ? `${heading}<img alt="${h(item.description)}" src="${source}">` : heading;
  }
  if (item.text !== null) return `${heading}<pre>${h(item.text)}${item.truncated ? "\n… (cut)" : ""}</pre>`;
  return heading;
}

function agents(model: ReportModel): string {
  if (model.agents.length === 0) return "<h2>Agents</h2><p>No agent ran.</p>";
  const rows = model.agents
    .map(
      (agent) =>
        `<tr><td>${h(agent.agent)}</td><td>${h(agent.outcome)}</td><td class="n">${agent.invocations}</td><td class="n">${agent.turns}</td><td class="n">$${agent.cost_usd.toFixed(4)}</td><td class="n">${agent.tokens}</td></tr>`,
    )
    .join("");
  return `<h2>Agents</h2><table><tr><th>agent</th><th>last outcome</th><th>invocations</th><th>turns</th><th>cost</th><th>tokens</th></tr>${rows}</table>`;
}

function blindSpots(model: ReportModel): string {
  if (model.blindSpots.length === 0)
    return "<h2>What the run could not reach</h2><p>Every agent ran with all its tools; nothing was skipped or refused.</p>";
  const rows = model.blindSpots
    .map(
      (spot) =>
        `<tr><td>${h(spot.kind)}</td><td>${h(spot.agent ?? "")}</td><td>${h(spot.detail)}</td><td class="n">${spot.count}</td></tr>`,
    )
    .join("");
  return `<h2>What the run could not reach</h2><p class="muted">Skipped and failed agents, tools that are not available, tool calls that failed or were refused, a target that stopped answering, a budget that ran out: defects behind these were not looked for.</p>
<table><tr><th>kind</th><th>agent</th><th>why</th><th>times</th></tr>${rows}</table>`;
}

function spend(model: ReportModel): string {
  const { spend: budget } = model;
  const cap = (used: string, limit: string | null) => (limit === null ? used : `${used} of ${limit}`);
  return `<h2>Spend</h2><p>${h(cap(`$${budget.spent_usd.toFixed(4)}`, budget.usd === null ? null : `$${budget.usd.toFixed(2)}`))}, ${h(
    cap(`${budget.spent_tokens} tokens`, budget.tokens === null ? null : String(budget.tokens)),
  )}${budget.exceeded ? " — <b>the budget was reached: results are partial</b>" : ""}.</p>`;
}
