import { z } from "zod";
import { QaasError } from "../../errors.ts";
import type { GuardedAction } from "../../guardrails/actions.ts";
import type { Page } from "../../map/system-map.ts";
import { readFrontend } from "../../probes/frontend/read-frontend.ts";
import { forbiddenRequests } from "../../probes/http/profile-endpoints.ts";
import { probeTargetOf } from "../../probes/http/run-http.ts";
import {
  ANONYMOUS,
  ANSWERS_PER_PAGE,
  type CrawledPage,
  type CrawlResult,
  crawlAsRoles,
} from "../../probes/pages/crawl-pages.ts";
import { candidatesFromPages } from "../../probes/pages/page-candidates.ts";
import type { PageFetcher } from "../../probes/pages/page-fetcher.ts";
import { joinEntry } from "../../probes/pages/urls.ts";
import { webFetcher, webRoles } from "../../probes/pages/web-session.ts";
import { recordTraffic } from "../../probes/traffic/record-traffic.ts";
import { candidatesFromTraffic } from "../../probes/traffic/traffic-candidates.ts";
import type { ToolContext } from "../context.ts";
import { err, ok, type ToolResult } from "../result.ts";
import { defineTool, type ToolDefinition } from "../tool.ts";
import { type MapPart, mapDraft } from "./map-draft.ts";

// MAPPER's readers of the web side of the target: the pages and forms each role is served (map_pages),
// the requests the frontend's code sends (map_frontend) and the requests pages make in a real browser
// (map_traffic). Each puts its operations into the draft's candidates and answers a summary.

/** The last crawl of this run, kept for map_frontend (scripts, inline code) and map_traffic (pages per role). */
export const WEB_CRAWL_KEY = "map:web:crawl";
const EXAMPLES = 5;

const RolesInput = z
  .array(z.string().min(1))
  .min(1)
  .optional()
  .describe(
    "Roles (or profile user names) to read as; `anonymous` is one. Default: anonymous and one user per role.",
  );

export const MapPagesInput = z.strictObject({
  entry: z.string().min(1).optional(),
  max_pages: z.number().int().positive().max(500).optional().describe("Pages per role (default 50)"),
  max_seconds: z.number().positive().max(900).optional().describe("The whole crawl (default 120)"),
  roles: RolesInput,
});

export const MapFrontendInput = z.strictObject({
  max_scripts: z.number().int().positive().max(200).optional(),
  max_seconds: z.number().positive().max(600).optional().describe("Reading the code (default 60)"),
});

export const MapTrafficInput = z.strictObject({
  max_pages: z.number().int().positive().max(200).optional().describe("Pages per role (default 20)"),
  settle_ms: z.number().int().positive().max(15_000).optional(),
  max_seconds: z.number().positive().max(900).optional().describe("The whole recording (default 120)"),
  roles: RolesInput,
});

/** Crawls as each role; pages into the draft map, forms and links into its candidates (`pages`). */
export async function runMapPages(
  input: z.infer<typeof MapPagesInput>,
  context: ToolContext,
): Promise<ToolResult> {
  const target = probeTargetOf(context);
  // A profile without a ui section still gets its root crawled: server-rendered forms are what many apps
  // serve, and users rarely think to declare them; an API-only root answers no page and costs one request.
  const entry = input.entry ?? context.target?.profile.ui?.entry ?? "/";
  if (typeof target === "string") return skipped(context, "pages", notLive("pages not crawled"));
  try {
    const { roles, users } = webRoles(context, target, input.roles);
    const { fetcher } = webFetcher(
      context,
      target,
      (input.max_pages ?? 50) * ANSWERS_PER_PAGE * roles.length + 20,
    );
    const crawl = await crawlAsRoles(target.baseUrl, entry, roles, {
      maxPagesPerRole: input.max_pages,
      maxTotalMs: (input.max_seconds ?? 120) * 1000,
      fetchPage: fetcher,
      signal: context.signal,
    });
    context.shared.set(WEB_CRAWL_KEY, crawl);
    const draft = mapDraft(context);
    draft.pages = crawl.pages.map(mapPage);
    const candidates = candidatesFromPages(crawl.visits);
    draft.candidates.set("pages", candidates);
    const notes = crawl.roles.flatMap((role) => {
      if (role.error)
        return [`pages: role ${role.role} (user ${users[role.role]}) could not crawl: ${role.error}`];
      if (role.pages === 0) return [`pages: role ${role.role} reached no page from ${entry}`];
      return role.stopped && role.stopped !== "max_pages"
        ? [`pages: role ${role.role} stopped early (${role.stopped})`]
        : [];
    });
    setNotes(context, "pages", notes);
    const forms = candidates.filter((candidate) => candidate.provenance === "form");
    return ok({
      pages: crawl.pages.length,
      roles: Object.fromEntries(
        crawl.roles.map((role) => [
          role.role,
          { user: users[role.role], pages: role.pages, stopped: role.stopped, error: role.error },
        ]),
      ),
      only_signed_in: crawl.pages.filter((page) => !(page.roles ?? []).includes("anonymous")).length,
      by_status: countBy(crawl.pages.map((page) => String(page.status ?? "unreachable"))),
      operations: { forms: forms.length, links: candidates.length - forms.length },
      forms_with_csrf: forms.filter((candidate) => candidate.form?.csrf_field).length,
      scripts: new Set(crawl.pages.flatMap((page) => page.scripts ?? [])).size,
      examples: forms
        .slice(0, EXAMPLES)
        .map(
          (candidate) =>
            `${candidate.method} ${candidate.path} (form on ${candidate.form?.page}; ${candidate.roles?.join(", ")})`,
        ),
      notes,
    });
  } catch (error) {
    return failed(context, "pages", `pages from ${entry} not crawled`, error);
  }
}

