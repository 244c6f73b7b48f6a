import type { LocationKind } from "./taxonomy.ts";

/** A location in the golden-ledger form: exactly one key, e.g. `{ endpoint: "GET /api/items/{id}" }`. */
export type Location = Partial<Record<LocationKind, string>>;

/** Turns `:id`, `<id>`, `<int:id>` and `{id}` into one template form and drops a trailing slash. */
export function normalizePath(path: string): string {
  let normalized = path.trim().split(/[?#]/)[0] ?? "";
  normalized = normalized
    .replace(/\{[^}/]+\}/g, "{}")
    .replace(/<[^>/]+>/g, "{}")
    .replace(/(^|\/):[A-Za-z_][A-Za-z0-9_]*/g, "$1{}");
  if (normalized.length > 1 && normalized.endsWith("/")) normalized = normalized.slice(0, -1);
  return normalized || "/";
}

/** `get /api/x/:id/` → `GET /api/x/{}`. */
export function normalizeEndpoint(endpoint: string): string {
  const match = endpoint.trim().match(/^([A-Za-z]+)\s+(\S+)$/);
  if (!match) return endpoint.trim();
  return `${match[1]!.toUpperCase()} ${normalizePath(match[2]!)}`;
}

/** The single kind and value of a location; throws if it has none or several keys. */
export function locationEntry(location: Location): [LocationKind, string] {
  const entries = Object.entries(location).filter(([, value]) => value !== undefined) as [
    LocationKind,
    string,
  ][];
  if (entries.length !== 1) throw new Error(`a location has exactly one key, got ${entries.length}`);
  return entries[0]!;
}
