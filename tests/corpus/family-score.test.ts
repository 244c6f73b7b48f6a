import { describe, expect, it } from "vitest";
import type { ServerMeta, VariantMeta } from "../../corpus/generator/emit-ledger.ts";
import { scoreFamilies } from "../../corpus/harness/family-score.ts";

const variant = (id: string, family: string, label: "vulnerable" | "safe"): VariantMeta => ({
  id,
  family,
  label,
  domain: "security",
  class: "injection",
  severity: "high",
  locations: [`GET /x/${id}`],
  knobs: {},
  documented: true,
});

const meta: ServerMeta = {
  server: "s",
  notice: "",
  variants: [
    variant("A-1", "alpha", "vulnerable"),
    variant("A-2", "alpha", "vulnerable"),
    variant("A-1S", "alpha", "safe"),
    variant("A-2S", "alpha", "safe"),
    variant("B-1", "beta", "vulnerable"),
  ],
  derived: [
    { id: "A-1-5XX", family: "collateral", domain: "api", class: "unhandled-error", location: "GET /x/A-1" },
  ],
  support: [{ id: "SUP-X-SEC", location: "GET /health", domain: "security" }],
};

describe("scoreFamilies", () => {
  it("counts each variant once and reports TPR, FPR and J = TPR - FPR per family", () => {
    const score = scoreFamilies([
      {
        meta,
        matched: ["A-1", "A-1", "A-1-5XX"],
        falsePositives: ["A-2S", "A-2S", "SUP-X-SEC"],
        unlisted: 3,
      },
    ]);
    const alpha = score.families.find((family) => family.family === "alpha")!;
    expect(alpha).toMatchObject({
      vulnerable: 2,
      safe: 2,
      truePositives: 1,
      falseNegatives: 1,
      falsePositives: 1,
    });
    expect(alpha.tpr).toBe(0.5);
    expect(alpha.fpr).toBe(0.5);
    expect(alpha.youden).toBe(0);
    const beta = score.families.find((family) => family.family === "beta")!;
    expect(beta).toMatchObject({ truePositives: 0, falseNegatives: 1, fpr: null, youden: 0 });
    expect(score.overall).toMatchObject({ vulnerable: 3, safe: 2, truePositives: 1, falsePositives: 1 });
    expect(score.overall.youden).toBeCloseTo(1 / 3 - 1 / 2);
    expect(score.derived).toEqual([{ family: "collateral", found: 1, total: 1 }]);
    expect(score.supportFalsePositives).toBe(1);
    expect(score.unlisted).toBe(3);
  });

  it("adds runs of several servers together", () => {
    const score = scoreFamilies([
      { meta, matched: ["A-1"], falsePositives: [], unlisted: 0 },
      { meta, matched: ["A-2", "B-1"], falsePositives: ["A-1S"], unlisted: 1 },
    ]);
    expect(score.overall).toMatchObject({ vulnerable: 6, truePositives: 3, safe: 4, falsePositives: 1 });
    expect(score.unlisted).toBe(1);
  });
});