/** Reads the scripts the crawled pages load (source maps when served); their API calls into `frontend`. */
export async function runMapFrontend(
  input: z.infer<typeof MapFrontendInput>,
  context: ToolContext,
): Promise<ToolResult> {
  const target = probeTargetOf(context);
  if (typeof target === "string") return skipped(context, "frontend", notLive("frontend scripts not read"));
  try {
    const { fetcher } = webFetcher(context, target, (input.max_scripts ?? 40) * 2 + 5);
    const pages = await pagesToRead(context, target.baseUrl, fetcher);
    if (pages.length === 0)
      return skipped(context, "frontend", "no page to read scripts from (run map_pages first)");
    const reading = await readFrontend(target.baseUrl, pages, {
      fetchPage: fetcher,
      maxScripts: input.max_scripts,
      maxAnalysisMs: (input.max_seconds ?? 60) * 1000,
      signal: context.signal,
    });
    mapDraft(context).candidates.set("frontend", reading.candidates);
    const notes: string[] = [];
    if (reading.loaded.stopped)
      notes.push(`frontend: stopped reading scripts early (${reading.loaded.stopped})`);
    const failedScripts = reading.loaded.scripts.filter(
      (script) => script.error || (script.status ?? 0) >= 400,
    );
    if (failedScripts.length > 0)
      notes.push(`frontend: ${failedScripts.length} script(s) not read, e.g. ${failedScripts[0]!.path}`);
    setNotes(context, "frontend", notes);
    return ok({
      scripts: reading.loaded.scripts.length,
      inline_scripts: reading.loaded.inline,
      source_maps: reading.loaded.scripts
        .filter((script) => script.map)
        .map((script) => `${script.map!.path}: ${script.map!.used} of ${script.map!.sources} files read`),
      calls: reading.calls.length,
      by_style: countBy(reading.calls.map((call) => call.style)),
      operations: reading.candidates.length,
      seconds: reading.analysisSeconds,
      examples: reading.calls.slice(0, EXAMPLES).map((call) => `${call.method} ${call.path} (${call.style})`),
      notes,
    });
  } catch (error) {
    return failed(context, "frontend", "frontend scripts not read", error);
  }
}

/** Opens the crawled pages as each role in Chromium; the requests they make into `traffic`. */
export async function runMapTraffic(
  input: z.infer<typeof MapTrafficInput>,
  context: ToolContext,
): Promise<ToolResult> {
  const target = probeTargetOf(context);
  if (typeof target === "string") return skipped(context, "traffic", notLive("traffic not recorded"));
  const crawl = context.shared.get(WEB_CRAWL_KEY) as CrawlResult | undefined;
  const entry = context.target?.profile.ui?.entry ?? "/";
  const entryPath = new URL(joinEntry(target.baseUrl, entry)).pathname;
  try {
    const { roles, users } = webRoles(context, target, input.roles);
    const scripted = roles
      .map((role) => ({ ...role, paths: pagesServedTo(crawl, role.role, entryPath) }))
      .filter((role) => role.paths.length > 0);
    if (scripted.length === 0)
      return skipped(context, "traffic", "no crawled page loads a script: no page makes requests of its own");
    const result = await recordTraffic(target.baseUrl, scripted, {
      maxPagesPerRole: input.max_pages,
      settleMs: input.settle_ms,
      maxTotalMs: (input.max_seconds ?? 120) * 1000,
      allowWrites: target.writesAllowed,
      refuse: forbiddenRequests(target.profile),
      signal: context.signal,
    });
    const candidates = candidatesFromTraffic(result.requests);
    mapDraft(context).candidates.set("traffic", candidates);
    const notes = result.roles.flatMap((role) =>
      role.error ? [`traffic: role ${role.role} (user ${users[role.role]}) not recorded: ${role.error}`] : [],
    );
    const blocked = result.requests.filter((request) => !request.sent);
    if (blocked.length > 0)
      notes.push(
        `traffic: ${blocked.length} request(s) pages made were recorded but not sent (writes not allowed or excluded)`,
      );
    setNotes(context, "traffic", notes);
    return ok({
      roles: Object.fromEntries(
        result.roles.map((role) => [
          role.role,
          {
            pages: role.pages,
            requests: role.requests,
            stopped: role.stopped,
            error: role.error,
            failures: role.failures,
          },
        ]),
      ),
      requests: result.requests.length,
      operations: candidates.length,
      examples: candidates.slice(0, EXAMPLES).map((candidate) => `${candidate.method} ${candidate.path}`),
      notes,
    });
  } catch (error) {
    return failed(context, "traffic", "traffic not recorded", error);
  }
}

