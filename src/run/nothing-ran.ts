import { QaasError } from "../errors.ts";
import type { RunReport } from "./build-report.ts";

// A run whose every agent failed or was skipped found nothing because nothing looked, which must not read
// as a clean "0 findings" with exit code 0. A run stopped by its budget did run: it is not this case.

const DID_NOT_RUN = new Set(["dead_lettered", "skipped"]);

/** Throws RUN_NOTHING_RAN, naming why each agent did not run, when no agent invocation ran to an end. */
export function assertSomethingRan(report: RunReport): void {
  if (report.status !== "completed" || report.agents.length === 0) return;
  const ran = report.agents.some((row) =>
    Object.entries(row.outcomes).some(([outcome, count]) => !DID_NOT_RUN.has(outcome) && count > 0),
  );
  if (ran) return;
  const reasons = [
    ...report.dead_lettered.map((row) => `${row.agent} failed: ${row.error}`),
    ...report.skipped.map((row) => `${row.agent} skipped: ${row.reason}`),
  ];
  throw new QaasError(
    "RUN_NOTHING_RAN",
    `run ${report.run_id}: no agent ran, so its ${report.findings.total} finding(s) mean nothing:\n` +
      [...new Set(reasons)].map((reason) => `  - ${reason}`).join("\n"),
  );
}
