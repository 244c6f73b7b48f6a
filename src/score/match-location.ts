import path from "node:path";
import type { DefectEnvelope } from "../envelope/envelope.ts";
import { normalizePath } from "../envelope/location.ts";
import type { LocationKind } from "../envelope/taxonomy.ts";

// Whether a place a finding names is a place a golden ledger names, after the normalisation rules of
// spec/golden-ledger.md. Matching is a predicate on two places, not a canonical string, because a concrete
// path (`/api/invoices/17`) has to meet a template (`/api/invoices/{id}`) segment by segment.

export interface PlaceRef {
  kind: LocationKind;
  value: string;
}

const TEMPLATE = "{}";

/** The places a finding names: its location, then every related one (kind/value are the ledger's key/value). */
export function findingLocations(envelope: Pick<DefectEnvelope, "location">): PlaceRef[] {
  const { kind, value, related } = envelope.location;
  return [{ kind, value }, ...(related ?? []).map((place) => ({ kind: place.kind, value: place.value }))];
}

/**
 * The target's own routes whose every segment is literal (`/users/_debug`, `/items/new`): a template on the
 * other side (`/users/{name}`) is a different route, not a value of its parameter, so the two never match.
 * Built from the ledger's literal places and, when a run pinned one, the system map's operations and pages.
 */
export class StaticRoutes {
  private readonly paths = new Set<string>();

  constructor(paths: Iterable<string> = []) {
    for (const value of paths) this.add(value);
  }

  /** Adds `METHOD /path` or `/path`; templated paths are not static and are ignored. */
  add(value: string): void {
    const path = splitEndpoint(value)?.path ?? value;
    const segments = pathSegments(path);
    if (segments.some((segment) => segment.includes(TEMPLATE))) return;
    this.paths.add(segments.join("/"));
  }

  has(path: string): boolean {
    return this.paths.has(pathSegments(path).join("/"));
  }
}

const NO_STATIC_ROUTES = new StaticRoutes();

/** `finding` is a place a run reported; `entry` is a place in the golden ledger. Not symmetric for tables. */
export function locationMatches(
  finding: PlaceRef,
  entry: PlaceRef,
  routes: StaticRoutes = NO_STATIC_ROUTES,
): boolean {
  if (finding.kind !== entry.kind) return false;
  switch (finding.kind) {
    case "endpoint":
      return endpointsMatch(finding.value, entry.value, routes);
    case "page":
    case "channel":
      return pathsMatch(finding.value, entry.value, routes);
    case "table":
      return tablesMatch(finding.value, entry.value);
    case "file":
      return normalizeFile(finding.value) === normalizeFile(entry.value);
    case "dependency":
      return dependenciesMatch(finding.value, entry.value);
  }
}

export function anyLocationMatches(
  findings: readonly PlaceRef[],
  entries: readonly PlaceRef[],
  routes: StaticRoutes = NO_STATIC_ROUTES,
): boolean {
  return findings.some((finding) => entries.some((entry) => locationMatches(finding, entry, routes)));
}

/** Methods compare upper-cased; a value without a method matches nothing (the ledger always names one). */
export function endpointsMatch(
  finding: string,
  entry: string,
  routes: StaticRoutes = NO_STATIC_ROUTES,
): boolean {
  const left = splitEndpoint(finding);
  const right = splitEndpoint(entry);
  if (left === undefined || right === undefined) return false;
  return left.method === right.method && pathsMatch(left.path, right.path, routes);
}

export function splitEndpoint(endpoint: string): { method: string; path: string } | undefined {
  const match = endpoint.trim().match(/^([A-Za-z]+)\s+(\S+)$/);
  if (!match) return undefined;
  return { method: match[1]!.toUpperCase(), path: match[2]! };
}

/**
 * Paths of endpoints, pages and channels. `:id`, `<id>`, `<int:id>` and `{id}` are one template; a template
 * segment matches any one non-empty segment on the other side (either side may be the template); literal
 * segments compare exactly (paths are case-sensitive); query strings, fragments and a trailing `/` are
 * ignored. A full URL (`https://host/x`, `ws://host/ws`) is reduced to its path, since probes often report
 * the URL they called.
 */
