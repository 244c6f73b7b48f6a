import type { ServerMeta } from "../generator/emit-ledger.ts";

// Turns `qaas score` results into the corpus's measure: per family, how many vulnerable variants were
// found (true positives), how many safe look-alikes were flagged (false positives), TPR, FPR and the
// Youden index J = TPR − FPR. A variant counts once however many findings name it.

export interface ScoredRun {
  meta: ServerMeta;
  /** Ledger ids of defects a finding matched. */
  matched: readonly string[];
  /** Ledger ids of not_defects a finding matched. */
  falsePositives: readonly string[];
  /** Findings that matched nothing in the ledger. */
  unlisted: number;
}

export interface FamilyScore {
  family: string;
  vulnerable: number;
  safe: number;
  truePositives: number;
  falseNegatives: number;
  falsePositives: number;
  tpr: number | null;
  fpr: number | null;
  youden: number | null;
}

export interface CorpusScore {
  families: FamilyScore[];
  overall: FamilyScore;
  /** Derived defects (collateral 5xx, undocumented operations): found / total. */
  derived: Array<{ family: string; found: number; total: number }>;
  /** Findings on supporting operations (correct code every server has). */
  supportFalsePositives: number;
  unlisted: number;
}

export function scoreFamilies(runs: readonly ScoredRun[]): CorpusScore {
  const byFamily = new Map<string, FamilyScore>();
  const derived = new Map<string, { found: number; total: number }>();
  let supportFalsePositives = 0;
  let unlisted = 0;
  for (const run of runs) {
    const matched = new Set(run.matched);
    const flagged = new Set(run.falsePositives);
    for (const variant of run.meta.variants) {
      const score = byFamily.get(variant.family) ?? empty(variant.family);
      byFamily.set(variant.family, score);
      if (variant.label === "vulnerable") {
        score.vulnerable += 1;
        if (matched.has(variant.id)) score.truePositives += 1;
        else score.falseNegatives += 1;
      } else {
        score.safe += 1;
        if (flagged.has(variant.id)) score.falsePositives += 1;
      }
    }
    for (const entry of run.meta.derived) {
      const tally = derived.get(entry.family) ?? { found: 0, total: 0 };
      tally.total += 1;
      if (matched.has(entry.id)) tally.found += 1;
      derived.set(entry.family, tally);
    }
    supportFalsePositives += run.meta.support.filter((entry) => flagged.has(entry.id)).length;
    unlisted += run.unlisted;
  }
  const families = [...byFamily.values()].map(withRates).sort((a, b) => a.family.localeCompare(b.family));
  const overall = withRates(
    families.reduce((sum, score) => {
      sum.vulnerable += score.vulnerable;
      sum.safe += score.safe;
      sum.truePositives += score.truePositives;
      sum.falseNegatives += score.falseNegatives;
      sum.falsePositives += score.falsePositives;
      return sum;
    }, empty("overall")),
  );
  return {
    families,
    overall,
    derived: [...derived].map(([family, tally]) => ({ family, ...tally })),
    supportFalsePositives,
    unlisted,
  };
}

function empty(family: string): FamilyScore {
  return {
    family,
    vulnerable: 0,
    safe: 0,
    truePositives: 0,
    falseNegatives: 0,
    falsePositives: 0,
    tpr: null,
    fpr: null,
    youden: null,
  };
}

function withRates(score: FamilyScore): FamilyScore {
  const tpr = score.vulnerable > 0 ? score.truePositives / score.vulnerable : null;
  const fpr = score.safe > 0 ? score.falsePositives / score.safe : null;
  // With no safe twins a family's FPR is taken as 0: J is then its TPR, stated as such in the table.
  const youden = tpr === null ? null : tpr - (fpr ?? 0);
  return { ...score, tpr, fpr, youden };
}
