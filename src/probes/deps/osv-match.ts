import type { Ecosystem } from "./version-order.ts";
import { compareVersions } from "./version-order.ts";

/** The parts of an OSV record the matcher reads (https://ossf.github.io/osv-schema/). */
export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

export interface OsvAffected {
  package: { ecosystem: string; name: string };
  ranges?: Array<{ type: string; events: OsvEvent[] }>;
  versions?: string[];
}

export interface OsvAdvisory {
  id: string;
  aliases?: string[];
  summary?: string;
  modified?: string;
  affected: OsvAffected[];
  references?: Array<{ type: string; url: string }>;
  database_specific?: { severity?: string };
}

/** PEP 503 for PyPI (`Jinja2`, `jinja_2` → `jinja2`… `jinja-2`); npm names compare lower-cased. */
export function normalizePackageName(ecosystem: string, name: string): string {
  const lower = name.trim().toLowerCase();
  return ecosystem.toLowerCase() === "pypi" ? lower.replace(/[-_.]+/g, "-") : lower;
}

function eventVersion(event: OsvEvent): string | undefined {
  return event.introduced ?? event.fixed ?? event.last_affected;
}

/**
 * Whether `version` falls in one OSV range. Events are walked in version order: `introduced` opens an
 * affected span ("0" opens it from the start), `fixed` closes it at that version (exclusive),
 * `last_affected` closes it after that version (inclusive). `limit` only bounds git ranges and is ignored.
 */
export function inRange(ecosystem: Ecosystem, version: string, events: readonly OsvEvent[]): boolean {
  const ordered = events
    .filter((event) => eventVersion(event) !== undefined && event.limit === undefined)
    .map((event, index) => ({ event, index }))
    .sort((a, b) => {
      const left = eventVersion(a.event)!;
      const right = eventVersion(b.event)!;
      if (left === "0" && right === "0") return a.index - b.index;
      if (left === "0") return -1;
      if (right === "0") return 1;
      return compareVersions(ecosystem, left, right) || a.index - b.index;
    });
  let affected = false;
  for (const { event } of ordered) {
    if (event.introduced !== undefined) {
      if (event.introduced === "0" || compareVersions(ecosystem, version, event.introduced) >= 0)
        affected = true;
    } else if (event.fixed !== undefined) {
      if (compareVersions(ecosystem, version, event.fixed) >= 0) affected = false;
    } else if (event.last_affected !== undefined) {
      if (compareVersions(ecosystem, version, event.last_affected) > 0) affected = false;
    }
  }
  return affected;
}

/** The affected entries of `advisory` that cover `name@version`, with the fixed version of the matching range. */
export function matchAdvisory(
  advisory: OsvAdvisory,
  ecosystem: Ecosystem,
  name: string,
  version: string,
): { fixed: string | undefined } | undefined {
  const wanted = normalizePackageName(ecosystem, name);
  for (const affected of advisory.affected) {
    if (affected.package.ecosystem.toLowerCase() !== ecosystem.toLowerCase()) continue;
    if (normalizePackageName(ecosystem, affected.package.name) !== wanted) continue;
    if (affected.versions?.includes(version)) return { fixed: undefined };
    for (const range of affected.ranges ?? []) {
      if (range.type === "GIT") continue;
      if (inRange(ecosystem, version, range.events))
        return { fixed: range.events.find((event) => event.fixed !== undefined)?.fixed };
    }
  }
  return undefined;
}
