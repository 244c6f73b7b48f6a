import type { OperationCandidate } from "../../map/inventory.ts";
import type { CrawledPage } from "../pages/crawl-pages.ts";
import { type ApiCall, findApiCalls } from "./api-calls.ts";
import { candidatesFromApiCalls } from "./frontend-candidates.ts";
import { type LoadedScripts, type LoadScriptsOptions, loadScripts } from "./load-scripts.ts";
import { scriptProgram } from "./script-program.ts";

// The frontend-bundle reader end to end: the scripts the crawled pages load (or their source maps' files),
// the requests their code sends, and those requests as inventory candidates (provenance `frontend`).

export interface FrontendReading {
  calls: ApiCall[];
  candidates: OperationCandidate[];
  loaded: LoadedScripts;
  /** Seconds spent parsing and reading the code (fetching aside). */
  analysisSeconds: number;
}

export async function readFrontend(
  baseUrl: string,
  pages: readonly Pick<CrawledPage, "path" | "scripts" | "inline_scripts" | "forms" | "roles">[],
  options: LoadScriptsOptions & { maxAnalysisMs?: number; maxCalls?: number } = {},
): Promise<FrontendReading> {
  const loaded = await loadScripts(baseUrl, pages, options);
  const started = performance.now();
  const program = scriptProgram(loaded.sources);
  const calls = findApiCalls(program, {
    baseUrl,
    deadline: Date.now() + (options.maxAnalysisMs ?? 60_000),
    maxCalls: options.maxCalls,
  });
  return {
    calls,
    candidates: candidatesFromApiCalls(calls, pages),
    loaded,
    analysisSeconds: Math.round((performance.now() - started) / 10) / 100,
  };
}
