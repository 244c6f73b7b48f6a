import type { AdvisorySnapshot } from "./advisory-snapshot.ts";

/** Advisory data older than this (relative to the run) earns every report a note saying so. */
export const STALE_AFTER_DAYS = 90;

export interface SnapshotFreshness {
  snapshot_date: string;
  /** The day of the stalest source: advisories published after it cannot be in the snapshot. */
  data_as_of: string;
  age_days: number;
  stale: boolean;
  sources: Array<{ name: string; commit?: string; as_of: string; newest_record?: string; licence: string }>;
  /** Present when the data is older than STALE_AFTER_DAYS. */
  note?: string;
}

const DAY_MS = 86_400_000;

function days(from: string, to: Date): number {
  const start = Date.parse(`${from}T00:00:00Z`);
  if (Number.isNaN(start)) return Number.POSITIVE_INFINITY;
  const end = Date.UTC(to.getUTCFullYear(), to.getUTCMonth(), to.getUTCDate());
  return Math.max(0, Math.floor((end - start) / DAY_MS));
}

/**
 * How old the snapshot's data is on `now`. A git source is as fresh as the commit it was read at; a source
 * without a commit (an OSV export, the curated file) as the day the snapshot was built.
 */
export function snapshotFreshness(snapshot: AdvisorySnapshot, now: Date = new Date()): SnapshotFreshness {
  const sources = snapshot.sources.map((source) => ({
    name: source.name,
    ...(source.commit ? { commit: source.commit } : {}),
    as_of: source.commit_date ?? snapshot.snapshot_date,
    ...(source.newest_record ? { newest_record: source.newest_record } : {}),
    licence: source.licence,
  }));
  const data_as_of = sources.map((source) => source.as_of).sort()[0] ?? snapshot.snapshot_date;
  const age_days = days(data_as_of, now);
  const stale = age_days > STALE_AFTER_DAYS;
  const stalest = sources.filter((source) => source.as_of === data_as_of).map((source) => source.name);
  return {
    snapshot_date: snapshot.snapshot_date,
    data_as_of,
    age_days,
    stale,
    sources,
    ...(stale
      ? {
          note: `The advisory data is ${age_days} days old (${stalest.join(", ") || "the snapshot"} as of ${data_as_of}), older than ${STALE_AFTER_DAYS} days: vulnerabilities published since are not reported. Rebuild the snapshot with scripts/advisories/build.ts from fresh copies of its sources.`,
        }
      : {}),
  };
}

/** `nodejs-security-wg@f1288d0 (2026-04-08), pypa-advisory-database@3ccb612 (2024-10-10)`. */
export function describeSources(freshness: SnapshotFreshness): string {
  return freshness.sources
    .map(
      (source) => `${source.name}${source.commit ? `@${source.commit.slice(0, 7)}` : ""} (${source.as_of})`,
    )
    .join(", ");
}
