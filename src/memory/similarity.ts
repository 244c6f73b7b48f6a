import { canonicalLocation } from "../envelope/envelope.ts";

// How alike two findings look when their fingerprints differ (different class, a slightly different
// place, or the same defect worded twice). Deterministic and cheap: shared title words and shared
// location segments, so near-duplicates surface for TRIAGE without a model.

const STOP_WORDS = new Set(
  (
    "a an the of to in on for by with and or not no nor is are was were be been being can could may " +
    "might must should would will it its this that these those which who whom whose what when where why " +
    "how as at from into onto than then there their them they he she his her our your you we i me my " +
    "so if but also only just any all each every some such via per does do did has have had"
  ).split(" "),
);

const WEIGHTS = { title: 0.6, location: 0.3, domain: 0.1 } as const;

export interface SimilarityQuery {
  title: string;
  location?: { kind: string; value: string };
  domain?: string;
}

export interface SimilarityCandidate {
  title: string;
  location: { kind: string; value: string };
  domain: string;
}

/** Lower-cased words of a title, minus stop words, with a plural `s` dropped so `invoices` = `invoice`. */
export function titleTokens(title: string): Set<string> {
  const tokens = new Set<string>();
  for (const word of title.toLowerCase().split(/[^a-z0-9]+/)) {
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    tokens.add(word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word);
  }
  return tokens;
}

/** Canonical path segments of a location (method included for endpoints). */
export function locationSegments(location: { kind: string; value: string }): string[] {
  return canonicalLocation(location.kind, location.value)
    .toLowerCase()
    .split(/[\s/.]+/)
    .filter((segment) => segment !== "");
}

export function jaccard<Item>(left: ReadonlySet<Item>, right: ReadonlySet<Item>): number {
  if (left.size === 0 && right.size === 0) return 0;
  let shared = 0;
  for (const item of left) if (right.has(item)) shared += 1;
  return shared / (left.size + right.size - shared);
}

/** 1 for the same canonical place; below 1 for places that share segments; 0 across location kinds. */
export function locationSimilarity(
  left: { kind: string; value: string },
  right: { kind: string; value: string },
): number {
  if (left.kind !== right.kind) return 0;
  if (canonicalLocation(left.kind, left.value) === canonicalLocation(right.kind, right.value)) return 1;
  return 0.8 * jaccard(new Set(locationSegments(left)), new Set(locationSegments(right)));
}

/** A score in 0..1: a weighted mean over what the query gives (title always; location, domain if set). */
export function similarityScore(query: SimilarityQuery, candidate: SimilarityCandidate): number {
  let total = WEIGHTS.title * jaccard(titleTokens(query.title), titleTokens(candidate.title));
  let weight: number = WEIGHTS.title;
  if (query.location) {
    total += WEIGHTS.location * locationSimilarity(query.location, candidate.location);
    weight += WEIGHTS.location;
  }
  if (query.domain) {
    total += WEIGHTS.domain * (query.domain === candidate.domain ? 1 : 0);
    weight += WEIGHTS.domain;
  }
  return Math.round((total / weight) * 1000) / 1000;
}
