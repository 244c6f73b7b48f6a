import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { QaasError } from "../../errors.ts";
import type { GuardedAction } from "../../guardrails/actions.ts";
import { type SystemMap, SystemMapSchema } from "../../map/system-map.ts";
import { effectiveDatabase } from "../../probes/data/target-database.ts";
import { fetchThroughClient } from "../../probes/http/client-fetch.ts";
import { openHttpClient, probeTargetOf } from "../../probes/http/run-http.ts";
import {
  discoveredNote,
  discoverOpenApi,
  USUAL_OPENAPI_PATHS,
} from "../../probes/openapi/discover-openapi.ts";
import {
  loadOpenApi,
  operationsFromOpenApi,
  resolveOpenApiLocation,
} from "../../probes/openapi/load-openapi.ts";
import { findOwnership } from "../../probes/ownership/ownership.ts";
import { scanChannels } from "../../probes/realtime/find-channels.ts";
import { scanSourceRoutesAsync } from "../../probes/routes/find-source-routes.ts";
import type { FoundDatabase } from "../../probes/schema/find-database.ts";
import { readPostgresSchema } from "../../probes/schema/read-postgres-schema.ts";
import { readSqliteSchema } from "../../probes/schema/read-sqlite-schema.ts";
import type { LoadedTarget, ToolContext } from "../context.ts";
import { err, ok, type ToolResult } from "../result.ts";
import { defineTool, type ToolDefinition } from "../tool.ts";
import { composeOperations, composeSystemMap, liveBaseUrl, type MapPart, mapDraft } from "./map-draft.ts";
import { mapGraphqlTools } from "./map-graphql-tools.ts";
import { mapWebTools } from "./map-web-tools.ts";

// MAPPER's tools. Each reads one part of the target into the run's draft map and answers a summary
// (counts, a few examples), never the whole part: a model seat's context stays small, and the full map
// is one `get_system_map` away once saved.

const EXAMPLES = 5;

const mapOpenApi = defineTool({
  name: "map_openapi",
  server: "map",
  description:
    "Read the target's OpenAPI document (profile api.openapi, or `location`: a file under the target root, a URL path on the live target, or an absolute URL) into the draft system map. Answers operation counts and examples.",
  input: z.strictObject({ location: z.string().min(1).optional() }),
  actions: (input, context) => {
    const location = input.location ?? context.target?.profile.api?.openapi;
    if (!location) {
      const base = liveBaseUrl(context.target);
      return base && discoveryAllowed(context.target)
        ? USUAL_OPENAPI_PATHS.map((usual) => getAction(joinUrl(base, usual)))
        : [];
    }
    try {
      const resolved = resolveOpenApiLocation(location, openApiOptions(context.target));
      return [
        resolved.kind === "file" ? { kind: "read_file", path: resolved.relative } : getAction(resolved.url),
      ];
    } catch {
      return [];
    }
  },
  async run(input, context) {
    const draft = mapDraft(context);
    const location = input.location ?? context.target?.profile.api?.openapi;
    if (!location) {
      const discovered =
        context.target && discoveryAllowed(context.target)
          ? await discoverOpenApi(context.target, { signal: context.signal, fetch: documentFetch(context) })
          : undefined;
      if (!discovered) {
        draft.openapi = null;
        draft.documentedOperations = [];
        return skipped(
          context,
          "openapi",
          discoveryAllowed(context.target)
            ? "no OpenAPI document: the profile names none (api.openapi) and none was found in the source or at the usual URLs"
            : "no OpenAPI document: the profile names none and says not to look for one (api.discover: false)",
        );
      }
      const operations = operationsFromOpenApi(discovered.loaded.document, {
        basePath: context.target?.profile.api?.base_path,
      });
      draft.openapi = discovered.loaded;
      draft.documentedOperations = operations;
      setNotes(context, "openapi", [discoveredNote(discovered)]);
      return ok({
        source: discovered.loaded.source,
        version: discovered.loaded.version,
        found: discovered.found,
        operations: operations.length,
        examples: operations.slice(0, EXAMPLES).map((operation) => `${operation.method} ${operation.path}`),
      });
    }
    try {
      const resolved = resolveOpenApiLocation(location, openApiOptions(context.target));
      if (resolved.kind === "file" && isGoldenLedger(context.target, resolved.file)) {
        return err(`${location} is not readable by any agent`);
      }
      const loaded = await loadOpenApi(location, {
        ...openApiOptions(context.target),
        fetch: documentFetch(context),
      });
      const operations = operationsFromOpenApi(loaded.document, {
        basePath: context.target?.profile.api?.base_path,
      });
      draft.openapi = loaded;
      draft.documentedOperations = operations;
      setNotes(context, "openapi", []);
      return ok({
        source: loaded.source,
        version: loaded.version,
        title: loaded.title,
        operations: operations.length,
        security: countBy(operations.map((operation) => operation.security)),
        examples: operations.slice(0, EXAMPLES).map((operation) => `${operation.method} ${operation.path}`),
      });
    } catch (error) {
      return failed(context, "openapi", `OpenAPI document ${location} not read`, error);
    }
  },
});

