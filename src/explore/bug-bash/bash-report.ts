import type { LedgerEntry } from "../../store/ledger-kinds.ts";

// The bug-bash section of a run's report, read from the ledger alone: the charter sessions, then every
// candidate with its verdict — confirmed ones with the finding they became, rejected ones with the reason.
// A candidate without a verdict yet (the run stopped before its repro test ran) is listed as unverified.

export interface BugBashReport {
  sessions: Array<{
    charter: string;
    persona: string;
    text: string;
    verdict: string;
    ended: string | null;
    steps: number;
    findings: number;
  }>;
  confirmed: Array<{ candidate: string; finding_id: string | null; title: string; failed_at: string | null }>;
  rejected: Array<{ candidate: string; title: string; reason: string; note: string | null }>;
  unverified: Array<{ candidate: string; title: string }>;
}

export function bugBashReport(entries: readonly LedgerEntry[]): BugBashReport | undefined {
  const sessions = entries.filter((entry) => entry.kind === "charter_session");
  const candidates = entries.filter((entry) => entry.kind === "bash_candidate");
  if (sessions.length === 0 && candidates.length === 0) return undefined;
  // The latest verdict of a candidate wins (a resumed run may verify it again).
  const verdicts = new Map<string, Record<string, unknown>>();
  for (const entry of entries) {
    if (entry.kind === "bash_verdict") verdicts.set(String(entry.data.candidate), entry.data);
  }
  const report: BugBashReport = {
    sessions: sessions.map(({ data }) => ({
      charter: String(data.charter),
      persona: String(data.persona),
      text: String(data.text),
      verdict: String(data.verdict),
      ended: (data.ended as string | null) ?? null,
      steps: Number(data.steps ?? 0),
      findings: Number(data.findings ?? 0),
    })),
    confirmed: [],
    rejected: [],
    unverified: [],
  };
  for (const { data } of candidates) {
    const candidate = String(data.candidate);
    const title = String(data.title);
    const verdict = verdicts.get(candidate);
    if (!verdict) report.unverified.push({ candidate, title });
    else if (verdict.status === "confirmed") {
      report.confirmed.push({
        candidate,
        finding_id: (verdict.finding_id as string | undefined) ?? null,
        title,
        failed_at: (verdict.failedAt as string | undefined) ?? null,
      });
    } else {
      report.rejected.push({
        candidate,
        title,
        reason: String(verdict.reason),
        note: (verdict.note as string | undefined) ?? null,
      });
    }
  }
  return report;
}

/** The same section as text, for the run's summary. */
export function renderBugBash(report: BugBashReport): string {
  const lines = [`bug bash: ${report.sessions.length} charter session(s)`];
  for (const session of report.sessions) {
    lines.push(
      `  ${session.charter} as ${session.persona}: ${session.verdict} (${session.ended ?? "?"}, ${session.steps} step(s), ${session.findings} finding(s)) — ${session.text}`,
    );
  }
  lines.push(`confirmed (${report.confirmed.length}):`);
  for (const row of report.confirmed)
    lines.push(`  ${row.candidate} ${row.title} → ${row.finding_id ?? "?"} (failed on "${row.failed_at}")`);
  lines.push(`rejected (${report.rejected.length}):`);
  for (const row of report.rejected)
    lines.push(`  ${row.candidate} [${row.reason}] ${row.title}${row.note ? `: ${row.note}` : ""}`);
  if (report.unverified.length > 0) {
    lines.push(`unverified (${report.unverified.length}): the run ended before their repro tests ran`);
    for (const row of report.unverified) lines.push(`  ${row.candidate} ${row.title}`);
  }
  return `${lines.join("\n")}\n`;
}
