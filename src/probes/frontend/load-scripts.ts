import type { CrawledPage } from "../pages/crawl-pages.ts";
import { CrawlBudgetSpent, fetchPage, type PageFetcher } from "../pages/page-fetcher.ts";
import type { ScriptSource } from "./script-program.ts";

// The code a frontend ships: the same-origin scripts its pages load and their inline scripts. When a
// script names a source map (`//# sourceMappingURL=`, or a SourceMap header) that is served, the map's
// `sourcesContent` replaces the bundle: the authors' files, names and constants intact. Packages bundled
// in (node_modules) are left out: their requests are the library's, not the application's.

export interface LoadScriptsOptions {
  fetchPage?: PageFetcher;
  /** Headers for every request (a signed-in role's, when scripts are only served to it). */
  headers?: Record<string, string>;
  /** Scripts fetched at most (default 40). */
  maxScripts?: number;
  /** Characters read at most, all scripts together (default 12 MB). */
  maxChars?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface LoadedScript {
  path: string;
  status?: number;
  chars: number;
  /** The source map, when one was named: where, and how many of its files were the application's. */
  map?: { path: string; status?: number; sources: number; used: number };
  error?: string;
}

export interface LoadedScripts {
  sources: ScriptSource[];
  scripts: LoadedScript[];
  /** Inline scripts read, across pages. */
  inline: number;
  stopped?: "budget" | "max_scripts" | "max_chars";
}

const LIBRARY_SOURCE =
  /(?:^|\/)node_modules\/|webpack\/(?:runtime|bootstrap)|\(webpack\)|^webpack\/|vite\/(?:preload|modulepreload)|\0/;
const CODE_SOURCE = /\.(?:[cm]?[jt]sx?|vue|svelte)$/i;

export async function loadScripts(
  baseUrl: string,
  pages: readonly Pick<CrawledPage, "path" | "scripts" | "inline_scripts">[],
  options: LoadScriptsOptions = {},
): Promise<LoadedScripts> {
  const fetcher = options.fetchPage ?? fetchPage;
  const maxScripts = options.maxScripts ?? 40;
  let budget = options.maxChars ?? 12 * 1024 * 1024;
  const result: LoadedScripts = { sources: [], scripts: [], inline: 0 };
  const origin = new URL(baseUrl).origin;
  const pageOf = new Map<string, string>();
  for (const page of pages) {
    for (const script of page.scripts ?? []) if (!pageOf.has(script)) pageOf.set(script, page.path);
    const seenInline = new Set(result.sources.map((source) => source.text));
    (page.inline_scripts ?? []).forEach((text, index) => {
      if (seenInline.has(text)) return;
      result.sources.push({ name: `${page.path.split("?")[0]}#inline-${index + 1}`, text, page: page.path });
      result.inline += 1;
    });
  }
  const get = async (
    url: URL,
  ): Promise<{ status: number; body: string; headers: Record<string, string> } | undefined> => {
    const response = await fetcher({
      url: url.href,
      headers: { accept: "*/*", ...options.headers },
      timeoutMs: options.timeoutMs ?? 15_000,
      signal: options.signal,
    });
    return response;
  };

  for (const [path, page] of pageOf) {
    if (result.scripts.length >= maxScripts) {
      result.stopped = "max_scripts";
      break;
    }
    if (budget <= 0) {
      result.stopped = "max_chars";
      break;
    }
    if (options.signal?.aborted) break;
    const loaded: LoadedScript = { path, chars: 0 };
    result.scripts.push(loaded);
    const url = new URL(path, origin);
    try {
      const response = await get(url);
      if (!response) {
        loaded.error = "refused by the profile";
        continue;
      }
      loaded.status = response.status;
      if (response.status >= 300) continue;
      const text = response.body.slice(0, budget);
      loaded.chars = text.length;
      budget -= text.length;
      const mapReference =
        response.headers.sourcemap ?? response.headers["x-sourcemap"] ?? sourceMappingUrl(text);
      const fromMap = mapReference ? await readMap(mapReference, url, loaded) : [];
      if (fromMap.length > 0) {
        for (const source of fromMap) {
          const content = source.text.slice(0, Math.max(0, budget));
          budget -= content.length;
          result.sources.push({ name: `map:${source.name}`, text: content, page });
        }
      } else {
        result.sources.push({ name: path.split("?")[0] ?? path, text, page });
      }
    } catch (error) {
      if (error instanceof CrawlBudgetSpent) {
        result.stopped = "budget";
        break;
      }
      loaded.error = error instanceof Error ? error.message : String(error);
    }
  }
  return result;

  async function readMap(
    reference: string,
    scriptUrl: URL,
    loaded: LoadedScript,
  ): Promise<Array<{ name: string; text: string }>> {
    let json: string | undefined;
    if (reference.startsWith("data:")) {
      const comma = reference.indexOf(",");
      const payload = reference.slice(comma + 1);
      json = /;base64/i.test(reference.slice(0, comma))
        ? Buffer.from(payload, "base64").toString("utf8")
        : decodeURIComponent(payload);
      loaded.map = { path: "(inline)", sources: 0, used: 0 };
    } else {
      let mapUrl: URL;
      try {
        mapUrl = new URL(reference, scriptUrl);
      } catch {
        return [];
      }
      if (mapUrl.origin !== origin) return [];
      loaded.map = { path: `${mapUrl.pathname}${mapUrl.search}`, sources: 0, used: 0 };
      const response = await get(mapUrl);
      if (!response) return [];
      loaded.map.status = response.status;
      if (response.status >= 300) return [];
      json = response.body;
    }
    return applicationSources(json, loaded);
  }
}

/** The last `//# sourceMappingURL=` of a script (the bundler writes it at the end). */
export function sourceMappingUrl(text: string): string | undefined {
  const tail = text.slice(-4096);
  const matches = [...tail.matchAll(/[#@]\s*sourceMappingURL\s*=\s*(\S+)/g)];
  return matches.at(-1)?.[1];
}

function applicationSources(json: string, loaded: LoadedScript): Array<{ name: string; text: string }> {
  let map: { sources?: unknown; sourcesContent?: unknown; sourceRoot?: unknown; sections?: unknown };
  try {
    map = JSON.parse(json);
  } catch {
    return [];
  }
  const sources = Array.isArray(map.sources) ? map.sources : [];
  const contents = Array.isArray(map.sourcesContent) ? map.sourcesContent : [];
  const root = typeof map.sourceRoot === "string" ? map.sourceRoot.replace(/\/*$/, "/") : "";
  if (loaded.map) loaded.map.sources = sources.length;
  const result: Array<{ name: string; text: string }> = [];
  sources.forEach((source, index) => {
    const content = contents[index];
    if (typeof source !== "string" || typeof content !== "string") return;
    const name = `${root && !/^[a-z]+:/i.test(source) ? root : ""}${source}`;
    if (LIBRARY_SOURCE.test(name) || !CODE_SOURCE.test(name.split("?")[0] ?? name)) return;
    // A single-file component's code is its <script> blocks; the template is not code.
    const component = /\.(?:vue|svelte)$/i.test(name);
    const text = component
      ? [...content.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].map((match) => match[1]).join("\n")
      : content;
    if (text.trim()) result.push({ name: component ? `${name}.ts` : name, text });
  });
  if (loaded.map) loaded.map.used = result.length;
  return result;
}
