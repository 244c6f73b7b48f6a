import cvss from "ae-cvss-calculator";
import type { AdvisoryRating } from "../advisory-snapshot.ts";

/** A published rating in GitHub's vocabulary (`moderate` and `medium` are the same step). */
export function ratingFromText(text: unknown): AdvisoryRating | undefined {
  switch (typeof text === "string" ? text.trim().toUpperCase() : "") {
    case "LOW":
      return "LOW";
    case "MODERATE":
    case "MEDIUM":
      return "MODERATE";
    case "HIGH":
      return "HIGH";
    case "CRITICAL":
      return "CRITICAL";
    default:
      return undefined;
  }
}

/** The CVSS qualitative scale (v3.1 §5, v4.0 §6): 0.1–3.9 low, 4–6.9 medium, 7–8.9 high, 9–10 critical. */
export function ratingFromScore(score: number): AdvisoryRating | undefined {
  if (!(score > 0)) return undefined;
  if (score >= 9) return "CRITICAL";
  if (score >= 7) return "HIGH";
  if (score >= 4) return "MODERATE";
  return "LOW";
}

/** The base score of a CVSS 2, 3.0, 3.1 or 4.0 vector; undefined when the vector is incomplete or unknown. */
export function scoreFromVector(vector: string): number | undefined {
  try {
    const parsed = cvss.fromVector(vector.trim());
    const base = parsed?.calculateScores()?.base;
    return typeof base === "number" && Number.isFinite(base) ? base : undefined;
  } catch {
    return undefined;
  }
}