const mapSourceRoutes = defineTool({
  name: "map_source_routes",
  server: "map",
  description:
    "Extract HTTP routes and WebSocket endpoints from the target's source (JavaScript/TypeScript: Express, Fastify, Hono, Koa, Next.js, node:http; Python: Flask, FastAPI, Django, http.server) into the draft map. Routes the OpenAPI document does not list become undocumented operations. Optional `path`: a folder under the target root.",
  input: z.strictObject({
    path: z.string().min(1).optional(),
    max_files: z.number().int().positive().max(50_000).optional(),
  }),
  actions: (input) => (input.path ? [{ kind: "read_file", path: input.path }] : []),
  async run(input, context) {
    const draft = mapDraft(context);
    const root = context.target?.root;
    if (!root) return skipped(context, "source", "the target has no source root: routes not read from code");
    const scanRoot = path.resolve(root, input.path ?? ".");
    if (path.relative(root, scanRoot).startsWith(".."))
      return err(`path ${input.path} leaves the target root`);
    if (!fs.existsSync(scanRoot))
      return skipped(context, "source", `source folder ${scanRoot} does not exist`);
    const prefix = path.relative(root, scanRoot).split(path.sep).join("/");
    const scan = await scanSourceRoutesAsync(scanRoot, {
      exclude: context.target?.goldenLedger ? [context.target.goldenLedger] : [],
      maxFiles: input.max_files,
    });
    draft.routes = scan.routes.map((route) =>
      prefix ? { ...route, file: `${prefix}/${route.file}` } : route,
    );
    draft.sourceChannels = [...new Set(scan.channels.map((channel) => channel.path))];
    const channelScan = scanChannels(scanRoot, {
      exclude: context.target?.goldenLedger ? [context.target.goldenLedger] : [],
    });
    draft.channels = channelScan.channels.map((found) => found.channel);
    const notes = [...scan.notes, ...channelScan.notes];
    if (scan.routes.length === 0)
      notes.push("no routes found in the source (framework not recognised, or none)");
    setNotes(context, "source", notes);
    const undocumented = composeOperations(draft.documentedOperations, draft.routes).filter(
      (operation) => !operation.documented,
    );
    return ok({
      files_read: scan.files,
      routes: draft.routes.length,
      by_framework: countBy(draft.routes.map((route) => route.framework)),
      channels: [...new Set([...draft.sourceChannels, ...draft.channels.map((channel) => channel.path)])],
      undocumented_operations: draft.openapi ? undocumented.length : undefined,
      examples: (draft.openapi ? undocumented : draft.routes)
        .slice(0, EXAMPLES)
        .map((item) => `${item.method} ${item.path}`),
      notes,
    });
  },
});

