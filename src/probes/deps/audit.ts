import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import type { RunContext } from "../../tools/context.ts";
import { advisorySeverity } from "../severity.ts";
import { matchAdvisory } from "./advisory-match.ts";
import type { AdvisoryIndex, SnapshotAdvisory } from "./advisory-snapshot.ts";
import { loadSnapshot, packageKey } from "./advisory-snapshot.ts";
import { dependencyFinding } from "./dependency-finding.ts";
import type { InstalledPackage } from "./lockfiles.ts";
import { findLockfiles, parseLockfile } from "./lockfiles.ts";
import type { SnapshotFreshness } from "./snapshot-age.ts";
import { snapshotFreshness } from "./snapshot-age.ts";
import { compareVersions } from "./versions.ts";

export interface MatchedAdvisory {
  advisory: SnapshotAdvisory;
  /** The version that fixes this advisory for the installed line, when the source gives one. */
  fixed?: string;
}

export interface VulnerablePackage {
  installed: InstalledPackage;
  advisories: MatchedAdvisory[];
  /** The lowest version that fixes every matched advisory that has a fix (the highest of their fixes). */
  upgrade_to?: string;
  /** Matched advisories without a fixed version. */
  unfixed: string[];
  severity: Severity;
}

export interface VulnerabilityScan {
  lockfiles: string[];
  packages: number;
  vulnerable: VulnerablePackage[];
  /** Advisory checks skipped because a range or the installed version could not be read: never matched. */
  skipped: { unreadable_ranges: number; unreadable_versions: number };
}

const ORDER: Severity[] = ["low", "medium", "high", "critical"];

/** The worst of the advisories' own ratings; an unrated advisory counts as medium (the severity rubric). */
function worst(advisories: readonly MatchedAdvisory[]): Severity {
  return advisories
    .map(({ advisory }) => advisorySeverity(advisory.severity))
    .reduce((current, next) => (ORDER.indexOf(next) > ORDER.indexOf(current) ? next : current), "low");
}

function upgradeTarget(
  installed: InstalledPackage,
  advisories: readonly MatchedAdvisory[],
): string | undefined {
  return advisories
    .map(({ fixed }) => fixed)
    .filter((fixed): fixed is string => fixed !== undefined)
    .reduce<string | undefined>(
      (highest, fixed) =>
        highest === undefined || (compareVersions(installed.ecosystem, fixed, highest) ?? 0) > 0
          ? fixed
          : highest,
      undefined,
    );
}

/** Installed packages (root and one level of subfolders) matched against the snapshot. */
export function findVulnerable(root: string, index: AdvisoryIndex): VulnerabilityScan {
  const lockfiles = findLockfiles(root);
  const installed = lockfiles.flatMap((file) => parseLockfile(file, root));
  const seen = new Map<string, VulnerablePackage>();
  const skipped = { unreadable_ranges: 0, unreadable_versions: 0 };
  for (const item of installed) {
    const key = `${packageKey(item.ecosystem, item.name)}@${item.version}`;
    const known = seen.get(key);
    if (known) {
      // The same pin in two lockfiles is one defect; a direct declaration anywhere makes it direct.
      known.installed = { ...known.installed, direct: known.installed.direct || item.direct };
      continue;
    }
    const matches: MatchedAdvisory[] = [];
    let unreadableVersion = false;
    for (const advisory of index.byPackage.get(packageKey(item.ecosystem, item.name)) ?? []) {
      const match = matchAdvisory(advisory, item.version);
      if (match.kind === "affected")
        matches.push(match.fixed ? { advisory, fixed: match.fixed } : { advisory });
      else if (match.kind === "unreadable" && match.what === "range") skipped.unreadable_ranges += 1;
      else if (match.kind === "unreadable") unreadableVersion = true;
    }
    if (unreadableVersion) skipped.unreadable_versions += 1;
    if (matches.length === 0) continue;
    const upgrade_to = upgradeTarget(item, matches);
    seen.set(key, {
      installed: item,
      advisories: matches,
      ...(upgrade_to ? { upgrade_to } : {}),
      unfixed: matches.filter(({ fixed }) => fixed === undefined).map(({ advisory }) => advisory.id),
      severity: worst(matches),
    });
  }
  return {
    lockfiles: lockfiles.map((file) => path.relative(root, file).split(path.sep).join("/")),
    packages: installed.length,
    vulnerable: [...seen.values()],
    skipped,
  };
}

export interface DependencyAuditOptions {
  /** Report packages only pulled in by others at 0.8 instead of holding them at 0.6. */
  includeTransitive?: boolean;
  /** The run's clock, for the data's age. */
  now?: Date;
  /** Defaults to the shipped snapshot. */
  index?: AdvisoryIndex;
  tool?: string;
}

export interface DependencyAudit {
  candidates: EnvelopeDraft[];
  stats: {
    lockfiles: string[];
    packages: number;
    vulnerable: number;
    direct: number;
    advisories_in_snapshot: number;
    snapshot_date: string;
    data_as_of: string;
    data_age_days: number;
    sources: SnapshotFreshness["sources"];
    skipped: VulnerabilityScan["skipped"];
    notes: string[];
    requests: 0;
  };
}

/** The whole audit: lockfiles read, versions matched, one candidate per vulnerable `name@version`. */
export function auditDependencies(
  context: RunContext,
  root: string,
  options: DependencyAuditOptions = {},
): DependencyAudit {
  const index = options.index ?? loadSnapshot();
  const freshness = snapshotFreshness(index.snapshot, options.now);
  const scan = findVulnerable(root, index);
  const candidates = scan.vulnerable.map((entry) => {
    const draft = dependencyFinding(context, options.tool ?? "audit_dependencies", entry, freshness);
    // A transitive pin is real but often unreachable: held for a person unless asked for.
    return options.includeTransitive && !entry.installed.direct ? { ...draft, confidence: 0.8 } : draft;
  });
  const notes = [
    ...(freshness.note ? [freshness.note] : []),
    ...(scan.skipped.unreadable_ranges
      ? [
          `${scan.skipped.unreadable_ranges} advisory check(s) skipped: a range could not be read by the ecosystem's version library`,
        ]
      : []),
    ...(scan.skipped.unreadable_versions
      ? [
          `${scan.skipped.unreadable_versions} pinned version(s) are not versions of their ecosystem and were not checked`,
        ]
      : []),
  ];
  return {
    candidates,
    stats: {
      lockfiles: scan.lockfiles,
      packages: scan.packages,
      vulnerable: scan.vulnerable.length,
      direct: scan.vulnerable.filter((entry) => entry.installed.direct).length,
      advisories_in_snapshot: index.snapshot.advisories.length,
      snapshot_date: freshness.snapshot_date,
      data_as_of: freshness.data_as_of,
      data_age_days: freshness.age_days,
      sources: freshness.sources,
      skipped: scan.skipped,
      notes,
      requests: 0,
    },
  };
}
