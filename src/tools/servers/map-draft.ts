import { canonicalLocation } from "../../envelope/envelope.ts";
import type { Operation, Route, SystemMap } from "../../map/system-map.ts";
import { templateKey, templateParameters } from "../../probes/routes/path-template.ts";
import type { LoadedTarget, RunContext } from "../context.ts";

// The map under construction within one run: each map_* tool fills its part, in any order, and
// save_system_map composes them. Operations are composed at the end, so the OpenAPI document and the
// source can be read in either order.

export const MAP_DRAFT_KEY = "map:draft";

export type MapPart = "openapi" | "source" | "pages" | "database" | "ownership";

export interface MapDraft {
  openapi: SystemMap["openapi"];
  documentedOperations: Operation[];
  routes: Route[];
  sourceChannels: string[];
  pages: SystemMap["pages"];
  database: SystemMap["database"];
  ownership: SystemMap["ownership"];
  /** Notes per part, replaced when a part is mapped again. */
  notes: Map<MapPart, string[]>;
}

export function mapDraft(context: Pick<RunContext, "shared">): MapDraft {
  const existing = context.shared.get(MAP_DRAFT_KEY) as MapDraft | undefined;
  if (existing) return existing;
  const draft: MapDraft = {
    openapi: null,
    documentedOperations: [],
    routes: [],
    sourceChannels: [],
    pages: [],
    database: null,
    ownership: [],
    notes: new Map(),
  };
  context.shared.set(MAP_DRAFT_KEY, draft);
  return draft;
}

/**
 * Documented operations, each marked `source` when a route implements it, plus one undocumented
 * operation per route the document does not list (templates compared ignoring parameter names).
 */
export function composeOperations(documented: readonly Operation[], routes: readonly Route[]): Operation[] {
  const operations = documented.map((operation) => ({ ...operation, seen_in: [...operation.seen_in] }));
  const markSeen = (operation: Operation): void => {
    if (!operation.seen_in.includes("source")) operation.seen_in.push("source");
  };
  for (const route of routes) {
    const key = templateKey(route.path);
    const method = route.method === "*" ? "ALL" : route.method.toUpperCase();
    const samePath = operations.filter((operation) => templateKey(operation.path) === key);
    // A route for any method implements whatever the document lists at its path.
    const matches = method === "ALL" ? samePath : samePath.filter((operation) => operation.method === method);
    if (matches.length > 0) {
      for (const operation of matches) markSeen(operation);
      continue;
    }
    operations.push({
      method,
      path: route.path,
      security: "unknown",
      parameters: templateParameters(route.path).map((name) => ({
        name,
        in: "path" as const,
        required: true,
      })),
      responses: {},
      seen_in: ["source"],
      documented: false,
    });
  }
  return operations;
}

/** Everything the map is made of, unvalidated: save_system_map checks it against SystemMapSchema. */
export function composeSystemMap(
  draft: MapDraft,
  target: LoadedTarget,
  extra: { commit: string | null; createdAt: string; notes?: string[] },
): SystemMap {
  const profile = target.profile;
  const channels = new Map<string, Set<string>>();
  const addChannel = (path: string, seenIn: string): void => {
    channels.set(path, (channels.get(path) ?? new Set()).add(seenIn));
  };
  for (const path of draft.sourceChannels) addChannel(path, "source");
  for (const path of profile.websocket?.paths ?? []) addChannel(path, "profile");
  return {
    map_version: 1,
    target: profile.name,
    created_at: extra.createdAt,
    commit: extra.commit,
    base_url: liveBaseUrl(target) ?? profile.environment.base_url ?? null,
    openapi: draft.openapi,
    operations: withoutExcluded(
      composeOperations(draft.documentedOperations, draft.routes),
      profile.api?.exclude ?? [],
    ),
    routes: draft.routes,
    pages: draft.pages,
    channels: [...channels].map(([path, seenIn]) => ({ path, seen_in: [...seenIn] })),
    database: draft.database,
    ownership: draft.ownership,
    notes: [...[...draft.notes.values()].flat(), ...(extra.notes ?? [])],
  };
}

/** Operations the profile says no probe may send (a test reset, a logout) leave the map, so nothing calls them. */
export function withoutExcluded(operations: Operation[], excluded: readonly string[]): Operation[] {
  if (excluded.length === 0) return operations;
  const keys = new Set(excluded.map((entry) => canonicalLocation("endpoint", entry)));
  return operations.filter(
    (operation) => !keys.has(canonicalLocation("endpoint", `${operation.method} ${operation.path}`)),
  );
}

/** The base URL probes may send requests to: none for a static-only target. */
export function liveBaseUrl(target: LoadedTarget | undefined): string | undefined {
  if (!target || target.profile.environment.mode === "none") return undefined;
  return target.profile.environment.base_url;
}
