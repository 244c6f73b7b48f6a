import type { AdvisoryRating, OsvEvent, SnapshotAdvisory } from "../advisory-snapshot.ts";
import type { Ecosystem } from "../versions.ts";
import { ecosystemOf, isReadableVersion } from "../versions.ts";
import { ratingFromScore, ratingFromText, scoreFromVector } from "./rating.ts";

/** What reading one source record gave: advisories kept, and counts of what was left out and why. */
export interface RecordReading {
  advisories: SnapshotAdvisory[];
  skipped: Record<string, number>;
}

export interface RecordFilter {
  ecosystems?: ReadonlySet<Ecosystem>;
  /** Lower-cased package names to keep (all when absent). */
  packages?: ReadonlySet<string>;
}

export function count(skipped: Record<string, number>, reason: string, by = 1): void {
  skipped[reason] = (skipped[reason] ?? 0) + by;
}

export function mergeSkipped(into: Record<string, number>, from: Record<string, number>): void {
  for (const [reason, number] of Object.entries(from)) count(into, reason, number);
}

const TITLE_LENGTH = 140;

// "Werkzeug is a comprehensive WSGI web application library." opens many PyPA records: it names the
// product, not the flaw, so the sentence after it makes the better title.
const PRODUCT_BLURB = /^[\w .-]{1,60}? (is|are) (a|an|the) [^.]*\.$/i;

/** A one-line title: the record's own summary, else the first telling sentence of its details, shortened. */
export function shortTitle(summary: unknown, details?: unknown): string | undefined {
  const text = (
    typeof summary === "string" && summary.trim() ? summary : typeof details === "string" ? details : ""
  )
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return undefined;
  // A sentence ends at a stop followed by a capital: `0.12.3` and `i.e., a` do not end one.
  const sentences = text.split(/(?<=[.!?])\s+(?=[A-Z])/);
  const telling = sentences.length > 1 && PRODUCT_BLURB.test(sentences[0]!) ? sentences[1]! : sentences[0]!;
  return telling.length <= TITLE_LENGTH ? telling : `${telling.slice(0, TITLE_LENGTH - 1).trimEnd()}…`;
}

export function day(value: unknown): string | undefined {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}/.test(value) ? value.slice(0, 10) : undefined;
}

export function sortedUnique(values: Iterable<string>, without?: string): string[] {
  return [...new Set(values)].filter((value) => value && value !== without).sort();
}

const CVSS_PREFERENCE = ["CVSS_V3", "CVSS_V4", "CVSS_V2"];

/** Severity as the record states it: its own rating first (GHSA's `database_specific`), else its CVSS vector. */
function severityOf(record: Record<string, unknown>): Pick<SnapshotAdvisory, "severity" | "cvss"> {
  const vectors = (Array.isArray(record.severity) ? record.severity : [])
    .filter(
      (entry): entry is { type: string; score: string } =>
        typeof entry?.type === "string" && typeof entry?.score === "string",
    )
    .sort((a, b) => CVSS_PREFERENCE.indexOf(a.type) - CVSS_PREFERENCE.indexOf(b.type));
  let cvss: SnapshotAdvisory["cvss"];
  for (const { score: vector } of vectors) {
    const score = scoreFromVector(vector);
    if (score !== undefined) {
      cvss = { score, vector };
      break;
    }
  }
  const stated = ratingFromText((record.database_specific as { severity?: unknown } | undefined)?.severity);
  const severity: AdvisoryRating | undefined = stated ?? (cvss ? ratingFromScore(cvss.score) : undefined);
  return { ...(severity ? { severity } : {}), ...(cvss ? { cvss } : {}) };
}

