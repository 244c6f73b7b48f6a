import fs from "node:fs";
import path from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { parse as parseYaml } from "yaml";
import { QaasError } from "../../errors.ts";

export { operationsFromOpenApi } from "./operations-from-openapi.ts";

// Loads an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML) from the target's tree or from the live
// target, with every `$ref` resolved so probes read schemas directly.

export interface LoadedOpenApi {
  /** Where it came from: a path relative to the target root, or a URL. */
  source: string;
  /** The `openapi` field, e.g. `3.1.0`, or Swagger's `swagger` field, `2.0`. */
  version: string;
  title?: string;
  /** The dereferenced document; circular `$ref`s stay `$ref`s so it still serialises as JSON. */
  document: Record<string, unknown>;
}

export interface LoadOpenApiOptions {
  /** The target's source root, for file locations. */
  root?: string;
  /** The live target, for URL paths like `/openapi.json`. */
  baseUrl?: string;
  /** Headers for fetching a document from the live target. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export type OpenApiLocation = { kind: "file"; file: string; relative: string } | { kind: "url"; url: string };

/**
 * Where a profile's `api.openapi` points: an absolute URL; a path beginning with `/` on the live target
 * when there is one; otherwise a file relative to the target root.
 */
export function resolveOpenApiLocation(location: string, options: LoadOpenApiOptions): OpenApiLocation {
  if (/^https?:\/\//i.test(location)) return { kind: "url", url: location };
  const fileCandidate = options.root ? path.resolve(options.root, location.replace(/^\/+/, "")) : undefined;
  const preferUrl = location.startsWith("/") && options.baseUrl !== undefined;
  if (!preferUrl && fileCandidate && options.root) {
    const relativeToRoot = path.relative(options.root, fileCandidate);
    if (relativeToRoot.startsWith("..") || path.isAbsolute(relativeToRoot)) {
      throw new QaasError(
        "OPENAPI_OUTSIDE_ROOT",
        `OpenAPI location ${location} leaves the target root ${options.root}`,
      );
    }
    if (fs.existsSync(fileCandidate) || options.baseUrl === undefined) {
      return { kind: "file", file: fileCandidate, relative: relativeToRoot.split(path.sep).join("/") };
    }
  }
  if (options.baseUrl !== undefined) {
    return { kind: "url", url: `${options.baseUrl.replace(/\/+$/, "")}/${location.replace(/^\/+/, "")}` };
  }
  throw new QaasError(
    "OPENAPI_NOT_FOUND",
    `cannot locate OpenAPI document ${location}: no target root to read it from and no base URL to fetch it from`,
  );
}

export async function loadOpenApi(
  location: string,
  options: LoadOpenApiOptions = {},
): Promise<LoadedOpenApi> {
  const resolved = resolveOpenApiLocation(location, options);
  const text = resolved.kind === "file" ? readFile(resolved.file) : await fetchText(resolved.url, options);
  return openApiFromText(text, resolved);
}

/** Parses and dereferences a document already read from `where` (a file's relative `$ref`s resolve beside it). */
export async function openApiFromText(text: string, where: OpenApiLocation): Promise<LoadedOpenApi> {
  const source = where.kind === "file" ? where.relative : where.url;
  const parsed = parseDocument(text, source);
  const version = openApiVersion(parsed);
  if (version === undefined) {
    throw new QaasError(
      "OPENAPI_UNSUPPORTED",
      `${source} is not an OpenAPI 3.x or Swagger 2.0 document (openapi: ${JSON.stringify(parsed.openapi ?? parsed.swagger ?? null)})`,
    );
  }
  let document: Record<string, unknown>;
  try {
    const parserOptions = {
      dereference: { circular: "ignore" as const },
      // A fetched document's relative `$ref`s would resolve against our working folder: resolve none.
      resolve: where.kind === "url" ? { external: false } : { http: false as const },
    };
    document = (where.kind === "file"
      ? await SwaggerParser.dereference(where.file, parsed as never, parserOptions)
      : await SwaggerParser.dereference(parsed as never, parserOptions)) as unknown as Record<
      string,
      unknown
    >;
  } catch (error) {
    throw new QaasError(
      "OPENAPI_INVALID",
      `cannot resolve $refs of ${source}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const info = document.info as { title?: unknown } | undefined;
  return {
    source,
    version,
    title: typeof info?.title === "string" ? info.title : undefined,
    document,
  };
}

/**
 * `3.x.y` for OpenAPI 3, `2.0` for Swagger 2.0, else undefined. A document must also list its paths (or,
 * in 3.1, webhooks or components), so a JSON file that merely has an `openapi` key is not taken for one.
 */
export function openApiVersion(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const document = value as Record<string, unknown>;
  const isObject = (field: unknown) => typeof field === "object" && field !== null && !Array.isArray(field);
  if (typeof document.openapi === "string" && document.openapi.startsWith("3.")) {
    const listsSomething =
      isObject(document.paths) || isObject(document.webhooks) || isObject(document.components);
    return listsSomething ? document.openapi : undefined;
  }
  if (typeof document.swagger === "string" && document.swagger.startsWith("2.")) {
    return isObject(document.paths) ? document.swagger : undefined;
  }
  return undefined;
}

/** Whether a text (JSON or YAML) is an OpenAPI 3.x or Swagger 2.0 document, without dereferencing it. */
export function looksLikeOpenApi(text: string): boolean {
  try {
    return openApiVersion(parseYaml(text, { maxAliasCount: 10_000 })) !== undefined;
  } catch {
    return false;
  }
}

function readFile(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new QaasError(
      "OPENAPI_NOT_FOUND",
      `cannot read OpenAPI document ${file}: ${(error as Error).message}`,
    );
  }
}

async function fetchText(url: string, options: LoadOpenApiOptions): Promise<string> {
  const fetcher = options.fetch ?? fetch;
  let response: Response;
  try {
    response = await fetcher(url, {
      headers: { accept: "application/json, application/yaml, text/yaml, */*", ...options.headers },
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
  } catch (error) {
    throw new QaasError(
      "OPENAPI_UNREACHABLE",
      `cannot fetch OpenAPI document ${url}: ${(error as Error).message}`,
    );
  }
  if (!response.ok) {
    throw new QaasError(
      "OPENAPI_UNREACHABLE",
      `GET ${url} answered ${response.status}; expected the OpenAPI document`,
    );
  }
  return response.text();
}

function parseDocument(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    // YAML is a superset of JSON, so one parser reads both.
    value = parseYaml(text, { maxAliasCount: 10_000 });
  } catch (error) {
    throw new QaasError("OPENAPI_INVALID", `${source} is neither JSON nor YAML: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new QaasError("OPENAPI_INVALID", `${source} does not hold an OpenAPI object`);
  }
  return value as Record<string, unknown>;
}
