import { QaasError } from "../../errors.ts";
import type { AdvisorySnapshot, SnapshotAdvisory, SnapshotSource } from "./advisory-snapshot.ts";
import { compareAdvisories, packageKey } from "./advisory-snapshot.ts";
import { readNodejsSecurityWg } from "./sources/nodejs-security-wg.ts";
import { readOsvFiles } from "./sources/osv-files.ts";
import { count, type RecordFilter, sortedUnique } from "./sources/osv-record.ts";
import { readPypa } from "./sources/pypa.ts";
import { openRepository } from "./sources/repository.ts";
import { readRetireJs } from "./sources/retirejs.ts";
import type { SourceReading } from "./sources/types.ts";
import type { Ecosystem } from "./versions.ts";
import { ecosystemOf } from "./versions.ts";

export interface BuildOptions {
  /** OSV exports or hand-kept OSV files (folder, `all.zip` or one JSON file); first in priority. */
  osv?: string[];
  /** Checkouts, bare git directories or unpacked copies of each repository. */
  pypa?: string[];
  retirejs?: string[];
  nodejsSecurityWg?: string[];
  /** The snapshot's date (YYYY-MM-DD); today when absent. */
  date?: string;
  ecosystems?: string[];
  /** Keep only these packages (all when absent). */
  packages?: string[];
}

function filterOf(options: BuildOptions): RecordFilter {
  const ecosystems = (options.ecosystems ?? ["npm", "PyPI"]).map((name) => {
    const ecosystem = ecosystemOf(name);
    if (!ecosystem)
      throw new QaasError("ADVISORIES_BAD_ECOSYSTEM", `ecosystem ${name} is not supported (npm, PyPI)`);
    return ecosystem;
  });
  return {
    ecosystems: new Set<Ecosystem>(ecosystems),
    ...(options.packages?.length
      ? { packages: new Set(options.packages.map((name) => name.trim().toLowerCase())) }
      : {}),
  };
}

function sameEvents(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Adds the ranges, versions and exclusions of a second record of the same vulnerability from the same source. */
function absorb(into: SnapshotAdvisory, from: SnapshotAdvisory): void {
  if (from.ranges) {
    const ranges = [...(into.ranges ?? [])];
    for (const range of from.ranges)
      if (!ranges.some((known) => sameEvents(known, range))) ranges.push(range);
    into.ranges = ranges;
  }
  if (from.versions) into.versions = sortedUnique([...(into.versions ?? []), ...from.versions]);
  if (from.excludes) into.excludes = sortedUnique([...(into.excludes ?? []), ...from.excludes]);
}

const namesOf = (advisory: SnapshotAdvisory, prefix: string) =>
  [advisory.id, ...advisory.aliases].filter((name) => name.startsWith(prefix)).sort();

/**
 * Whether two records describe one vulnerability: one names the other's id, or — when no two distinct
 * GHSA ids tell them apart — both name exactly the same CVEs. Sharing one CVE is not enough: an
 * advisory about a bypass often cites the CVE it bypasses.
 */
function sameVulnerability(a: SnapshotAdvisory, b: SnapshotAdvisory): boolean {
  if (a.id === b.id || a.aliases.includes(b.id) || b.aliases.includes(a.id)) return true;
  const [ghsaA, ghsaB] = [namesOf(a, "GHSA-"), namesOf(b, "GHSA-")];
  if (ghsaA.length && ghsaB.length && !ghsaA.some((name) => ghsaB.includes(name))) return false;
  const cves = namesOf(a, "CVE-").join(" ");
  return cves !== "" && cves === namesOf(b, "CVE-").join(" ");
}

/**
 * One advisory per vulnerability and package. A record of a vulnerability already kept from an earlier
 * source only lends its names as aliases; two records of one source are joined (their ranges both hold).
 */
function merge(readings: SourceReading[]): SnapshotAdvisory[] {
  const kept: SnapshotAdvisory[] = [];
  const byName = new Map<string, SnapshotAdvisory[]>();
  const register = (key: string, advisory: SnapshotAdvisory) => {
    for (const name of [advisory.id, ...advisory.aliases]) {
      const list = byName.get(`${key}\u0000${name}`) ?? [];
      if (!list.includes(advisory)) list.push(advisory);
      byName.set(`${key}\u0000${name}`, list);
    }
  };
  for (const reading of readings) {
    for (const advisory of [...reading.advisories].sort(compareAdvisories)) {
      const key = packageKey(advisory.ecosystem, advisory.package);
      const known = [advisory.id, ...advisory.aliases]
        .flatMap((name) => byName.get(`${key}\u0000${name}`) ?? [])
        .find((candidate) => sameVulnerability(candidate, advisory));
      if (!known) {
        kept.push(advisory);
        register(key, advisory);
        continue;
      }
      known.aliases = sortedUnique([...known.aliases, advisory.id, ...advisory.aliases], known.id);
      if (known.source === advisory.source) {
        absorb(known, advisory);
        if (known.id !== advisory.id) count(reading.source.skipped, "merged_with_same_vulnerability");
      } else count(reading.source.skipped, `same_as_${known.source}`);
      register(key, known);
    }
  }
  return kept.sort(compareAdvisories);
}

export function todayUtc(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/**
 * Builds a dated snapshot from the sources given. Priority on overlap: OSV files (in the order given),
 * then PyPA, RetireJS and the Node.js security WG. Deterministic: the same inputs give the same bytes.
 */
export function buildAdvisorySnapshot(options: BuildOptions): AdvisorySnapshot {
  const date = options.date ?? todayUtc();
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(date)))
    throw new QaasError("ADVISORIES_BAD_DATE", `--date must be YYYY-MM-DD, got ${date}`);
  const filter = filterOf(options);
  const readings: SourceReading[] = [
    ...(options.osv ?? []).map((input) => readOsvFiles(input, filter)),
    ...(options.pypa ?? []).map((input) => readPypa(openRepository(input, "--pypa"), filter)),
    ...(options.retirejs ?? []).map((input) => readRetireJs(openRepository(input, "--retirejs"), filter)),
    ...(options.nodejsSecurityWg ?? []).map((input) =>
      readNodejsSecurityWg(openRepository(input, "--nodejs-security-wg"), filter),
    ),
  ];
  if (readings.length === 0)
    throw new QaasError(
      "ADVISORIES_NO_SOURCE",
      "no advisory source given: pass --nodejs-security-wg, --pypa, --retirejs or --osv (see data/advisories/README.md)",
    );
  const names = readings.map((reading) => reading.source.name);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated)
    throw new QaasError(
      "ADVISORIES_DUPLICATE_SOURCE",
      `source ${repeated} was given twice; pass each source once`,
    );
  const advisories = merge(readings);
  const sources: SnapshotSource[] = readings.map((reading) => {
    const own = advisories.filter((advisory) => advisory.source === reading.source.name);
    const newest = own
      .map((advisory) => advisory.modified)
      .filter((value): value is string => value !== undefined)
      .sort()
      .at(-1);
    const skipped = Object.fromEntries(
      Object.entries(reading.source.skipped).sort(([a], [b]) => (a < b ? -1 : 1)),
    );
    return {
      ...reading.source,
      advisories: own.length,
      skipped,
      ...(newest ? { newest_record: newest } : {}),
    };
  });
  return { snapshot_version: 2, snapshot_date: date, sources, advisories };
}
