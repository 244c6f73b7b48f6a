import { randomBytes } from "node:crypto";
import { setTimeout as pause } from "node:timers/promises";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import type { BrowsingRole } from "../browser/browser-session.ts";
import { browserSessionFor, DESKTOP } from "../browser/browser-session.ts";
import { buildFinding } from "../evidence/finding.ts";
import { workInOrder } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { type InputPoint, pointPlace, pointTag } from "./input-points.ts";
import { type Look, look, tagOf } from "./xss-rendered-look.ts";
import { markerStep, recordPathOf } from "./xss-repro.ts";

// Stored XSS that only a browser sees: the page's HTML is static, its own script fetches the records (REST
// JSON, GraphQL) and inserts them with innerHTML, insertAdjacentHTML, jQuery's append, document.write… The
// server never sends the marker inside HTML, so the server-HTML check cannot see it. The proof is the DOM:
// the planted `<qaas-xss-…>` became an element (it was parsed as markup); a value set as text stays text
// and makes no element. A second load in a fresh browser context must show the element again, and the
// page's network log says which of its requests delivered the marker.

/** A marker saved through a create operation, as the server-HTML check planted it. */
export interface PlantedMarker {
  marker: string;
  point: InputPoint;
  prepared: PreparedRequest;
  exchange: HttpExchange;
  user: string | undefined;
  /** The id the save answered with. */
  resourceId?: string;
}

/** A page (and who read it) whose server answer was HTML with a script of its own. */
export interface ScriptedPage {
  path: string;
  viewer: string | undefined;
  /** A page of a record a marker was just saved in. */
  created: boolean;
}

/** Page loads spent looking (confirmation loads come on top, one per page that showed a marker). */
const MAX_LOADS = 15;
const MAX_SECONDS = 60;
/**
 * Pages looked at at once, each in a tab closed as its look ends: a load is mostly waiting on the target,
 * and a few renderers fit a small machine where many would not.
 */
const TABS = 3;
const CONTEXT_ATTEMPTS = 2;
const CONTEXT_RETRY_MS = 1_000;

interface RenderedHit {
  entry: PlantedMarker;
  page: ScriptedPage;
  counts: [number, number];
  carrier: HttpExchange | undefined;
}