export function pathsMatch(finding: string, entry: string, routes: StaticRoutes = NO_STATIC_ROUTES): boolean {
  const left = pathSegments(finding);
  const right = pathSegments(entry);
  if (left.length !== right.length) return false;
  if (!left.every((segment, index) => segmentsMatch(segment, right[index]!))) return false;
  const leftTemplated = left.some((segment) => segment.includes(TEMPLATE));
  const rightTemplated = right.some((segment) => segment.includes(TEMPLATE));
  // A template meeting a literal path is a value of its parameter, unless that literal path is a route.
  if (leftTemplated && !rightTemplated) return !routes.has(entry);
  if (rightTemplated && !leftTemplated) return !routes.has(finding);
  return true;
}

function pathSegments(value: string): string[] {
  const withoutOrigin = value.trim().replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, "");
  return normalizePath(withoutOrigin.startsWith("/") ? withoutOrigin : `/${withoutOrigin}`).split("/");
}

function segmentsMatch(left: string, right: string): boolean {
  if (left === right) return true;
  const leftTemplated = left.includes(TEMPLATE);
  const rightTemplated = right.includes(TEMPLATE);
  if (leftTemplated && rightTemplated) return left === TEMPLATE || right === TEMPLATE;
  if (leftTemplated) return templatePattern(left).test(right);
  if (rightTemplated) return templatePattern(right).test(left);
  return false;
}

/** `{}` alone matches one non-empty segment; `{}.pdf` matches `report.pdf`. */
function templatePattern(segment: string): RegExp {
  const parts = segment.split(TEMPLATE).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("[^/]+")}$`);
}

/**
 * Reading of "`table` matches `table.column` entries of that table only when the entry names the bare
 * table": a ledger entry that names a bare table (`users`) stands for the whole table, so a finding at
 * `users` or at any of its columns (`users.email`) matches it. A ledger entry that names a column
 * (`users.email`) is about that column only: a finding at `users.email` matches it, a finding at the bare
 * table `users` (or at `users.name`) does not, since it does not say the column is at fault. SQL folds
 * unquoted identifiers, so names compare case-insensitively.
 */
export function tablesMatch(finding: string, entry: string): boolean {
  const findingName = normalizeTable(finding);
  const entryName = normalizeTable(entry);
  if (findingName === entryName) return true;
  if (entryName.includes(".")) return false;
  return findingName.startsWith(`${entryName}.`) && !findingName.slice(entryName.length + 1).includes(".");
}

function normalizeTable(value: string): string {
  return value
    .trim()
    .replace(/["`[\]]/g, "")
    .toLowerCase();
}

/**
 * Source paths relative to the target root: `./` stripped, `\` turned into `/`, `a/../b` resolved, and a
 * trailing `:line` or `:line:column` dropped (findings sometimes point at a line; the ledger names files).
 */
export function normalizeFile(value: string): string {
  const withoutLine = value.trim().replace(/:\d+(:\d+)?$/, "");
  const normalized = path.posix.normalize(withoutLine.replace(/\\/g, "/"));
  return normalized.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
}

/** `name@version`: the name case-insensitively (registries fold it), the version exactly. */
export function dependenciesMatch(finding: string, entry: string): boolean {
  const left = splitDependency(finding);
  const right = splitDependency(entry);
  if (left === undefined || right === undefined) return false;
  return left.name === right.name && left.version === right.version;
}

function splitDependency(value: string): { name: string; version: string } | undefined {
  const trimmed = value.trim();
  // The last `@` separates the version; a leading one belongs to a scoped name (`@scope/name@1.0.0`).
  const at = trimmed.lastIndexOf("@");
  if (at <= 0) return undefined;
  return { name: trimmed.slice(0, at).toLowerCase(), version: trimmed.slice(at + 1) };
}
