// Versions and ranges as each ecosystem's own tooling reads them: npm's `semver` for npm, a PEP 440
// implementation for PyPI. Nothing here orders versions by hand; a string the library rejects is
// reported as unreadable (undefined) so callers can skip and count it instead of guessing.
import * as pep440 from "@renovatebot/pep440";
import type { SemVer } from "semver";
import { coerce, compare as compareSemver, minVersion, parse as parseSemver, Range } from "semver";

export type Ecosystem = "npm" | "PyPI";

export const ECOSYSTEMS: readonly Ecosystem[] = ["npm", "PyPI"];

/** The ecosystem as spelled in OSV (`npm`, `PyPI`), whatever the case it was written in. */
export function ecosystemOf(name: string): Ecosystem | undefined {
  return ECOSYSTEMS.find((ecosystem) => ecosystem.toLowerCase() === name.trim().toLowerCase());
}

// Pre-releases take part in every comparison: a vulnerable 2.0.0-beta.1 must not escape `<2.0.0`.
const NPM_OPTIONS = { loose: true, includePrerelease: true } as const;
// Ranges are read strictly: in loose mode semver silently drops a comparator it cannot read
// (`<1.0.0 || bar` becomes `<1.0.0`), and a range half-read must be refused, not matched.
const RANGE_OPTIONS = { includePrerelease: true } as const;

/**
 * An npm version: strict or loose SemVer (`v1.2.3`, `=1.2.3`, `1.2.3beta`), or the short numeric forms
 * advisories write for a line (`0`, `1.0`, `4.17`), which npm's own `coerce` completes to `1.0.0`.
 */
export function npmVersion(raw: string): SemVer | undefined {
  const text = raw.trim();
  const parsed = parseSemver(text, NPM_OPTIONS);
  if (parsed) return parsed;
  return /^[v=]*\d+(\.\d+){0,2}$/.test(text) ? (coerce(text, NPM_OPTIONS) ?? undefined) : undefined;
}

/** A PEP 440 version in its normal form (`1.0.post1`, `1!2.0rc1`), or undefined when PEP 440 rejects it. */
export function pypiVersion(raw: string): string | undefined {
  return pep440.valid(raw.trim()) ?? undefined;
}

export function isReadableVersion(ecosystem: Ecosystem, raw: string): boolean {
  return ecosystem === "npm" ? npmVersion(raw) !== undefined : pypiVersion(raw) !== undefined;
}

/** -1, 0 or 1 as the ecosystem orders `a` and `b`; undefined when either is not a version there. */
export function compareVersions(ecosystem: Ecosystem, a: string, b: string): number | undefined {
  if (ecosystem === "npm") {
    const left = npmVersion(a);
    const right = npmVersion(b);
    return left && right ? compareSemver(left, right) : undefined;
  }
  const left = pypiVersion(a);
  const right = pypiVersion(b);
  return left && right ? pep440.compare(left, right) : undefined;
}

/** An npm range (`<=1.5.1`, `>=2.0.0 <2.3.4 || >=3.0.0 <3.0.2`, `~0.8.0-pre`), or undefined when npm rejects it. */
export function npmRange(range: string): Range | undefined {
  try {
    return new Range(range, RANGE_OPTIONS);
  } catch {
    return undefined;
  }
}

/**
 * The lowest version above `installed` that a "patched versions" range admits: the version to move to.
 * Each `||` alternative of the range contributes its lowest admitted version (npm's `minVersion`).
 */
export function lowestPatchedAbove(installed: SemVer, patched: Range): string | undefined {
  const candidates = patched.set
    .map((comparators) => {
      try {
        return minVersion(comparators.map((comparator) => comparator.value).join(" ") || "*");
      } catch {
        return null;
      }
    })
    .filter((version): version is SemVer => version !== null && compareSemver(version, installed) > 0)
    .sort(compareSemver);
  return candidates[0]?.version;
}

/** The exclusive upper bound (`<X`) of the `||` alternative of `vulnerable` that admits `installed`. */
export function upperBoundOf(installed: SemVer, vulnerable: Range): string | undefined {
  for (const comparators of vulnerable.set) {
    if (!comparators.every((comparator) => comparator.test(installed))) continue;
    const below = comparators.find((comparator) => comparator.operator === "<");
    if (below) return below.semver.version;
  }
  return undefined;
}
