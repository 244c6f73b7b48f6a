import type { OsvEvent, SnapshotAdvisory } from "./advisory-snapshot.ts";
import type { Ecosystem } from "./versions.ts";
import {
  compareVersions,
  isReadableVersion,
  lowestPatchedAbove,
  npmRange,
  npmVersion,
  upperBoundOf,
} from "./versions.ts";

export type Match =
  | { kind: "affected"; fixed?: string }
  | { kind: "unaffected" }
  /** The installed version, or every range of the advisory, could not be read: skipped, never matched. */
  | { kind: "unreadable"; what: "version" | "range" };

function eventVersion(event: OsvEvent): string | undefined {
  return event.introduced ?? event.fixed ?? event.last_affected;
}

/**
 * Events in version order as the ecosystem's library orders them (`"0"` first), or undefined when one of
 * them is not a version there.
 */
function ordered(ecosystem: Ecosystem, events: readonly OsvEvent[]): OsvEvent[] | undefined {
  const usable = events.filter((event) => event.limit === undefined && eventVersion(event) !== undefined);
  const zero = (event: OsvEvent) => event.introduced === "0";
  if (usable.some((event) => !zero(event) && !isReadableVersion(ecosystem, eventVersion(event)!)))
    return undefined;
  return usable
    .map((event, index) => ({ event, index }))
    .sort((a, b) => {
      if (zero(a.event) || zero(b.event))
        return zero(a.event) === zero(b.event) ? a.index - b.index : zero(a.event) ? -1 : 1;
      return compareVersions(ecosystem, eventVersion(a.event)!, eventVersion(b.event)!)! || a.index - b.index;
    })
    .map(({ event }) => event);
}

/**
 * Whether `version` falls in one OSV range, and the `fixed` event that closes its span. Walked in version
 * order: `introduced` opens a span ("0" from the start), `fixed` closes it at that version (exclusive),
 * `last_affected` after it (inclusive); `limit` only bounds git ranges and is ignored. Undefined when an
 * event or the version cannot be read.
 */
export function inRange(
  ecosystem: Ecosystem,
  version: string,
  events: readonly OsvEvent[],
): { affected: boolean; fixed?: string } | undefined {
  const sorted = ordered(ecosystem, events);
  if (!sorted || !isReadableVersion(ecosystem, version)) return undefined;
  let affected = false;
  for (const event of sorted) {
    if (event.introduced !== undefined) {
      if (event.introduced === "0" || compareVersions(ecosystem, version, event.introduced)! >= 0)
        affected = true;
    } else if (event.fixed !== undefined) {
      if (compareVersions(ecosystem, version, event.fixed)! >= 0) affected = false;
    } else if (event.last_affected !== undefined) {
      if (compareVersions(ecosystem, version, event.last_affected)! > 0) affected = false;
    }
  }
  if (!affected) return { affected };
  // The span holding the version closes at the first closing event above it.
  const closing = sorted.find(
    (event) =>
      (event.fixed !== undefined && compareVersions(ecosystem, version, event.fixed)! < 0) ||
      (event.last_affected !== undefined && compareVersions(ecosystem, version, event.last_affected)! <= 0),
  );
  return closing?.fixed !== undefined ? { affected, fixed: closing.fixed } : { affected };
}

function matchNpmRange(advisory: SnapshotAdvisory, version: string): Match {
  const installed = npmVersion(version);
  if (!installed) return { kind: "unreadable", what: "version" };
  const vulnerable = npmRange(advisory.vulnerable!);
  if (!vulnerable) return { kind: "unreadable", what: "range" };
  if (!vulnerable.test(installed)) return { kind: "unaffected" };
  const patched = advisory.patched ? npmRange(advisory.patched) : undefined;
  const fixed = (patched && lowestPatchedAbove(installed, patched)) ?? upperBoundOf(installed, vulnerable);
  return fixed ? { kind: "affected", fixed } : { kind: "affected" };
}

/** Whether the advisory covers `version` of its package, and the version that fixes it when known. */
export function matchAdvisory(advisory: SnapshotAdvisory, version: string): Match {
  const { ecosystem } = advisory;
  if (!isReadableVersion(ecosystem, version)) return { kind: "unreadable", what: "version" };
  if (advisory.excludes?.some((excluded) => compareVersions(ecosystem, version, excluded) === 0))
    return { kind: "unaffected" };
  if (advisory.vulnerable !== undefined) return matchNpmRange(advisory, version);
  let unreadable = 0;
  for (const events of advisory.ranges ?? []) {
    const result = inRange(ecosystem, version, events);
    if (result === undefined) unreadable += 1;
    else if (result.affected)
      return result.fixed ? { kind: "affected", fixed: result.fixed } : { kind: "affected" };
  }
  if (advisory.versions?.some((listed) => compareVersions(ecosystem, version, listed) === 0))
    return { kind: "affected" };
  // A range that could not be read might have covered the version: the advisory is skipped, not cleared.
  return unreadable > 0 ? { kind: "unreadable", what: "range" } : { kind: "unaffected" };
}