const mapDatabase = defineTool({
  name: "map_database",
  server: "map",
  description:
    "Read the target database's schema (tables, columns, primary and foreign keys, unique and plain indexes, CHECK constraints) read-only into the draft map. SQLite from the profile's path (or `path`, under the target root); PostgreSQL from the profile's secret_ref URL.",
  input: z.strictObject({ path: z.string().min(1).optional() }),
  actions: (input, context) => {
    const database = effectiveDatabase(context.target, context.shared);
    const file = input.path ?? (database?.kind === "sqlite" ? database.path : undefined);
    return file ? [{ kind: "read_file", path: file }] : [];
  },
  async run(input, context) {
    const draft = mapDraft(context);
    const database = effectiveDatabase(context.target, context.shared);
    const kind = input.path ? "sqlite" : database?.kind;
    if (!kind)
      return skipped(
        context,
        "database",
        "no database: the profile has no database section and the source shows none",
      );
    try {
      let tables: NonNullable<typeof draft.database>["tables"];
      if (kind === "sqlite") {
        const root = context.target?.root;
        const relative = input.path ?? (database?.kind === "sqlite" ? database.path : undefined);
        if (!relative)
          return skipped(context, "database", "database.kind is sqlite but database.path is missing");
        const file = root ? path.resolve(root, relative) : path.resolve(relative);
        if (isGoldenLedger(context.target, file)) return err(`${relative} is not readable by any agent`);
        if (!fs.existsSync(file)) {
          return skipped(
            context,
            "database",
            `SQLite file ${relative} does not exist yet (start or seed the target first)`,
          );
        }
        tables = readSqliteSchema(file);
      } else {
        const variable = database?.kind === "postgres" ? database.variable : undefined;
        const url = variable ? process.env[variable] : undefined;
        if (!url)
          return skipped(
            context,
            "database",
            `PostgreSQL URL not available: set ${variable ?? "database.url"} in the environment`,
          );
        tables = await readPostgresSchema(url);
      }
      const found = input.path ? undefined : database?.found;
      draft.database = { kind, tables, ...(found ? { found: foundOf(found) } : {}) };
      setNotes(context, "database", tables.length === 0 ? ["the database has no tables yet"] : []);
      return ok({
        kind,
        ...(found ? { found_in: found.in } : {}),
        tables: tables.length,
        foreign_keys: tables.reduce((sum, table) => sum + table.foreign_keys.length, 0),
        indexes: tables.reduce((sum, table) => sum + table.indexes.length, 0),
        unique_indexes: tables.reduce(
          (sum, table) => sum + table.indexes.filter((index) => index.unique).length,
          0,
        ),
        checks: tables.reduce((sum, table) => sum + table.checks.length, 0),
        examples: tables
          .slice(0, EXAMPLES * 2)
          .map((table) => `${table.name} (${table.columns.length} columns)`),
      });
    } catch (error) {
      return failed(context, "database", "database schema not read", error);
    }
  },
});

const mapOwnership = defineTool({
  name: "map_ownership",
  server: "map",
  description:
    "Find who owns which part of the target: its CODEOWNERS file, else the most frequent recent git author per top-level folder. Answers the number of entries and owners.",
  input: z.strictObject({}),
  async run(_input, context) {
    const draft = mapDraft(context);
    const root = context.target?.root;
    if (!root) return skipped(context, "ownership", "the target has no source root: no owners");
    const result = findOwnership(root, {
      exclude: context.target?.goldenLedger ? [context.target.goldenLedger] : [],
    });
    draft.ownership = result.entries;
    setNotes(context, "ownership", result.notes);
    return ok({
      source: result.source.kind === "codeowners" ? `codeowners (${result.source.file})` : result.source.kind,
      entries: result.entries.length,
      owners: [...new Set(result.entries.map((entry) => entry.owner))].slice(0, EXAMPLES * 2),
      notes: result.notes,
    });
  },
});

