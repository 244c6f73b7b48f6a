import { QaasError } from "../errors.ts";
import { isLedgerKind, LEDGER_KINDS, type LedgerEntry } from "../store/ledger-kinds.ts";
import { compactData } from "./entry-summary.ts";
import { formatClock } from "./text-table.ts";

export interface TraceFilter {
  /** One kind or a comma-separated list. */
  kind?: string;
  agent?: string;
}

/** The entries a filter keeps; an unknown kind is an error listing the valid ones, not an empty result. */
export function filterTrace(entries: readonly LedgerEntry[], filter: TraceFilter): LedgerEntry[] {
  const kinds = filter.kind
    ?.split(",")
    .map((kind) => kind.trim())
    .filter((kind) => kind !== "");
  for (const kind of kinds ?? []) {
    if (!isLedgerKind(kind)) {
      throw new QaasError(
        "TRACE_KIND_UNKNOWN",
        `--kind "${kind}" is not a ledger kind (valid: ${LEDGER_KINDS.join(", ")})`,
      );
    }
  }
  const agent = filter.agent?.toLowerCase();
  return entries.filter(
    (entry) =>
      (kinds === undefined || kinds.length === 0 || kinds.includes(entry.kind)) &&
      (agent === undefined || (entry.agent ?? String(entry.data.agent ?? "")).toLowerCase() === agent),
  );
}

/** One line per entry, data in full (a trace is for digging, so nothing is cut). */
export function renderTrace(entries: readonly LedgerEntry[]): string {
  if (entries.length === 0) return "(no matching ledger entries)\n";
  return `${entries
    .map((entry) =>
      [
        `#${entry.seq}`,
        formatClock(entry.at),
        entry.kind,
        entry.agent ? `[${entry.agent}]` : "",
        compactData(entry.data),
      ]
        .filter((part) => part !== "")
        .join(" "),
    )
    .join("\n")}\n`;
}
