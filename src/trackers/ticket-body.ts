import type { DefectEnvelope } from "../envelope/envelope.ts";
import type { Severity } from "../envelope/taxonomy.ts";

// The text of a ticket, composed from the findings it covers so every ticket reads alike whoever files
// it: one root cause, then each symptom with its place, evidence and reproduction. The fingerprint
// markers are added by the adapter, not here.

export function ticketBody(
  findings: readonly DefectEnvelope[],
  options: { severity: Severity; note?: string },
): string {
  const [primary] = findings;
  if (primary === undefined) return options.note ?? "";
  const lines = [
    primary.summary,
    "",
    `**Severity:** ${options.severity} · **Class:** ${primary.domain}/${primary.defect_class} · **Found by:** ${[...new Set(findings.map((finding) => finding.discovered_by))].join(", ")}`,
  ];
  if (primary.suggested_owner) lines.push(`**Suggested owner:** ${primary.suggested_owner}`);
  if (options.note) lines.push("", options.note);
  lines.push("", `## Impact`, "", primary.impact);
  lines.push("", findings.length === 1 ? "## Symptom" : `## Symptoms (${findings.length}, one root cause)`);
  for (const [index, finding] of findings.entries()) {
    lines.push("", `### ${index + 1}. ${finding.title}`, "", `- Where: ${place(finding)}`);
    lines.push(`- Finding: ${finding.id} (run ${finding.run_id}, ${finding.discovered_by})`);
    for (const item of finding.evidence) {
      const pointer = item.uri ?? (item.test ? `${item.test.path} (\`${item.test.command}\`)` : "");
      lines.push(`- Evidence (${item.kind}): ${item.description}${pointer ? ` — ${pointer}` : ""}`);
    }
    const test = finding.reproduction.test;
    if (test) lines.push(`- Failing test: ${test.path} — \`${test.command}\``);
    if (finding.reproduction.curl) lines.push("- Reproduce:", "", "```", finding.reproduction.curl, "```");
    else if (finding.reproduction.steps.length > 0) {
      lines.push("- Steps:", ...finding.reproduction.steps.map((step, number) => `  ${number + 1}. ${step}`));
    }
  }
  return lines.join("\n");
}

function place(finding: DefectEnvelope): string {
  const source = finding.location.source;
  const at = source ? ` (${source.file}${source.line ? `:${source.line}` : ""})` : "";
  return `${finding.location.kind} ${finding.location.value}${at}`;
}
