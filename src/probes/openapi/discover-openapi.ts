import fs from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { timeoutSignal } from "../../timeout-signal.ts";
import type { LoadedTarget } from "../../tools/context.ts";
import { type FindOpenApiOptions, findOpenApiHints, type OpenApiHints } from "./find-openapi-files.ts";
import { type LoadedOpenApi, looksLikeOpenApi, openApiFromText, openApiVersion } from "./load-openapi.ts";

// A document the profile does not name is still a document: find it in the source tree, else at the
// URLs frameworks usually serve one at. A file wins over a URL (it is what the team maintains); among
// files, one the code loads wins over one merely named like a document, then the one listing the most
// paths. A URL counts only when its answer parses as OpenAPI 3.x or Swagger 2.0. Only GETs are sent.

/** Where frameworks serve their document by default (FastAPI, Spring springdoc/springfox, Swashbuckle…). */
export const USUAL_OPENAPI_PATHS = [
  "/openapi.json",
  "/openapi.yaml",
  "/swagger.json",
  "/v3/api-docs",
  "/v2/api-docs",
  "/api-docs",
  "/api/openapi.json",
  "/docs/openapi.json",
  "/swagger/v1/swagger.json",
  "/api/swagger.json",
] as const;

export interface DiscoveredOpenApi {
  loaded: LoadedOpenApi;
  /** What `api.openapi` would say to name it: the file relative to the root, or the URL path. */
  location: string;
  /** How it was found, in words for the map's notes and `qaas doctor`. */
  found: string;
}

export interface DiscoverOpenApiOptions extends FindOpenApiOptions {
  /** Try the live target's URLs when no file is found (default true when the target is live). */
  live?: boolean;
  fetch?: typeof fetch;
  /** Per request; default 5 s. */
  timeoutMs?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The target's document when its profile names none: a file in its tree, else one its live app serves. */
export async function discoverOpenApi(
  target: LoadedTarget,
  options: DiscoverOpenApiOptions = {},
): Promise<DiscoveredOpenApi | undefined> {
  const exclude = [...(options.exclude ?? []), ...(target.goldenLedger ? [target.goldenLedger] : [])];
  const hints = target.root ? findOpenApiHints(target.root, { ...options, exclude }) : undefined;
  if (target.root && hints) {
    const file = await openApiFileIn(target.root, hints);
    if (file) return file;
  }
  const baseUrl = liveBaseUrlOf(target);
  if (!baseUrl || options.live === false) return undefined;
  return servedOpenApi(baseUrl, { ...options, hints: hints?.urls });
}

/** The best document file among a tree's candidates, or undefined when none parses as one. */
export async function openApiFileIn(
  root: string,
  hints: Pick<OpenApiHints, "files">,
): Promise<DiscoveredOpenApi | undefined> {
  const parsed = hints.files.flatMap((candidate, order) => {
    const text = readText(path.join(root, candidate.relative));
    if (text === undefined) return [];
    const value = parseQuietly(text);
    if (openApiVersion(value) === undefined) return [];
    const paths = Object.keys(((value as Record<string, unknown>).paths as object | undefined) ?? {}).length;
    return [{ candidate, text, paths, order }];
  });
  parsed.sort(
    (left, right) =>
      Number(right.candidate.referencedFrom !== undefined) -
        Number(left.candidate.referencedFrom !== undefined) ||
      right.paths - left.paths ||
      depth(left.candidate.relative) - depth(right.candidate.relative) ||
      left.order - right.order,
  );
  for (const { candidate, text } of parsed) {
    try {
      const file = path.join(root, candidate.relative);
      const loaded = await openApiFromText(text, { kind: "file", file, relative: candidate.relative });
      const others = parsed.filter((other) => other.candidate !== candidate).map((other) => other.candidate);
      return {
        loaded,
        location: candidate.relative,
        found: [
          candidate.referencedFrom
            ? `file ${candidate.relative}, loaded by ${candidate.referencedFrom}`
            : `file ${candidate.relative} in the source tree`,
          ...(others.length > 0 ? [`(also found: ${others.map((other) => other.relative).join(", ")})`] : []),
        ].join(" "),
      };
    } catch {
      // A candidate whose $refs do not resolve is not usable; try the next.
    }
  }
  return undefined;
}

/**
 * GETs the usual document URLs (paths the code names first) on a live target and answers the first that
 * parses as a document. Redirects are not followed: a document is served where it is asked for.
 */
export async function servedOpenApi(
  baseUrl: string,
  options: Omit<DiscoverOpenApiOptions, "exclude" | "maxFiles" | "live"> & {
    hints?: OpenApiHints["urls"];
  } = {},
): Promise<DiscoveredOpenApi | undefined> {
  const fetcher = options.fetch ?? fetch;
  const base = baseUrl.replace(/\/+$/, "");
  const tried = new Set<string>();
  const candidates = [
    ...(options.hints ?? []).map((hint) => ({ path: hint.path, from: hint.from })),
    ...USUAL_OPENAPI_PATHS.map((usual) => ({ path: usual, from: undefined })),
  ];
  for (const candidate of candidates) {
    if (tried.has(candidate.path) || options.signal?.aborted) continue;
    tried.add(candidate.path);
    const url = `${base}${candidate.path}`;
    const text = await getText(fetcher, url, options);
    if (text === undefined || !looksLikeOpenApi(text)) continue;
    try {
      const loaded = await openApiFromText(text, { kind: "url", url });
      return {
        loaded,
        location: candidate.path,
        found: candidate.from
          ? `served at ${candidate.path} (configured in ${candidate.from})`
          : `served at ${candidate.path}`,
      };
    } catch {
      // Parsed as a document but its $refs do not resolve: keep looking.
    }
  }
  return undefined;
}

async function getText(
  fetcher: typeof fetch,
  url: string,
  options: { timeoutMs?: number; headers?: Record<string, string>; signal?: AbortSignal },
): Promise<string | undefined> {
  try {
    const response = await fetcher(url, {
      method: "GET",
      redirect: "manual",
      headers: { accept: "application/json, application/yaml, text/yaml, */*;q=0.5", ...options.headers },
      signal: timeoutSignal(options.timeoutMs ?? 5_000, options.signal),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      return undefined;
    }
    return await response.text();
  } catch {
    return undefined;
  }
}

function liveBaseUrlOf(target: LoadedTarget): string | undefined {
  const environment = target.profile.environment;
  return environment.mode === "none" ? undefined : environment.base_url;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function parseQuietly(text: string): unknown {
  try {
    return parseYaml(text, { maxAliasCount: 10_000 });
  } catch {
    return undefined;
  }
}

function depth(relative: string): number {
  return relative.split("/").length;
}

export const DISCOVERED_NOTE_PREFIX = "the profile names no OpenAPI document (api.openapi); using the ";

/** The map's note for a document the profile did not name. */
export function discoveredNote(discovered: DiscoveredOpenApi): string {
  return `${DISCOVERED_NOTE_PREFIX}${discovered.found}`;
}
