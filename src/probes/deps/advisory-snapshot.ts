import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { QaasError } from "../../errors.ts";
import { advisoriesFromOsvRecord } from "./sources/osv-record.ts";
import type { Ecosystem } from "./versions.ts";

/** The snapshot shipped with qaas; `scripts/advisories/build.ts` (or `qaas advisories refresh`) rebuilds it. */
export const SNAPSHOT_FILE = fileURLToPath(
  new URL("../../../data/advisories/snapshot.jsonl", import.meta.url),
);

/** One OSV range event (https://ossf.github.io/osv-schema/#affectedrangesevents-fields). */
export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

/** GitHub's rating vocabulary; CVSS scores are mapped onto it. */
export type AdvisoryRating = "LOW" | "MODERATE" | "HIGH" | "CRITICAL";

/** One advisory as it bears on one package: the facts the matcher and a finding need, nothing more. */
export interface SnapshotAdvisory {
  id: string;
  /** Other names of the same vulnerability (CVE, GHSA, PYSEC…), sorted, without `id`. */
  aliases: string[];
  ecosystem: Ecosystem;
  package: string;
  /** Name of the entry in `sources` the advisory came from. */
  source: string;
  title?: string;
  severity?: AdvisoryRating;
  cvss?: { score: number; vector?: string };
  cwe?: string[];
  /** Day the source last changed the record (YYYY-MM-DD). */
  modified?: string;
  /** Affected versions as an npm range, read by `semver` (the Node.js security WG's form). */
  vulnerable?: string;
  /** Patched versions as an npm range: where the version to move to is read from. */
  patched?: string;
  /** OSV `ECOSYSTEM`/`SEMVER` ranges: each an ordered list of events. */
  ranges?: OsvEvent[][];
  /** Exact affected versions, for records without a range. */
  versions?: string[];
  /** Versions the source declares unaffected although a range admits them. */
  excludes?: string[];
}

export interface SnapshotSource {
  /** `nodejs-security-wg`, `pypa-advisory-database`, `retirejs`, `osv:<file>`. */
  name: string;
  repository?: string;
  licence: string;
  /** Commit of the repository the records were read at, and that commit's day (YYYY-MM-DD). */
  commit?: string;
  commit_date?: string;
  /** sha256 of the input files, for sources that are not git repositories. */
  digest?: string;
  /** Advisories kept, and records or ranges left out (with why). */
  advisories: number;
  skipped: Record<string, number>;
  /** Newest `modified` day among the kept advisories: a source can be synced today and still stale. */
  newest_record?: string;
}

export interface AdvisorySnapshot {
  snapshot_version: 2;
  /** The day the snapshot was built (YYYY-MM-DD). */
  snapshot_date: string;
  sources: SnapshotSource[];
  /** Sorted by ecosystem, package, id. */
  advisories: SnapshotAdvisory[];
}

export interface AdvisoryIndex {
  snapshot: AdvisorySnapshot;
  /** `ecosystem:normalized-name` → advisories naming that package. */
  byPackage: Map<string, SnapshotAdvisory[]>;
}

/** PEP 503 for PyPI (`Jinja2`, `jinja_2` → `jinja2`… `jinja-2`); npm names compare lower-cased. */
export function normalizePackageName(ecosystem: string, name: string): string {
  const lower = name.trim().toLowerCase();
  return ecosystem.toLowerCase() === "pypi" ? lower.replace(/[-_.]+/g, "-") : lower;
}

export function packageKey(ecosystem: string, name: string): string {
  return `${ecosystem.toLowerCase()}:${normalizePackageName(ecosystem, name)}`;
}

export function indexSnapshot(snapshot: AdvisorySnapshot): AdvisoryIndex {
  const byPackage = new Map<string, SnapshotAdvisory[]>();
  for (const advisory of snapshot.advisories) {
    const key = packageKey(advisory.ecosystem, advisory.package);
    const list = byPackage.get(key) ?? [];
    list.push(advisory);
    byPackage.set(key, list);
  }
  return { snapshot, byPackage };
}

/**
 * JSON Lines: a header (version, date, sources, count), then one advisory a line in sorted order, so a
 * refresh reviews as a line diff and the same inputs always give the same bytes.
 */
