import { type DefectEnvelope, isFileable } from "../envelope/envelope.ts";
import { DOMAINS, type Domain } from "../envelope/taxonomy.ts";
import type { GoldenDefect, GoldenLedger, LedgerLocation } from "./golden-ledger.ts";
import { anyLocationMatches, findingLocations, type PlaceRef, StaticRoutes } from "./match-location.ts";

// Compares a run's findings with a golden ledger (the scoring rules of spec/golden-ledger.md). Pure: no
// files, no clock; the CLI reads the run and renders the result.
//
// Decisions the spec leaves open, made here:
// - A ratio whose denominator is zero is null ("nothing to measure"), never 0 or 1: a run that files
//   nothing has no precision, a ledger with no unfixed defect gives no recall. JSON keeps number | null.
// - A defect with `fixed_in` set is not scored: it is out of recall's denominator, and a finding that
//   matches it (and no unfixed defect) is ignored, neither a hit nor a false positive nor unlisted. It is
//   listed under `ignored` so a person can see a fixed defect being found again (a regression?).
// - When several defects of the finding's class match, the one not yet matched wins, then the first.
// - Duplicates rate = duplicates / findings that matched a defect (true positives + duplicates).

export interface ScoreOptions {
  /** Confidence at or above which a finding with evidence is fileable; only fileable findings count. */
  threshold: number;
  /** What the run cost, for cost per accepted finding. */
  costUsd?: number;
  /** The target's routes as the run mapped them (`METHOD /path` or page paths), to tell static routes from values. */
  routes?: readonly string[];
}

export interface FindingRef {
  envelope_id: string;
  title: string;
  domain: Domain;
  defect_class: string;
  severity: string;
  location: PlaceRef;
}

export interface TruePositive extends FindingRef {
  defect_id: string;
  class_agrees: boolean;
  severity_agrees: boolean;
}

export interface DuplicateFinding extends FindingRef {
  defect_id: string;
  /** The envelope that was the true positive for the same defect. */
  duplicate_of: string;
}

export interface FalsePositive extends FindingRef {
  not_defect: string;
}

export interface IgnoredFinding extends FindingRef {
  /** The fixed defect it matched. */
  fixed_defect: string;
}

export interface MissedDefect {
  id: string;
  title: string;
  domain: Domain;
  class: string;
  severity: string;
  locations: LedgerLocation[];
}

export interface DomainScore {
  recall: number | null;
  precision: number | null;
  defects: number;
  true_positives: number;
  false_positives: number;
  unlisted: number;
}

export interface Scorecard {
  target: string;
  threshold: number;
  recall: number | null;
  precision: number | null;
  /** Defects that are scored (not fixed). */
  defects: number;
  fixed_defects: number;
  /** Fileable findings considered. */
  findings: number;
  /** Envelopes left out because they are not fileable (no evidence, low confidence, not reproducible). */
  not_fileable: number;
  true_positives: number;
  false_positive_count: number;
  unlisted_count: number;
  duplicate_count: number;
  /** Duplicates as a rate of the findings that matched a defect. */
  duplicates: number | null;
  class_agreement: number | null;
  severity_agreement: number | null;
  cost_usd: number | null;
  cost_per_accepted_usd: number | null;
  by_domain: Partial<Record<Domain, DomainScore>>;
  matched: TruePositive[];
  duplicate_findings: DuplicateFinding[];
  false_positives: FalsePositive[];
  unlisted: FindingRef[];
  ignored: IgnoredFinding[];
  missed: MissedDefect[];
}

export function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}