/** The events of one range the matcher reads; undefined when a version in it is not one of the ecosystem's. */
function readableEvents(ecosystem: Ecosystem, events: unknown): OsvEvent[] | undefined {
  if (!Array.isArray(events)) return undefined;
  const kept: OsvEvent[] = [];
  for (const event of events as Array<Record<string, unknown>>) {
    for (const kind of ["introduced", "fixed", "last_affected"] as const) {
      const version = event?.[kind];
      if (typeof version !== "string") continue;
      if (!(kind === "introduced" && version === "0") && !isReadableVersion(ecosystem, version))
        return undefined;
      kept.push({ [kind]: version });
    }
  }
  return kept.some((event) => event.introduced !== undefined) ? kept : undefined;
}

/**
 * One OSV record (JSON, or YAML already parsed) as snapshot advisories, one per affected package of the
 * wanted ecosystems. `GIT` ranges are dropped (commits, not versions); a range holding a version the
 * ecosystem's library cannot read is dropped and counted rather than guessed at.
 */
export function advisoriesFromOsvRecord(
  record: Record<string, unknown>,
  source: string,
  filter: RecordFilter = {},
): RecordReading {
  const skipped: Record<string, number> = {};
  if (typeof record?.id !== "string" || !Array.isArray(record.affected)) {
    count(skipped, "not_an_osv_record");
    return { advisories: [], skipped };
  }
  if (record.withdrawn) {
    count(skipped, "withdrawn");
    return { advisories: [], skipped };
  }
  const id = record.id;
  const byPackage = new Map<string, SnapshotAdvisory>();
  for (const affected of record.affected as Array<Record<string, unknown>>) {
    const pkg = affected?.package as { ecosystem?: unknown; name?: unknown } | undefined;
    const ecosystem = typeof pkg?.ecosystem === "string" ? ecosystemOf(pkg.ecosystem) : undefined;
    if (
      !ecosystem ||
      typeof pkg?.name !== "string" ||
      (filter.ecosystems && !filter.ecosystems.has(ecosystem))
    ) {
      count(skipped, "other_ecosystem");
      continue;
    }
    if (filter.packages && !filter.packages.has(pkg.name.toLowerCase())) {
      count(skipped, "package_not_wanted");
      continue;
    }
    const ranges: OsvEvent[][] = [];
    for (const range of (Array.isArray(affected.ranges) ? affected.ranges : []) as Array<
      Record<string, unknown>
    >) {
      if (range?.type !== "ECOSYSTEM" && range?.type !== "SEMVER") continue;
      const events = readableEvents(ecosystem, range.events);
      if (events) ranges.push(events);
      else count(skipped, "unreadable_range");
    }
    const versions = ranges.length
      ? []
      : (Array.isArray(affected.versions) ? affected.versions : []).filter(
          (version): version is string =>
            typeof version === "string" && isReadableVersion(ecosystem, version),
        );
    if (ranges.length === 0 && versions.length === 0) {
      count(skipped, "no_version_range");
      continue;
    }
    const key = `${ecosystem}:${pkg.name}`;
    const known = byPackage.get(key);
    if (known) {
      if (ranges.length) known.ranges = [...(known.ranges ?? []), ...ranges];
      if (versions.length) known.versions = sortedUnique([...(known.versions ?? []), ...versions]);
      continue;
    }
    const cwe = sortedUnique(
      ((record.database_specific as { cwe_ids?: unknown } | undefined)?.cwe_ids as string[] | undefined) ??
        [],
    ).filter((value) => /^CWE-\d+$/.test(value));
    const title = shortTitle(record.summary, record.details);
    const modified = day(record.modified);
    byPackage.set(key, {
      id,
      aliases: sortedUnique(
        (Array.isArray(record.aliases) ? record.aliases : []).filter((alias) => typeof alias === "string"),
        id,
      ),
      ecosystem,
      package: pkg.name,
      source,
      ...(title ? { title } : {}),
      ...severityOf(record),
      ...(cwe.length ? { cwe } : {}),
      ...(modified ? { modified } : {}),
      ...(ranges.length ? { ranges } : { versions: sortedUnique(versions) }),
    });
  }
  return { advisories: [...byPackage.values()], skipped };
}