export function serializeSnapshot(snapshot: AdvisorySnapshot): string {
  const { advisories, ...header } = snapshot;
  return `${[{ ...header, advisories: advisories.length }, ...advisories].map((line) => JSON.stringify(line)).join("\n")}\n`;
}

/** Writes atomically: a reader never sees half a snapshot. */
export function writeSnapshot(file: string, snapshot: AdvisorySnapshot): void {
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, serializeSnapshot(snapshot));
  fs.renameSync(temporary, file);
}

function invalid(file: string, why: string): QaasError {
  return new QaasError("ADVISORIES_INVALID", `${file} is not an advisory snapshot: ${why}`);
}

function parseJsonLines(file: string, text: string): AdvisorySnapshot {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const parse = (line: string, number: number): Record<string, unknown> => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch (error) {
      throw invalid(file, `line ${number} is not JSON (${error instanceof Error ? error.message : error})`);
    }
  };
  const header = parse(lines[0] ?? "{}", 1);
  if (
    header.snapshot_version !== 2 ||
    typeof header.snapshot_date !== "string" ||
    !Array.isArray(header.sources)
  )
    throw invalid(file, "line 1 needs snapshot_version 2, snapshot_date and sources[]");
  const advisories = lines
    .slice(1)
    .map((line, index) => parse(line, index + 2) as unknown as SnapshotAdvisory);
  if (typeof header.advisories === "number" && header.advisories !== advisories.length)
    throw invalid(
      file,
      `the header announces ${header.advisories} advisories but ${advisories.length} follow`,
    );
  return {
    snapshot_version: 2,
    snapshot_date: header.snapshot_date,
    sources: header.sources as SnapshotSource[],
    advisories,
  };
}

/** Version 1: one JSON document whose `advisories[]` are trimmed OSV records. */
function fromVersion1(file: string, parsed: Record<string, unknown>): AdvisorySnapshot {
  if (!Array.isArray(parsed.advisories) || typeof parsed.snapshot_date !== "string")
    throw invalid(file, "needs snapshot_date and advisories[]");
  const name = typeof parsed.source === "string" ? parsed.source : "osv";
  const advisories = (parsed.advisories as Array<Record<string, unknown>>)
    .flatMap((record) => advisoriesFromOsvRecord(record, name).advisories)
    .sort(compareAdvisories);
  return {
    snapshot_version: 2,
    snapshot_date: parsed.snapshot_date,
    sources: [{ name, licence: "unrecorded", advisories: advisories.length, skipped: {} }],
    advisories,
  };
}

export function compareAdvisories(a: SnapshotAdvisory, b: SnapshotAdvisory): number {
  const order = (advisory: SnapshotAdvisory) =>
    `${advisory.ecosystem}\u0000${normalizePackageName(advisory.ecosystem, advisory.package)}\u0000${advisory.id}`;
  const left = order(a);
  const right = order(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

function isVersion2Header(line: string): boolean {
  try {
    return (JSON.parse(line) as { snapshot_version?: unknown } | null)?.snapshot_version === 2;
  } catch {
    return false;
  }
}

/** Reads a snapshot: JSON Lines (version 2) or the earlier single JSON document (version 1). */
export function readSnapshot(file: string): AdvisorySnapshot {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new QaasError(
      "ADVISORIES_UNREADABLE",
      `cannot read the advisory snapshot ${file}: ${error instanceof Error ? error.message : String(error)}; rebuild it with scripts/advisories/build.ts (see data/advisories/README.md)`,
    );
  }
  if (isVersion2Header(text.split("\n", 1)[0] ?? "")) return parseJsonLines(file, text);
  let whole: Record<string, unknown>;
  try {
    whole = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw invalid(file, `not JSON Lines nor JSON (${error instanceof Error ? error.message : error})`);
  }
  return fromVersion1(file, whole);
}

let cached: { key: string; index: AdvisoryIndex } | undefined;

/** The snapshot, indexed; read again only when the file changed. */
export function loadSnapshot(file = SNAPSHOT_FILE): AdvisoryIndex {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  const key = `${file}\u0000${stat?.mtimeMs}\u0000${stat?.size}`;
  if (cached?.key === key) return cached.index;
  const index = indexSnapshot(readSnapshot(file));
  cached = { key, index };
  return index;
}
