import type { RunSummary } from "../store/run-summary.ts";
import { formatCost, formatTimestamp, renderTable } from "./text-table.ts";

export function renderRuns(runs: readonly RunSummary[], home: string): string {
  if (runs.length === 0) return `no runs in ${home} yet; start one with \`qaas run --mode <mode>\`\n`;
  const table = renderTable(
    [
      { header: "id", value: (run) => run.id },
      { header: "mode", value: (run) => run.mode },
      { header: "target", value: (run) => run.target },
      { header: "started (UTC)", value: (run) => formatTimestamp(run.started) },
      { header: "status", value: (run) => run.status },
      { header: "findings", value: (run) => String(run.findings), align: "right" },
      { header: "cost", value: (run) => formatCost(run.cost_usd), align: "right" },
    ],
    runs,
  );
  return `${table}\n`;
}
