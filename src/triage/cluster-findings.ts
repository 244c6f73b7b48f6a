import type { DefectEnvelope } from "../envelope/envelope.ts";
import { canonicalLocation } from "../envelope/envelope.ts";
import { SEVERITIES, type Severity } from "../envelope/taxonomy.ts";
import { jaccard, locationSimilarity } from "../memory/similarity.ts";
import { normalisedWords } from "./normalise.ts";

// Which findings are one defect, and which defects are one root cause. Pure and deterministic, so the
// same findings always make the same tickets. Three ways to join two findings:
//   - the same fingerprint (the same defect seen twice, e.g. in two runs);
//   - the same root cause: the same source line, or the same table column that lacks a constraint
//     (a duplicate accepted, the 500 it later causes, the wrong status it returns are one ticket);
//   - the same class at a similar place with similar wording once volatile values are dropped (two
//     agents describing one defect differently), unless their discriminators name different checks.

export interface Cluster {
  /** The member a ticket is titled after: most severe, then most confident. */
  primary: DefectEnvelope;
  /** Every member, primary first. */
  members: DefectEnvelope[];
  /** The root cause is as severe as its worst symptom. */
  severity: Severity;
  /** Why members were joined, for the ticket and the log. */
  reasons: string[];
}

/** Joined as the same defect when their classes match, places are alike and these many words are shared. */
const SIMILAR_TEXT = 0.5;
const SIMILAR_PLACE = 0.5;

export function clusterFindings(findings: readonly DefectEnvelope[]): Cluster[] {
  const parent = findings.map((_, index) => index);
  const root = (index: number): number => {
    while (parent[index] !== index) index = parent[index] = parent[parent[index]!]!;
    return index;
  };
  const reasons = new Map<number, string[]>();
  const join = (left: number, right: number, reason: string) => {
    const [a, b] = [root(left), root(right)];
    if (a === b) return;
    parent[b] = a;
    reasons.set(a, [...(reasons.get(a) ?? []), ...(reasons.get(b) ?? []), reason]);
  };

  const byKey = new Map<string, number>();
  for (const [index, finding] of findings.entries()) {
    for (const key of [`fingerprint ${finding.dedupe.fingerprint}`, ...rootCauseKeys(finding)]) {
      const first = byKey.get(key);
      if (first === undefined) byKey.set(key, index);
      else join(first, index, `${findings[first]!.id} and ${finding.id}: same ${key}`);
    }
  }
  const words = findings.map(wordsOf);
  for (let left = 0; left < findings.length; left += 1) {
    for (let right = left + 1; right < findings.length; right += 1) {
      if (root(left) === root(right)) continue;
      const [a, b] = [findings[left]!, findings[right]!];
      if (a.domain !== b.domain || a.defect_class !== b.defect_class) continue;
      if (distinctChecks(a, b)) continue;
      const place = locationSimilarity(a.location, b.location);
      const text = jaccard(words[left]!, words[right]!);
      if (place >= SIMILAR_PLACE && text >= SIMILAR_TEXT) {
        join(left, right, `${a.id} and ${b.id}: same ${a.defect_class} at a similar place, worded alike`);
      }
    }
  }

  const groups = new Map<number, DefectEnvelope[]>();
  for (const [index, finding] of findings.entries()) {
    const group = groups.get(root(index)) ?? [];
    group.push(finding);
    groups.set(root(index), group);
  }
  const clusters = [...groups.entries()].map(([index, members]): Cluster => {
    const ordered = [...members].sort(byImportance);
    return {
      primary: ordered[0]!,
      members: ordered,
      severity: ordered[0]!.severity,
      reasons: reasons.get(index) ?? [],
    };
  });
  // Most severe first, then the widest: under a ticket cap the tickets that matter most are filed.
  return clusters.sort(
    (left, right) =>
      rank(left.severity) - rank(right.severity) ||
      right.members.length - left.members.length ||
      left.primary.id.localeCompare(right.primary.id),
  );
}

/**
 * Keys naming a root cause: the source line a finding points at, and each table column it involves
 * (`table.column` locations, the primary or related). A column joins findings only outside performance,
 * where a column names a missing index, a different fix from a missing constraint.
 */
export function rootCauseKeys(finding: DefectEnvelope): string[] {
  const keys: string[] = [];
  const source = finding.location.source;
  if (source?.line !== undefined) {
    keys.push(`source ${canonicalLocation("file", source.file)}:${source.line}`);
  }
  if (finding.domain !== "performance") {
    for (const place of [finding.location, ...(finding.location.related ?? [])]) {
      if (place.kind === "table" && place.value.includes(".")) {
        keys.push(`column ${canonicalLocation("table", place.value)}`);
      }
    }
  }
  return keys;
}

/**
 * Whether two findings name different checks (`graphql-batching` and `graphql-depth`, an OS command and a
 * SQL injection) or different GraphQL fields behind one endpoint: then they are two defects however alike
 * their wording. The input they were found in (`body:host`, `query:q`) is left out: two inputs of one
 * operation that reach one flaw are one defect.
 */
export function distinctChecks(left: DefectEnvelope, right: DefectEnvelope): boolean {
  const [a, b] = [left.dedupe.discriminator, right.dedupe.discriminator];
  return a !== undefined && b !== undefined && checkOf(a) !== checkOf(b);
}

function checkOf(discriminator: string): string {
  return discriminator
    .trim()
    .toLowerCase()
    .replace(/(^|:)(?:query|path|header|cookie|body|form):[^:@]*/, "");
}

function wordsOf(finding: DefectEnvelope): Set<string> {
  const text = [finding.title, ...finding.evidence.map((item) => item.description)].join(" ");
  return normalisedWords(text);
}

function rank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

function byImportance(left: DefectEnvelope, right: DefectEnvelope): number {
  return (
    rank(left.severity) - rank(right.severity) ||
    right.confidence - left.confidence ||
    left.id.localeCompare(right.id)
  );
}
