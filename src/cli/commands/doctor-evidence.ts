import { inventoryByProvenance } from "../../map/inventory.ts";
import type { Operation, SystemMap } from "../../map/system-map.ts";
import { DISCOVERED_NOTE_PREFIX, discoverOpenApi } from "../../probes/openapi/discover-openapi.ts";
import {
  type LoadedOpenApi,
  loadOpenApi,
  resolveOpenApiLocation,
} from "../../probes/openapi/load-openapi.ts";
import { operationsFromOpenApi } from "../../probes/openapi/operations-from-openapi.ts";
import { scanSourceRoutes } from "../../probes/routes/find-source-routes.ts";
import { SystemMapStore } from "../../store/system-map-store.ts";
import type { TargetEvidence } from "../../targets/capabilities.ts";
import type { LoadedTarget } from "../../tools/context.ts";
import { composeOperations } from "../../tools/servers/map-draft.ts";

// What `qaas doctor` knows about a target beyond its profile: the latest system map MAPPER saved, or,
// before the first run, a quick static read of the source (the OpenAPI document in the tree and the
// source routes, composed as MAPPER composes them). Requests go out only with `live` on a live target,
// and only GETs for the OpenAPI document.

/** A database the profile does not name, found by reading the source (`in`: the `file:line` that says so). */
export type DatabaseFinder = (
  root: string,
  options: { exclude?: string[] },
) => { kind: string; path?: string; url_env?: string; in: string } | undefined;

export interface EvidenceOptions {
  /** The store holding saved system maps. */
  home: string;
  /** Allow GETs of the OpenAPI document on a live target. */
  live?: boolean;
  findDatabase?: DatabaseFinder;
  fetch?: typeof fetch;
}

export async function gatherEvidence(
  target: LoadedTarget,
  options: EvidenceOptions,
): Promise<TargetEvidence> {
  const notes: string[] = [];
  let saved: ReturnType<SystemMapStore["latest"]>;
  try {
    saved = new SystemMapStore(options.home).latest(target.profile.name);
  } catch (error) {
    notes.push(`the saved system map is unreadable (${(error as Error).message}); read the source instead`);
  }
  const evidence = saved
    ? fromMap(saved.map, `system map v${saved.version} (${saved.map.created_at})`, target)
    : await fromStaticRead(target, options);
  evidence.notes.unshift(...notes);
  if (!target.profile.database && !evidence.database && target.root && options.findDatabase) {
    evidence.database = options.findDatabase(target.root, { exclude: excluded(target) });
  }
  return evidence;
}

function fromMap(map: SystemMap, basis: string, target: LoadedTarget): TargetEvidence {
  // MAPPER notes how it found a document the profile does not name.
  const discovered = map.notes.find((note) => note.startsWith(DISCOVERED_NOTE_PREFIX));
  const found = target.profile.api?.openapi
    ? "profile"
    : discovered
      ? `not in the profile: ${discovered.slice(DISCOVERED_NOTE_PREFIX.length)}`
      : "in the map";
  const database = map.database
    ? {
        kind: map.database.kind,
        path: map.database.found?.path,
        url_env: map.database.found?.url_env,
        in: map.database.found?.in ?? "the map",
        tables: map.database.tables.length,
      }
    : undefined;
  return {
    basis,
    operations: { total: map.operations.length, by_source: inventoryByProvenance(map.operations) },
    ...(map.openapi ? { openapi: { source: map.openapi.source, version: map.openapi.version, found } } : {}),
    channels: map.channels.map((channel) => ({
      path: channel.path,
      ...(channel.protocol ? { protocol: channel.protocol } : {}),
      seen_in: channel.seen_in,
    })),
    ...(database ? { database } : {}),
    pages: map.pages.length,
    notes: [],
  };
}

async function fromStaticRead(target: LoadedTarget, options: EvidenceOptions): Promise<TargetEvidence> {
  const notes: string[] = [];
  const document = await readDocument(target, options, notes);
  const documented: Operation[] = document
    ? operationsFromOpenApi(document.loaded.document, { basePath: target.profile.api?.base_path })
    : [];
  const scan = target.root ? scanSourceRoutes(target.root, { exclude: excluded(target) }) : undefined;
  notes.push(...(scan?.notes ?? []));
  const operations = composeOperations(documented, scan?.routes ?? []);
  return {
    basis: `a static read of the source (no system map saved yet${options.live ? "" : "; no requests sent"})`,
    operations: { total: operations.length, by_source: inventoryByProvenance(operations) },
    ...(document
      ? {
          openapi: {
            source: document.loaded.source,
            version: document.loaded.version,
            found: document.found,
          },
        }
      : {}),
    channels: (scan?.channels ?? []).map((channel) => ({
      path: channel.path,
      protocol: /socket\.?io/i.test(channel.framework) ? "socket.io" : "websocket",
      seen_in: ["source"],
    })),
    ...(scan ? { source_files: scan.files } : {}),
    notes,
  };
}

/**
 * The profile's document when it can be read without the network (or with it, when allowed); else one
 * discovered in the tree, or at the usual URLs when allowed.
 */
async function readDocument(
  target: LoadedTarget,
  options: EvidenceOptions,
  notes: string[],
): Promise<{ loaded: LoadedOpenApi; found: string } | undefined> {
  const named = target.profile.api?.openapi;
  const live = options.live === true;
  const baseUrl =
    target.profile.environment.mode !== "none" ? target.profile.environment.base_url : undefined;
  if (named) {
    try {
      const location = resolveOpenApiLocation(named, { root: target.root, baseUrl });
      if (location.kind === "url" && !live) {
        notes.push(
          `the OpenAPI document ${named} is served by the app: read when the map phase runs (or pass --live)`,
        );
        return undefined;
      }
      const loaded = await loadOpenApi(named, { root: target.root, baseUrl, fetch: options.fetch });
      return { loaded, found: "profile" };
    } catch (error) {
      notes.push(`the OpenAPI document ${named} was not read: ${(error as Error).message}`);
      return undefined;
    }
  }
  const discovered = await discoverOpenApi(target, { live, fetch: options.fetch });
  return discovered
    ? { loaded: discovered.loaded, found: `not in the profile: ${discovered.found}` }
    : undefined;
}

function excluded(target: LoadedTarget): string[] {
  return target.goldenLedger ? [target.goldenLedger] : [];
}
