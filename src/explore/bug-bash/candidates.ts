import { checkFinding } from "../finding-contract.ts";
import type { ExploreFinding, ExploreRunFile, FindingCheck } from "../run-file.ts";
import type { Charter } from "./charters.ts";

// Merging what the charter sessions reported into one list of candidates. Each candidate is either still
// to be proven by its repro test (`pending`) or already rejected here, with the reason: a second report of
// the same check is a duplicate, a claim that misses what makes it checkable is an artifact of the
// exploration, and a page refused to a persona that is not allowed there is the design working.

export const REJECT_REASONS = [
  "artifact",
  "environment",
  "design",
  "fixture",
  "did-not-reproduce",
  "duplicate",
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface CharterSession {
  charter: Charter;
  run: ExploreRunFile;
}

export interface Candidate {
  /** BB-1, BB-2, … in the order the sessions reported them. */
  id: string;
  charter: string;
  persona: string;
  finding: ExploreFinding;
  /** Same key, same candidate: the check that failed and where. */
  key: string;
  status: "pending" | "rejected";
  reason?: RejectReason;
  note?: string;
  duplicateOf?: string;
}

export function candidateKey(finding: ExploreFinding, persona: string): string {
  const check = finding.check;
  if (!check) return `claim|${finding.screen}|${finding.title.toLowerCase()}`;
  // A missing text or a failing form is the same defect whoever saw it; a page's status depends on who asks.
  if (check.kind === "page-status") return `page-status|${pathOf(check.page)}|${persona}`;
  if (check.kind === "text-shown") return `text-shown|${pathOf(check.page)}|${check.text}`;
  return `form-submit|${pathOf(check.page)}`;
}

export function mergeCandidates(sessions: readonly CharterSession[]): Candidate[] {
  const candidates: Candidate[] = [];
  const firstOf = new Map<string, Candidate>();
  for (const { charter, run } of sessions) {
    for (const finding of run.findings) {
      const id = `BB-${candidates.length + 1}`;
      const key = candidateKey(finding, charter.persona);
      const base = { id, charter: charter.id, persona: charter.persona, finding, key };
      const first = firstOf.get(key);
      if (first) {
        candidates.push({
          ...base,
          status: "rejected",
          reason: "duplicate",
          duplicateOf: first.id,
          note: `the same check as ${first.id} (charter ${first.charter})`,
        });
        continue;
      }
      const candidate: Candidate = { ...base, ...screen(finding, charter.persona) };
      firstOf.set(key, candidate);
      candidates.push(candidate);
    }
  }
  return candidates;
}

/** The rejections that need no test: a claim nobody can check, a refusal by design. */
function screen(finding: ExploreFinding, persona: string): Pick<Candidate, "status" | "reason" | "note"> {
  const contract = checkFinding(finding);
  if (!contract.valid) {
    return {
      status: "rejected",
      reason: "artifact",
      note: `the claim misses ${contract.missing.join(", ")}, so no one can check it`,
    };
  }
  if (!finding.check) {
    return {
      status: "rejected",
      reason: "artifact",
      note: "no deterministic check decided it (a judgement of the explorer), so no repro test can encode it",
    };
  }
  if (isRefusal(finding.check)) {
    return {
      status: "rejected",
      reason: "design",
      note: `${finding.check.page} refused ${persona} with ${finding.check.status}: access control answering as designed`,
    };
  }
  return { status: "pending" };
}

function isRefusal(check: FindingCheck): check is Extract<FindingCheck, { kind: "page-status" }> {
  return check.kind === "page-status" && (check.status === 401 || check.status === 403);
}

function pathOf(page: string): string {
  try {
    return new URL(page, "http://x").pathname;
  } catch {
    return page;
  }
}