const mapPages = defineTool({
  name: "map_pages",
  server: "map",
  description:
    "Crawl the live target's HTML pages from its UI entry (`entry`, else profile ui.entry, else the site root) as anonymous and as one signed-in user per profile role, same origin only, never following sign-out or delete links and never submitting forms. Every form (fields with types, constraints, CSRF field) and link (query parameters) becomes an operation offered to the roles that saw it. Answers counts per role and examples.",
  input: MapPagesInput,
  actions: (input, context) => entryActions(context, input.entry),
  run: runMapPages,
});

const mapFrontend = defineTool({
  name: "map_frontend",
  server: "map",
  description:
    "Read the JavaScript the crawled pages load (same origin; a served source map's original files instead of the bundle) and extract the API calls its code makes: fetch, axios, Angular HttpClient, XMLHttpRequest, jQuery, with URL templates, methods, query parameters and body fields. Run map_pages first. Answers counts and examples.",
  input: MapFrontendInput,
  actions: (_input, context) => entryActions(context),
  run: runMapFrontend,
});

const mapTraffic = defineTool({
  name: "map_traffic",
  server: "map",
  description:
    "Open the crawled pages as each role in headless Chromium, let them settle, and record the same-origin XHR/fetch requests they make on their own (nothing is clicked). Writes a page makes are recorded but only sent when the target allows writes. Run map_pages first. Answers requests and operations per role.",
  input: MapTrafficInput,
  actions: (_input, context) => entryActions(context),
  run: runMapTraffic,
});

export const mapWebTools: ToolDefinition[] = [mapPages, mapFrontend, mapTraffic];

/** The pages (and their scripts) to read: the last crawl's, else the draft's, else the entry page alone. */
async function pagesToRead(
  context: ToolContext,
  baseUrl: string,
  fetcher: PageFetcher,
): Promise<CrawledPage[]> {
  const crawl = context.shared.get(WEB_CRAWL_KEY) as CrawlResult | undefined;
  if (crawl) return crawl.pages;
  const draft = mapDraft(context);
  if (draft.pages.length > 0) return draft.pages;
  const entry = context.target?.profile.ui?.entry ?? "/";
  const single = await crawlAsRoles(baseUrl, entry, [ANONYMOUS], {
    maxPagesPerRole: 1,
    fetchPage: fetcher,
    signal: context.signal,
  });
  return single.pages;
}

/**
 * The pages worth loading in a browser as the role: HTML it was served that loads a script, since a page
 * without one makes no request of its own (JSON answers and plain server-rendered pages would each cost a
 * load and a settle for nothing). Without a crawl, the entry page.
 */
function pagesServedTo(crawl: CrawlResult | undefined, role: string, entry: string): string[] {
  if (!crawl) return [entry];
  return crawl.visits
    .filter(
      (visit) =>
        visit.roles?.includes(role) &&
        visit.status !== undefined &&
        visit.status < 300 &&
        visit.html &&
        ((visit.scripts?.length ?? 0) > 0 || (visit.inline_scripts?.length ?? 0) > 0),
    )
    .map((visit) => visit.path);
}

/** The page as the map keeps it: what only the frontend reader wants stays in the crawl. */
function mapPage(page: CrawledPage): Page {
  const { csrf: _csrf, inline_scripts: _inline, forms, ...rest } = page;
  return { ...rest, forms: forms.map(({ id: _id, ...form }) => form) };
}

function entryActions(context: ToolContext, entry?: string): GuardedAction[] {
  const target = probeTargetOf(context);
  if (typeof target === "string") return [];
  const path = entry ?? context.target?.profile.ui?.entry ?? "/";
  return [{ kind: "http_request", method: "GET", url: joinEntry(target.baseUrl, path) }];
}

function notLive(what: string): string {
  return `the target is not live (environment.mode none or no base_url): ${what}`;
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