export function score(
  envelopes: readonly DefectEnvelope[],
  ledger: GoldenLedger,
  options: ScoreOptions,
): Scorecard {
  const scored = ledger.defects.filter((defect) => defect.fixed_in === null);
  const fixed = ledger.defects.filter((defect) => defect.fixed_in !== null);
  const fileable = envelopes.filter((envelope) => isFileable(envelope, options.threshold)).sort(byDiscovery);

  const firstHit = new Map<string, string>();
  const matched: TruePositive[] = [];
  const duplicateFindings: DuplicateFinding[] = [];
  const falsePositives: FalsePositive[] = [];
  const unlisted: FindingRef[] = [];
  const ignored: IgnoredFinding[] = [];

  const routes = new StaticRoutes(options.routes ?? []);
  for (const entry of [...ledger.defects, ...ledger.not_defects])
    for (const place of entry.locations)
      if (place.kind === "endpoint" || place.kind === "page") routes.add(place.value);

  for (const envelope of fileable) {
    const places = findingLocations(envelope);
    const reference = findingRef(envelope);
    const matches = (entry: { domain: Domain; locations: LedgerLocation[] }) =>
      entry.domain === envelope.domain && anyLocationMatches(places, entry.locations, routes);

    const candidates = scored.filter(matches);
    if (candidates.length > 0) {
      const defect = chooseDefect(candidates, envelope.defect_class, firstHit);
      const earlier = firstHit.get(defect.id);
      if (earlier === undefined) {
        firstHit.set(defect.id, envelope.id);
        matched.push({
          ...reference,
          defect_id: defect.id,
          class_agrees: envelope.defect_class === defect.class,
          severity_agrees: envelope.severity === defect.severity,
        });
      } else {
        duplicateFindings.push({ ...reference, defect_id: defect.id, duplicate_of: earlier });
      }
      continue;
    }
    const fixedDefect = fixed.find(matches);
    if (fixedDefect !== undefined) {
      ignored.push({ ...reference, fixed_defect: fixedDefect.id });
      continue;
    }
    const notDefect = ledger.not_defects.find(matches);
    if (notDefect !== undefined) falsePositives.push({ ...reference, not_defect: notDefect.id });
    else unlisted.push(reference);
  }

  const truePositives = matched.length;
  const costUsd = options.costUsd ?? null;
  return {
    target: ledger.target,
    threshold: options.threshold,
    recall: ratio(truePositives, scored.length),
    precision: ratio(truePositives, truePositives + falsePositives.length + unlisted.length),
    defects: scored.length,
    fixed_defects: fixed.length,
    findings: fileable.length,
    not_fileable: envelopes.length - fileable.length,
    true_positives: truePositives,
    false_positive_count: falsePositives.length,
    unlisted_count: unlisted.length,
    duplicate_count: duplicateFindings.length,
    duplicates: ratio(duplicateFindings.length, truePositives + duplicateFindings.length),
    class_agreement: ratio(matched.filter((hit) => hit.class_agrees).length, truePositives),
    severity_agreement: ratio(matched.filter((hit) => hit.severity_agrees).length, truePositives),
    cost_usd: costUsd,
    cost_per_accepted_usd: costUsd === null ? null : ratio(costUsd, truePositives),
    by_domain: byDomain(ledger, scored, matched, falsePositives, unlisted, fileable),
    matched,
    duplicate_findings: duplicateFindings,
    false_positives: falsePositives,
    unlisted,
    ignored,
    missed: scored.filter((defect) => !firstHit.has(defect.id)).map(missedDefect),
  };
}

/** Several defects match one finding: its own class first, then one not yet found, then file order. */
function chooseDefect(
  candidates: readonly GoldenDefect[],
  findingClass: string,
  firstHit: ReadonlyMap<string, string>,
): GoldenDefect {
  const sameClass = candidates.filter((defect) => defect.class === findingClass);
  const pool = sameClass.length > 0 ? sameClass : candidates;
  return pool.find((defect) => !firstHit.has(defect.id)) ?? pool[0]!;
}

/** Discovery order decides which of two findings of one defect is the true positive; ids break ties. */
function byDiscovery(left: DefectEnvelope, right: DefectEnvelope): number {
  const difference = Date.parse(left.discovered_at) - Date.parse(right.discovered_at);
  if (difference !== 0) return difference;
  return left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}

function findingRef(envelope: DefectEnvelope): FindingRef {
  return {
    envelope_id: envelope.id,
    title: envelope.title,
    domain: envelope.domain,
    defect_class: envelope.defect_class,
    severity: envelope.severity,
    location: { kind: envelope.location.kind, value: envelope.location.value },
  };
}

function missedDefect(defect: GoldenDefect): MissedDefect {
  const { id, title, domain, severity, locations } = defect;
  return { id, title, domain, class: defect.class, severity, locations };
}

function byDomain(
  ledger: GoldenLedger,
  scored: readonly GoldenDefect[],
  matched: readonly TruePositive[],
  falsePositives: readonly FalsePositive[],
  unlisted: readonly FindingRef[],
  fileable: readonly DefectEnvelope[],
): Partial<Record<Domain, DomainScore>> {
  const present = new Set<Domain>([
    ...ledger.defects.map((defect) => defect.domain),
    ...ledger.not_defects.map((entry) => entry.domain),
    ...fileable.map((envelope) => envelope.domain),
  ]);
  const result: Partial<Record<Domain, DomainScore>> = {};
  for (const domain of DOMAINS.filter((candidate) => present.has(candidate))) {
    const defects = scored.filter((defect) => defect.domain === domain).length;
    const truePositives = matched.filter((hit) => hit.domain === domain).length;
    const wrong =
      falsePositives.filter((finding) => finding.domain === domain).length +
      unlisted.filter((finding) => finding.domain === domain).length;
    result[domain] = {
      recall: ratio(truePositives, defects),
      precision: ratio(truePositives, truePositives + wrong),
      defects,
      true_positives: truePositives,
      false_positives: falsePositives.filter((finding) => finding.domain === domain).length,
      unlisted: unlisted.filter((finding) => finding.domain === domain).length,
    };
  }
  return result;
}
