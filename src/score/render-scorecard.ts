import type { PlaceRef } from "./match-location.ts";
import type { Scorecard } from "./score.ts";

// The human form of a scorecard: the headline numbers, a per-domain table, then the lists a person acts on
// (missed defects, false positives, unlisted findings to add to the ledger).

export interface ScorecardHeading {
  runId?: string;
  ledgerFile?: string;
}

export function renderScorecard(card: Scorecard, heading: ScorecardHeading = {}): string {
  const lines: string[] = [];
  const context = [
    heading.runId !== undefined ? `run ${heading.runId}` : undefined,
    `target ${card.target}`,
    heading.ledgerFile !== undefined ? `ledger ${heading.ledgerFile}` : undefined,
    `threshold ${card.threshold}`,
  ].filter((part) => part !== undefined);
  lines.push(`Scorecard  ${context.join(" · ")}`, "");

  const fixedNote = card.fixed_defects > 0 ? `; ${card.fixed_defects} fixed, not scored` : "";
  const matchedFindings = card.true_positives + card.duplicate_count;
  lines.push(
    ...table([
      [
        "recall",
        formatRatio(card.recall),
        `${card.true_positives} of ${card.defects} defects found${fixedNote}`,
      ],
      [
        "precision",
        formatRatio(card.precision),
        `${card.true_positives} true, ${card.false_positive_count} false positive, ${card.unlisted_count} unlisted`,
      ],
      [
        "duplicates",
        formatRatio(card.duplicates),
        `${card.duplicate_count} of ${matchedFindings} matched findings`,
      ],
      ["class agreement", formatRatio(card.class_agreement), "of true positives"],
      ["severity agreement", formatRatio(card.severity_agreement), "of true positives"],
      [
        "cost per accepted",
        card.cost_per_accepted_usd === null ? "-" : `$${card.cost_per_accepted_usd.toFixed(4)}`,
        card.cost_usd === null ? "run cost unknown" : `run cost $${card.cost_usd.toFixed(4)}`,
      ],
      [
        "findings",
        String(card.findings),
        `fileable; ${card.not_fileable} not fileable, ${card.ignored.length} on fixed defects (ignored)`,
      ],
    ]).map((line) => `  ${line}`),
  );

  const domains = Object.entries(card.by_domain);
  if (domains.length > 0) {
    lines.push("", "By domain");
    const rows = domains.map(([domain, numbers]) => [
      domain,
      String(numbers.defects),
      String(numbers.true_positives),
      String(numbers.false_positives),
      String(numbers.unlisted),
      formatRatio(numbers.recall),
      formatRatio(numbers.precision),
    ]);
    const header = ["domain", "defects", "found", "false+", "unlisted", "recall", "precision"];
    lines.push(...table([header, ...rows]).map((line) => `  ${line}`));
  }

  section(
    lines,
    `Missed defects (${card.missed.length})`,
    card.missed.map((defect) => [
      defect.id,
      `${defect.domain}/${defect.class}`,
      defect.severity,
      defect.locations.map(formatPlace).join(", "),
    ]),
  );
  section(
    lines,
    `False positives (${card.false_positives.length})`,
    card.false_positives.map((finding) => [
      finding.envelope_id,
      `matches ${finding.not_defect}`,
      formatPlace(finding.location),
      finding.title,
    ]),
  );
  section(
    lines,
    `Unlisted findings (${card.unlisted.length}) — a real defect here belongs in the ledger`,
    card.unlisted.map((finding) => [
      finding.envelope_id,
      `${finding.domain}/${finding.defect_class}`,
      formatPlace(finding.location),
      finding.title,
    ]),
  );
  return `${lines.join("\n")}\n`;
}

function section(lines: string[], title: string, rows: string[][]) {
  if (rows.length === 0) return;
  lines.push("", title, ...table(rows).map((line) => `  ${line}`));
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

function formatRatio(value: number | null): string {
  return value === null ? "-" : value.toFixed(2);
}

function formatPlace(place: PlaceRef): string {
  return `${place.kind} ${place.value}`;
}
