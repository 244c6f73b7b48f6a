import { canonicalLocation } from "../../envelope/envelope.ts";
import { withFormConstraints } from "../../map/form-constraints.ts";
import { composeInventory, type OperationCandidate } from "../../map/inventory.ts";
import type { Operation, Route, SystemMap } from "../../map/system-map.ts";
import type { LoadedTarget, RunContext } from "../context.ts";

// The map under construction within one run: each map_* tool fills its part, in any order, and
// save_system_map composes them. Operations are composed at the end, so the OpenAPI document and the
// source can be read in either order.

export const MAP_DRAFT_KEY = "map:draft";

export type MapPart =
  | "openapi"
  | "source"
  | "pages"
  | "frontend"
  | "traffic"
  | "graphql"
  | "channels"
  | "database"
  | "ownership";

export interface MapDraft {
  openapi: SystemMap["openapi"];
  documentedOperations: Operation[];
  routes: Route[];
  sourceChannels: string[];
  pages: SystemMap["pages"];
  database: SystemMap["database"];
  ownership: SystemMap["ownership"];
  graphql: SystemMap["graphql"];
  /** Channels found beyond the source scan's plain paths (socket.io servers, their namespaces and events). */
  channels: SystemMap["channels"];
  /** Operations each reader learned beyond the document and the source routes, replaced when it runs again. */
  candidates: Map<MapPart, OperationCandidate[]>;
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
    graphql: [],
    channels: [],
    candidates: new Map(),
    notes: new Map(),
  };
  context.shared.set(MAP_DRAFT_KEY, draft);
  return draft;
}

/** A source route as an inventory candidate: its template, the parameters and body its handler reads. */
export function routeCandidate(route: Route): OperationCandidate {
  return {
    method: route.method === "*" ? "ALL" : route.method.toUpperCase(),
    path: route.path,
    provenance: "source",
    parameters: route.parameters,
    request_body: route.request_body
      ? {
          content_type: route.request_body.content_type ?? "application/json",
          required: true,
          schema: route.request_body.schema,
        }
      : undefined,
    handler: { file: route.file, line: route.line, framework: route.framework },
  };
}

/**
 * The inventory: documented operations, each marked `source` when a route implements it, one operation per
 * route the document does not list (templates compared ignoring parameter names), and what every other
 * reader added.
 */
export function composeOperations(
  documented: readonly Operation[],
  routes: readonly Route[],
  others: readonly OperationCandidate[] = [],
): Operation[] {
  return composeInventory(documented, [...routes.map(routeCandidate), ...others]);
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
  const detailed = new Map(draft.channels.map((channel) => [channel.path, channel]));
  for (const channel of draft.channels) for (const seen of channel.seen_in) addChannel(channel.path, seen);
  return {
    map_version: 1,
    target: profile.name,
    created_at: extra.createdAt,
    commit: extra.commit,
    base_url: liveBaseUrl(target) ?? profile.environment.base_url ?? null,
    openapi: draft.openapi,
    operations: withoutExcluded(
      withFormConstraints(
        composeOperations(draft.documentedOperations, draft.routes, [...draft.candidates.values()].flat()),
        draft.pages,
      ),
      profile.api?.exclude ?? [],
    ),
    routes: draft.routes,
    pages: draft.pages,
    channels: [...channels].map(([path, seenIn]) => ({
      ...detailed.get(path),
      path,
      seen_in: [...seenIn],
    })),
    graphql: draft.graphql,
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
