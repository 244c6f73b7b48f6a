import path from "node:path";
import picomatch from "picomatch";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { ImportGraph, ModuleNode } from "./import-graph.ts";

// Which layer each module belongs to: the profile's declared layers (outermost first, folder globs), or,
// when none are declared, three layers inferred from conventional names. Inference looks at the deepest
// folder of the path with a known name, then at the file's own name (`users.controller.ts`, `views.py`).

export interface LayerModel {
  source: "declared" | "inferred";
  /** Layer names, outermost first. */
  names: string[];
  /** Module file → layer index; unassigned modules are absent. */
  layerOf: Map<string, number>;
  /** Modules of the data-access kind (inferred only): the targets a skipped layer is judged on. */
  dataAccess: Set<string>;
}

const OUTER_FOLDERS = new Set([
  "routes",
  "route",
  "router",
  "routers",
  "controllers",
  "controller",
  "handlers",
  "handler",
  "endpoints",
  "resolvers",
  "views",
  "api",
]);
const MIDDLE_FOLDERS = new Set([
  "services",
  "service",
  "domain",
  "usecases",
  "use-cases",
  "use_cases",
  "application",
  "interactors",
  "business",
]);
const DATA_ACCESS_FOLDERS = new Set([
  "db",
  "database",
  "repositories",
  "repository",
  "repos",
  "dal",
  "persistence",
  "dao",
]);
// Inner, but not data access: a `data/` folder often holds static tables, and routes reading models for
// their shapes is common; neither is a skipped layer.
const MODEL_FOLDERS = new Set(["models", "model", "entities", "data"]);

// File names: whole names (`views.py`, `db.ts`) or a dotted role suffix (`users.controller.ts`); a hyphenated
// name such as `error-handler.ts` says nothing about a layer.
const OUTER_NAME =
  /^(routes|router|controllers|views|endpoints)$|\.(routes?|router|controller|handler|resolver)$/;
const MIDDLE_NAME = /^(services|service)$|\.(service|usecase)$/;
const DATA_NAME = /^(db|database|repository|repositories|dal)$|\.(repository|repo|dao)$/;
const MODEL_NAME = /^(models)$|\.(model|entity)$/;

/** Server frameworks: an `api/` folder is the web layer only when its modules serve requests. */
const SERVER_PACKAGES = new Set([
  "express",
  "fastify",
  "koa",
  "@koa/router",
  "koa-router",
  "hono",
  "@hapi/hapi",
  "restify",
  "next",
  "@nestjs/common",
  "flask",
  "fastapi",
  "django",
  "starlette",
  "aiohttp",
  "sanic",
  "tornado",
  "bottle",
  "falcon",
  "quart",
]);

const OUTER = 0;
const MIDDLE = 1;
const INNER = 2;

export function layerModel(graph: ImportGraph, profile: TargetProfile | undefined): LayerModel {
  const declared = profile?.layers;
  if (declared && declared.length > 0) {
    const matchers = declared.map((layer) => layer.paths.map(globMatcher));
    const layerOf = new Map<string, number>();
    for (const module of graph.modules) {
      const index = matchers.findIndex((matches) => matches.some((match) => match(module.file)));
      if (index >= 0) layerOf.set(module.file, index);
    }
    return { source: "declared", names: declared.map((layer) => layer.name), layerOf, dataAccess: new Set() };
  }
  const serverApiFolders = apiFoldersServingRequests(graph);
  const layerOf = new Map<string, number>();
  const dataAccess = new Set<string>();
  for (const module of graph.modules) {
    const inferred = inferLayer(module, serverApiFolders);
    if (inferred === undefined) continue;
    layerOf.set(module.file, inferred.layer);
    if (inferred.dataAccess) dataAccess.add(module.file);
  }
  return {
    source: "inferred",
    names: [
      "web (routes, controllers, handlers)",
      "services (domain)",
      "data access (db, repositories, models)",
    ],
    layerOf,
    dataAccess,
  };
}

/** A folder path (`src/routes`) is the folder and everything in it; a glob is matched as written. */
function globMatcher(pattern: string): (file: string) => boolean {
  const cleaned = pattern.replace(/^\.\//, "").replace(/\/+$/, "");
  if (!/[*?[\]{}!]/.test(cleaned)) return (file) => file === cleaned || file.startsWith(`${cleaned}/`);
  const matcher = picomatch(cleaned, { dot: true });
  const inside = picomatch(`${cleaned}/**`, { dot: true });
  return (file) => matcher(file) || inside(file);
}

function apiFoldersServingRequests(graph: ImportGraph): Set<string> {
  const folders = new Set<string>();
  for (const [file, packages] of graph.externalImports) {
    if (!packages.some((name) => SERVER_PACKAGES.has(name))) continue;
    const parts = file.split("/");
    const index = parts.lastIndexOf("api");
    if (index >= 0 && index < parts.length - 1) folders.add(parts.slice(0, index + 1).join("/"));
  }
  return folders;
}

function inferLayer(
  module: ModuleNode,
  serverApiFolders: ReadonlySet<string>,
): { layer: number; dataAccess: boolean } | undefined {
  if (module.test || module.config || module.declaration) return undefined;
  const parts = module.file.split("/");
  const folders = parts.slice(0, -1);
  for (let index = folders.length - 1; index >= 0; index -= 1) {
    const name = folders[index]!.toLowerCase();
    if (name === "api") {
      if (serverApiFolders.has(folders.slice(0, index + 1).join("/")))
        return { layer: OUTER, dataAccess: false };
      continue;
    }
    if (OUTER_FOLDERS.has(name)) return { layer: OUTER, dataAccess: false };
    if (MIDDLE_FOLDERS.has(name)) return { layer: MIDDLE, dataAccess: false };
    if (DATA_ACCESS_FOLDERS.has(name)) return { layer: INNER, dataAccess: true };
    if (MODEL_FOLDERS.has(name)) return { layer: INNER, dataAccess: false };
  }
  const stem = path.posix
    .basename(module.file)
    .replace(/\.[^.]+$/, "")
    .toLowerCase();
  if (OUTER_NAME.test(stem)) return { layer: OUTER, dataAccess: false };
  if (MIDDLE_NAME.test(stem)) return { layer: MIDDLE, dataAccess: false };
  if (DATA_NAME.test(stem)) return { layer: INNER, dataAccess: true };
  if (MODEL_NAME.test(stem)) return { layer: INNER, dataAccess: false };
  return undefined;
}