const saveSystemMap = defineTool({
  name: "save_system_map",
  server: "map",
  description:
    "Validate the draft system map built by the map_* tools and save it as the target's next immutable version (pinned to this run). Answers the version and counts; a validation failure answers the field errors.",
  input: z.strictObject({ notes: z.array(z.string().min(1)).max(50).optional() }),
  async run(input, context) {
    const target = context.target;
    if (!target) return err("no target in this run: nothing to map");
    const draft = mapDraft(context);
    const candidate = composeSystemMap(draft, target, {
      commit: headCommit(target.root),
      createdAt: new Date().toISOString(),
      notes: input.notes,
    });
    const parsed = SystemMapSchema.safeParse(candidate);
    if (!parsed.success) {
      const issues = parsed.error.issues.map(
        (issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`,
      );
      return err(`the draft system map is invalid: ${issues.slice(0, 10).join("; ")}`, { issues });
    }
    const map = parsed.data;
    const { version } = context.saveSystemMap(map);
    const documented = map.operations.filter((operation) => operation.documented).length;
    return ok({
      version,
      counts: {
        operations: map.operations.length,
        documented,
        undocumented: map.operations.length - documented,
        routes: map.routes.length,
        pages: map.pages.length,
        channels: map.channels.length,
        tables: map.database?.tables.length ?? 0,
        owners: map.ownership.length,
        notes: map.notes.length,
      },
    });
  },
});

export const mapTools: ToolDefinition[] = [
  mapOpenApi,
  mapSourceRoutes,
  ...mapWebTools,
  ...mapGraphqlTools,
  mapDatabase,
  mapOwnership,
  saveSystemMap,
];

/** Where the source showed the database, in the map's shape. */
function foundOf(found: FoundDatabase): NonNullable<NonNullable<SystemMap["database"]>["found"]> {
  return found.kind === "sqlite"
    ? { path: found.path, in: found.in }
    : { url_env: found.url_env, in: found.in };
}

/** A profile may say its target has no document to find (to test it as an application without one). */
function discoveryAllowed(target: LoadedTarget | undefined): boolean {
  return target?.profile.api?.discover ?? true;
}

/** Documents are large; 16 MiB bounds what one is read to. */
const MAX_DOCUMENT_CHARS = 16 * 1024 * 1024;

/** Fetching a document is a request like any other: budgeted, capped, refused when the profile excludes it. */
function documentFetch(context: ToolContext): typeof fetch | undefined {
  const target = probeTargetOf(context);
  if (typeof target === "string") return undefined;
  return fetchThroughClient(openHttpClient(context, target, { maxRequests: 40 }), {
    maxBodyChars: MAX_DOCUMENT_CHARS,
  });
}

function openApiOptions(target: LoadedTarget | undefined): { root?: string; baseUrl?: string } {
  return { root: target?.root, baseUrl: liveBaseUrl(target) };
}

function getAction(url: string): GuardedAction {
  return { kind: "http_request", method: "GET", url };
}

function joinUrl(base: string, entry: string): string {
  return /^https?:\/\//i.test(entry) ? entry : `${base.replace(/\/+$/, "")}/${entry.replace(/^\/+/, "")}`;
}

function isGoldenLedger(target: LoadedTarget | undefined, file: string): boolean {
  if (!target?.goldenLedger || /^https?:/i.test(file)) return false;
  return path.resolve(target.root ?? ".", file) === path.resolve(target.goldenLedger);
}

function setNotes(context: ToolContext, part: MapPart, notes: string[]): void {
  mapDraft(context).notes.set(part, notes);
}

/** A part the target does not have is not an error: the map says so in its notes. */
function skipped(context: ToolContext, part: MapPart, reason: string): ToolResult {
  setNotes(context, part, [reason]);
  return ok({ skipped: true, reason });
}

function failed(context: ToolContext, part: MapPart, what: string, error: unknown): ToolResult {
  const reason = error instanceof QaasError || error instanceof Error ? error.message : String(error);
  setNotes(context, part, [`${what}: ${reason}`]);
  return err(`${what}: ${reason}`);
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function headCommit(root: string | undefined): string | null {
  if (!root) return null;
  const result = spawnSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8", timeout: 10_000 });
  return result.status === 0 ? result.stdout.trim() || null : null;
}
