import fs from "node:fs";
import path from "node:path";
import { isVendoredFolder, readTreeFile, walkFiles } from "../source/walk-files.ts";

// Where a repository keeps an OpenAPI or Swagger document nobody told us about: files named like one
// (`openapi.yaml`, `swagger.json`, `api-docs.json`), files the code loads and hands to an OpenAPI library
// (connexion's `add_api('spec.yml')`, `yaml.load('./api.yaml')` beside swagger-ui), and URL paths the code
// serves one at (NestJS `SwaggerModule.setup`, FastAPI `openapi_url`, @fastify/swagger's `routePrefix`).
// Offline: it reads the tree only; whether a candidate really is a document is decided by parsing it.

/** A file named like an OpenAPI/Swagger document. */
const DOCUMENT_NAME = /^(?:openapi|swagger|api-docs)[\w.-]*\.(?:json|ya?ml)$/i;
const CODE_FILE = /\.(?:py|[cm]?[jt]sx?)$/;
/** Code that mentions one of these may load a document from a file it names. */
const MENTIONS_OPENAPI = /openapi|swagger|add_api|api_spec|apispec/i;
const DOCUMENT_LITERAL = /["'`]([^"'`\s]+\.(?:ya?ml|json))["'`]/g;

/**
 * Folders that hold someone else's code or examples, not the application's document. Test specs in
 * `spec/` are not skipped here: that is also where many projects keep their API spec.
 */
const SKIPPED_FOLDERS = new Set([
  "test",
  "tests",
  "__tests__",
  "__mocks__",
  "e2e",
  "cypress",
  "playwright",
  "fixtures",
  "examples",
  "example",
  "samples",
]);

const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
const MAX_CODE_BYTES = 512 * 1024;

export interface OpenApiFileCandidate {
  /** Path relative to the root, `/` separators. */
  relative: string;
  /** `file:line` of the code that loads it, when found by reference rather than by name. */
  referencedFrom?: string;
}

export interface OpenApiHints {
  files: OpenApiFileCandidate[];
  /** URL paths the code says it serves a document at, each with the `file:line` that says so. */
  urls: Array<{ path: string; from: string }>;
}

export interface FindOpenApiOptions {
  /** Absolute paths never to read (the golden ledger). */
  exclude?: string[];
  maxFiles?: number;
}

export function findOpenApiHints(root: string, options: FindOpenApiOptions = {}): OpenApiHints {
  const excluded = new Set((options.exclude ?? []).map((file) => path.resolve(file)));
  const allowed = (relative: string) => !excluded.has(path.join(root, relative));
  const documents = walkFiles(root, {
    skipFolder: isSkippedFolder,
    keep: (relative, name) => DOCUMENT_NAME.test(name) && allowed(relative),
    maxFiles: options.maxFiles ?? 200,
    maxFileBytes: MAX_DOCUMENT_BYTES,
  }).files;
  const code = walkFiles(root, {
    skipFolder: isSkippedFolder,
    keep: (relative, name) => CODE_FILE.test(name) && !name.endsWith(".d.ts") && allowed(relative),
    maxFiles: options.maxFiles ?? 5000,
    maxFileBytes: MAX_CODE_BYTES,
  }).files;

  const referenced = new Map<string, string>();
  const urls: OpenApiHints["urls"] = [];
  for (const file of code) {
    const text = readTreeFile(root, file);
    if (text === undefined || !MENTIONS_OPENAPI.test(text)) continue;
    for (const reference of documentReferences(root, file, text)) {
      if (allowed(reference.relative) && !referenced.has(reference.relative))
        referenced.set(reference.relative, reference.from);
    }
    urls.push(...servedPaths(file, text));
  }
  const files: OpenApiFileCandidate[] = [
    ...[...referenced].map(([relative, from]) => ({ relative, referencedFrom: from })),
    ...documents.filter((relative) => !referenced.has(relative)).map((relative) => ({ relative })),
  ];
  return { files, urls: dedupeBy(urls, (url) => url.path) };
}

function isSkippedFolder(name: string): boolean {
  return isVendoredFolder(name) || SKIPPED_FOLDERS.has(name.toLowerCase());
}

/**
 * Document files a code file names, resolved the ways loaders resolve them: beside the code, under
 * connexion's `specification_dir`, or from the root (where the app usually starts).
 */
function documentReferences(
  root: string,
  file: string,
  text: string,
): Array<{ relative: string; from: string }> {
  const folder = path.posix.dirname(file);
  const specificationDirs = [...text.matchAll(/specification_dir\s*=\s*["']([^"']+)["']/g)].map(
    (match) => match[1] ?? "",
  );
  const found: Array<{ relative: string; from: string }> = [];
  for (const match of text.matchAll(DOCUMENT_LITERAL)) {
    const literal = match[1] ?? "";
    if (/^[a-z]+:\/\//i.test(literal) || literal.includes("${")) continue;
    const bases = [...specificationDirs.flatMap((dir) => [path.posix.join(folder, dir), dir]), folder, "."];
    for (const base of bases) {
      const relative = path.posix.normalize(path.posix.join(base, literal.replace(/^\/+/, "")));
      if (relative.startsWith("..") || !isFile(path.join(root, relative))) continue;
      found.push({ relative, from: `${file}:${lineAt(text, match.index ?? 0)}` });
      break;
    }
  }
  return found;
}

/** URL paths where a framework serves the document the code configures. */
function servedPaths(file: string, text: string): OpenApiHints["urls"] {
  const urls: OpenApiHints["urls"] = [];
  const add = (raw: string, index: number, suffix: string) => {
    const base = `/${raw.replace(/^\/+|\/+$/g, "")}`;
    urls.push({ path: `${base === "/" ? "" : base}${suffix}`, from: `${file}:${lineAt(text, index)}` });
  };
  // NestJS serves the document beside its UI at `<path>-json`.
  for (const match of text.matchAll(/SwaggerModule\.setup\(\s*["'`]([^"'`]*)["'`]/g))
    add(match[1] ?? "", match.index ?? 0, "-json");
  // FastAPI and Starlette apps name the document's own path.
  for (const match of text.matchAll(/\bopenapi_url\s*=\s*["']([^"']+)["']/g))
    add(match[1] ?? "", match.index ?? 0, "");
  // @fastify/swagger-ui serves it at `<routePrefix>/json`.
  if (/@fastify\/swagger/.test(text)) {
    for (const match of text.matchAll(/\broutePrefix\s*:\s*["'`]([^"'`]+)["'`]/g))
      add(match[1] ?? "", match.index ?? 0, "/json");
  }
  return urls;
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let position = 0; position < index; position += 1) if (text.charCodeAt(position) === 10) line += 1;
  return line;
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function dedupeBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const value = key(item);
    if (seen.has(value)) return false;
    seen.add(value);
    return true;
  });
}