export async function renderedStoredXss(
  run: ProbeRun,
  planted: readonly PlantedMarker[],
  pages: readonly ScriptedPage[],
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const order = ordered(pages);
  const stats: Record<string, unknown> = {
    browser_markers: planted.length,
    browser_pages: order.length,
    browser_pages_loaded: 0,
    browser_confirm_loads: 0,
    browser_confirmed: 0,
    browser_pages_unsettled: 0,
    browser_contexts_failed: 0,
  };
  // No browser is launched unless a marker is still unaccounted for and a page could have put it there.
  if (planted.length === 0)
    return {
      candidates: [],
      stats: { ...stats, browser_skipped: "every planted marker was found in server HTML" },
    };
  if (order.length === 0)
    return { candidates: [], stats: { ...stats, browser_skipped: "no HTML page with a script of its own" } };
  const session = browserSessionFor(run.context);
  try {
    await session.browser();
  } catch (error) {
    const reason = `no browser: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`;
    run.notes.push(
      `probe_xss: markers saved but absent from server HTML were not looked for in a browser (${reason})`,
    );
    return { candidates: [], stats: { ...stats, browser_skipped: reason } };
  }
  // Browser contexts of this call's own, closed when it is done: other tools (and another call) keep theirs.
  const call = randomBytes(4).toString("hex");
  const lookSession = `probe_xss-${call}`;
  const confirmSession = `probe_xss-${call}-confirm`;
  const origin = new URL(run.target.baseUrl).origin;
  const deadline = Date.now() + MAX_SECONDS * 1000;
  const hits: RenderedHit[] = [];
  const markers = planted.map((entry) => entry.marker);
  let confirms = 0;
  let loads = 0;
  let unsettled = 0;
  const failures: string[] = [];
  // A context signs its reader in before it opens: under load that may time out once, and a page read by
  // nobody must not pass for a page that showed nothing.
  const contextOf = async (viewer: string | undefined, name: string) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await session.context(roleOf(run, viewer), origin, DESKTOP, name);
      } catch (error) {
        if (attempt < CONTEXT_ATTEMPTS && !run.context.signal.aborted) {
          await pause(CONTEXT_RETRY_MS);
          continue;
        }
        failures.push(
          `${viewer ?? "anonymous"}: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`,
        );
        return undefined;
      }
    }
  };
  try {
    loads = await workInOrder(order, {
      width: TABS,
      cap: MAX_LOADS,
      mayStart: () => Date.now() <= deadline && !run.context.signal.aborted,
      // Every planted marker is looked for on every page: what a look sees must not depend on what the
      // pages before it, still loading, will have found.
      work: async (page, stop) => {
        const context = await contextOf(page.viewer, lookSession);
        if (!context || stop.aborted) return undefined;
        return look(session, context, joinUrl(run.target.baseUrl, page.path), markers, page.viewer, stop);
      },
      decide: async (page, first) => {
        if (first.unsettled) unsettled += 1;
        const open = planted.filter((entry) => !hits.some((hit) => hit.entry.marker === entry.marker));
        const shown = open.filter(
          (entry) => first.shown.has(entry.marker) && !first.served.has(entry.marker),
        );
        if (shown.length === 0) return false;
        // The second signal: a fresh context (no cache, no storage) loads the page again.
        const fresh = await contextOf(page.viewer, confirmSession);
        if (!fresh) return false;
        confirms += 1;
        const url = joinUrl(run.target.baseUrl, page.path);
        const again = await look(
          session,
          fresh,
          url,
          shown.map((entry) => entry.marker),
          page.viewer,
        );
        await session.closeSession(confirmSession);
        hits.push(...confirmedHits(page, url, shown, first, again));
        return hits.length === planted.length;
      },
    });
  } finally {
    await session.closeSession(lookSession);
    await session.closeSession(confirmSession);
  }
  stats.browser_pages_loaded = loads;
  stats.browser_confirm_loads = confirms;
  // Pages read while a call of their own was still unanswered: a marker it would have brought is not seen.
  stats.browser_pages_unsettled = unsettled;
  stats.browser_confirmed = hits.length;
  stats.browser_contexts_failed = failures.length;
  if (failures.length > 0)
    run.notes.push(
      `probe_xss: ${failures.length} page look(s) had no browser context, so their pages went unread (${[...new Set(failures)].join("; ")})`,
    );
  return { candidates: hits.map((hit) => findingOf(run, hit)), stats };
}

/** The markers the first look showed that a second, in a fresh context, showed again and were not served. */
function confirmedHits(
  page: ScriptedPage,
  url: string,
  shown: readonly PlantedMarker[],
  first: Look,
  again: Look,
): RenderedHit[] {
  return shown
    .filter((entry) => again.shown.has(entry.marker) && !again.served.has(entry.marker))
    .map((entry) => {
      const carriers = [
        ...(first.carriers.get(entry.marker) ?? []),
        ...(again.carriers.get(entry.marker) ?? []),
      ];
      return {
        entry,
        page,
        counts: [first.shown.get(entry.marker) ?? 0, again.shown.get(entry.marker) ?? 0],
        carrier: carriers.find((exchange) => exchange.request.method !== "GET" || !isPage(exchange, url)),
      };
    });
}

/**
 * Pages of the records just saved first, each page and reader once, and every page by one reader before any
 * page by a second: under the load cap, a page no reader opened is a page never looked at.
 */
