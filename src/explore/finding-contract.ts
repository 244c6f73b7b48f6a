import { EVIDENCE_KINDS, type ExploreFinding } from "./run-file.ts";

// What makes a finding checkable by someone who was not there: what was expected, what was seen, how to get
// there again and the evidence on disk. A finding that misses any of it is kept (it may still be a real
// lead) but is held out of the verdict, so a vague claim can never fail a run.

export type ContractCheck = { valid: true } | { valid: false; missing: string[] };

const nonEmptyText = (value: unknown): boolean => typeof value === "string" && value.trim() !== "";

/** Checks one finding as reported (it may be partial) and names every field that fails the contract. */
export function checkFinding(finding: Partial<ExploreFinding> | Record<string, unknown>): ContractCheck {
  const given = finding as Record<string, unknown>;
  const missing: string[] = [];
  if (given.kind !== "issue" && given.kind !== "warning") missing.push("kind");
  const severity = given.severity;
  if (typeof severity !== "number" || !Number.isInteger(severity) || severity < 1 || severity > 5)
    missing.push("severity");
  for (const field of ["title", "screen", "expected", "observed"]) {
    if (!nonEmptyText(given[field])) missing.push(field);
  }
  const repro = given.repro;
  if (!Array.isArray(repro) || repro.length === 0 || !repro.every(nonEmptyText)) missing.push("repro");
  const evidence = given.evidence;
  const evidenceValid =
    Array.isArray(evidence) &&
    evidence.length > 0 &&
    evidence.every(
      (item) =>
        item !== null &&
        typeof item === "object" &&
        (EVIDENCE_KINDS as readonly unknown[]).includes((item as Record<string, unknown>).kind) &&
        nonEmptyText((item as Record<string, unknown>).path),
    );
  if (!evidenceValid) missing.push("evidence");
  const step = given.step;
  if (typeof step !== "number" || !Number.isInteger(step) || step < 1) missing.push("step");
  return missing.length === 0 ? { valid: true } : { valid: false, missing };
}

export interface SortedFindings {
  valid: ExploreFinding[];
  failedContract: Array<{ finding: ExploreFinding; missing: string[] }>;
}

export function sortByContract(findings: readonly ExploreFinding[]): SortedFindings {
  const sorted: SortedFindings = { valid: [], failedContract: [] };
  for (const finding of findings) {
    const checked = checkFinding(finding);
    if (checked.valid) sorted.valid.push(finding);
    else sorted.failedContract.push({ finding, missing: checked.missing });
  }
  return sorted;
}