export function ordered(pages: readonly ScriptedPage[]): ScriptedPage[] {
  const seen = new Set<string>();
  const unique = pages.filter((page) => {
    const key = `${page.path}\u0000${page.viewer ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const turn = new Map<ScriptedPage, number>();
  const readers = new Map<string, number>();
  for (const page of unique) {
    const count = readers.get(page.path) ?? 0;
    turn.set(page, count);
    readers.set(page.path, count + 1);
  }
  return unique
    .map((page, index) => ({ page, index }))
    .sort(
      (a, b) =>
        Number(b.page.created) - Number(a.page.created) ||
        turn.get(a.page)! - turn.get(b.page)! ||
        a.index - b.index,
    )
    .map(({ page }) => page);
}

/** A profile user browses with the run's own session for them (the one the HTTP probes use). */
function roleOf(run: ProbeRun, viewer: string | undefined): BrowsingRole {
  return {
    role: viewer === undefined ? "anonymous" : `user:${viewer}`,
    headers: async () =>
      viewer === undefined
        ? {}
        : ((await run.sessions.prepare(run.client, viewer, { method: "GET", url: run.target.baseUrl }))
            .headers ?? {}),
    restarts: () => run.client.targetRestarts,
  };
}

function isPage(exchange: HttpExchange, url: string): boolean {
  return exchange.request.url.split("#")[0] === url.split("#")[0];
}

/** ` query Pastes` for a GraphQL request body (its operation name, else its first field); empty otherwise. */
function graphqlNameOf(body: string | undefined): string {
  if (!body) return "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "";
  }
  const request = (Array.isArray(parsed) ? parsed[0] : parsed) as {
    query?: unknown;
    operationName?: unknown;
  };
  if (typeof request?.query !== "string") return "";
  const head = /^\s*(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/.exec(request.query);
  const kind = head?.[1] ?? "query";
  const name =
    typeof request.operationName === "string" && request.operationName !== ""
      ? request.operationName
      : (head?.[2] ?? /\{\s*([_A-Za-z][_0-9A-Za-z]*)/.exec(request.query)?.[1] ?? "");
  return name ? ` ${kind} ${name}` : ` ${kind}`;
}

function findingOf(run: ProbeRun, hit: RenderedHit): EnvelopeDraft {
  const { entry, page, carrier } = hit;
  const source = operationKey(entry.point.operation);
  // GraphQL fields all share one `POST /graphql`: the field tells them apart in words and in the dedupe key.
  const where = pointPlace(entry.point);
  const tag = tagOf(entry.marker);
  const reader = page.viewer ?? "anonymous";
  const delivered = carrier
    ? `${carrier.request.method} ${new URL(carrier.request.url).pathname}${graphqlNameOf(carrier.request.body)}`
    : "a request of the page's script (its answer was not readable)";
  const injectedStep = markerStep("injected", entry.prepared, entry.user, entry.marker);
  const pagePath = recordPathOf(page.path, entry.resourceId, injectedStep);
  const related: Array<{ kind: "endpoint" | "page"; value: string }> = [{ kind: "page", value: page.path }];
  if (carrier) {
    const endpoint = `${carrier.request.method} ${new URL(carrier.request.url).pathname}`;
    if (endpoint !== operationKey(entry.point.operation)) related.push({ kind: "endpoint", value: endpoint });
  }
  return buildFinding(run, {
    domain: "security",
    defectClass: "xss",
    title: `Stored XSS: ${where} saved through ${source} is inserted as markup by the script of ${page.path}`,
    summary: `The marker ${entry.marker} saved through ${where} of ${source} is not in the server's HTML of ${page.path}, but the page's own script receives it from ${delivered} and inserts it as markup: in Chromium the page then holds a <${tag}> element, on two loads in fresh browser contexts.`,
    impact: "Script injected by one user runs in the browser of whoever views the page, with their session.",
    location: endpointLocation(entry.point.operation),
    related,
    severity: severityFor("xss", { stored: true }),
    confidence: carrier ? 0.95 : 0.9,
    discriminator: pointTag(entry.point),
    exchanges: [
      { label: "injected", exchange: entry.exchange },
      ...(carrier ? [{ label: "delivered", exchange: carrier }] : []),
    ],
    steps: [
      `${entry.exchange.request.method} ${run.masker.maskUrl(entry.exchange.request.url)} as ${entry.user ?? "anonymous"} with ${where} set to a value holding ${entry.marker}.`,
      `Open ${page.path} in a browser as ${reader}: its script fetches ${delivered} and inserts the saved value as markup.`,
      `document.getElementsByTagName("${tag}") finds an element (a value set as text would make none).`,
    ],
    notes: [
      `Stored through ${source} ${where}, delivered by ${delivered} and inserted as markup into ${page.path}.`,
      `DOM check in Chromium as ${reader}: after the page's requests settled, document.getElementsByTagName("${tag}") found ${hit.counts[0]} element(s), and ${hit.counts[1]} on a second load in a fresh browser context; the page's own HTML did not carry the marker.`,
      "The generated test saves a fresh marker over HTTP, then opens the page in Chromium (playwright-core, QAAS_CHROMIUM) and asserts no element of that tag.",
    ],
    repro: {
      title: `${page.path} shows ${where} saved through ${source} as text, not markup`,
      steps: [injectedStep],
      assertions: [
        {
          kind: "rendered_lacks_element",
          page: pagePath,
          ...(page.viewer !== undefined ? { as: page.viewer } : {}),
          tag: "qaas-xss-{{unique}}",
          message: "a stored value must be inserted into the page as text, not markup",
        },
      ],
    },
  });
}
