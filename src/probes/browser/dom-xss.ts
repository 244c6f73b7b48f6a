import { randomInt } from "node:crypto";
import type { BrowserContext, Page, Response } from "playwright-core";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Page as MapPage } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { accountGuard } from "../http/account-guard.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { probeTargetOf } from "../http/run-http.ts";
import { ANONYMOUS } from "../pages/crawl-pages.ts";
import { webRoles } from "../pages/web-session.ts";
import { apiCallsSettled } from "./api-quiet.ts";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";
import { type BrowserSession, browserSessionFor, type PageLog } from "./browser-session.ts";
import { CANARY_WATCH, canarySinks, canaryWord, watchCanarySinks } from "./dom-xss-canary.ts";

// DOM-based XSS: a page's own script takes part of the URL (a query parameter, the fragment) and writes it
// where the browser runs it (innerHTML, document.write, eval, a javascript: link). The server may never see
// the value (a fragment is not sent), so only a browser finds it. Each payload calls a function the probe
// defines before the page's scripts run, with a token of its own: it does nothing else, and it is the
// proof — the payload ran. A fresh load with a new token that runs again is the second signal. A payload
// that also comes back raw in the server's HTML is reflected XSS, AUDITOR's to report, and is left out.
// An input is tried with payloads only when an inert word put there first reached a sink or the page
// (dom-xss-canary.ts): most inputs reach nothing, and then cost one load instead of three.

export interface DomXssOptions {
  max_pages?: number;
  max_seconds?: number;
}

interface Hit {
  page: string;
  role: string;
  source: string;
  sink: string;
  url: string;
  confirmUrl: string;
}

const HOOK = "__qaasDomXss";
const TABS_AT_ONCE = 3;
/** The longest a loaded page's own API calls and scripts are waited for before its hook is read. */
const SETTLE_MS = 1500;

/** Payloads per context an input may land in: HTML, a URL, a JavaScript string. */
function payloads(token: number): Array<{ sink: string; text: string }> {
  return [
    // Closing an option and a select first: inside a <select> the parser drops an <img>, and outside one
    // the stray end tags are ignored.
    {
      sink: "HTML (innerHTML, document.write)",
      text: `"'></option></select><img src=x onerror=${HOOK}(${token})>`,
    },
    // An expression, not a statement: `f('…')` (a call's argument) rejects `';x();'` but takes `''-x()-''`;
    // the second half does the same inside double quotes and is a plain string inside single ones.
    {
      sink: "script (eval, setTimeout, a JavaScript string)",
      text: `'-${HOOK}(${token})-'"-${HOOK}(${token})-"`,
    },
    // Also code on its own: run by eval or a timer as it is, `javascript:` is a label before the call.
    { sink: "a javascript: URL, or code run as it is (eval, a timer)", text: `javascript:${HOOK}(${token})` },
  ];
}

export async function probeDomXss(
  context: ToolContext,
  options: DomXssOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const target = probeTargetOf(context);
  if (typeof target === "string") return target;
  const map = context.systemMap();
  if (!map) return "no system map: run MAPPER first";
  const origin = new URL(target.baseUrl).origin;
  const pages = pagesWithInputs(map.pages).slice(0, options.max_pages ?? 30);
  const { roles, users } = webRoles(context, target);
  // A page may change the signed-in user's password from its URL: the same guard as every request.
  const guard = accountGuard(target.profile, map.operations);
  const session = browserSessionFor(context);
  const started = Date.now();
  // Stretched while pages load slowly (browse-pace.ts): a busy machine would otherwise try one page.
  const deadline = () => session.pace.deadline(started, (options.max_seconds ?? 60) * 1000);
  let attempts = 0;
  let canaries = 0;
  // Each page and source in a tab of its own, a few at once: most of a load is waiting on the page.
  const inputs = pages.flatMap((page) => page.sources.map((source) => ({ page, source })));
  const found = await mapConcurrent(inputs, TABS_AT_ONCE, async ({ page, source }) => {
    if (Date.now() > deadline() || context.signal.aborted) return undefined;
    const role = roles.find((candidate) => page.roles?.includes(candidate.role)) ?? ANONYMOUS;
    const refused = guard?.(
      "GET",
      withPayload(new URL(page.path, origin), source, "x").href,
      undefined,
      users[role.role],
    );
    if (refused) return undefined;
    const browserContext = await session.context(role, origin);
    canaries += 1;
    if (!(await canaryReached(session, browserContext, origin, page.path, source))) return undefined;
    for (const [index, { sink }] of payloads(0).entries()) {
      if (Date.now() > deadline()) return undefined;
      attempts += 1;
      const payloadFor = (token: number) => payloads(token)[index]!.text;
      const first = await ran(session, browserContext, origin, page.path, source, payloadFor);
      const again = first && (await ran(session, browserContext, origin, page.path, source, payloadFor));
      if (first && again)
        return { page: page.template, role: role.role, source, sink, url: first, confirmUrl: again };
    }
    return undefined;
  });
  const hits = found.filter((hit): hit is Hit => hit !== undefined);
  return {
    candidates: hits.map((hit) => draftFor(context, hit)),
    stats: { pages: pages.length, canaries, attempts, confirmed: hits.length },
  };
}

/** Whether an inert word put in `source` reaches anything on the page (dom-xss-canary.ts). */
async function canaryReached(
  session: BrowserSession,
  browserContext: BrowserContext,
  origin: string,
  path: string,
  source: string,
): Promise<boolean> {
  const word = canaryWord();
  const url = withPayload(new URL(path, origin), source, word);
  const sinks = await loaded(session, browserContext, url, (page, log) =>
    canarySinks(page, word, url.href, log.network),
  );
  return sinks.length > 0;
}

/** Loads the page with the payload in `source`; the URL when the payload ran and the server did not echo it. */
async function ran(
  session: BrowserSession,
  browserContext: BrowserContext,
  origin: string,
  path: string,
  source: string,
  payloadFor: (token: number) => string,
): Promise<string | undefined> {
  const token = randomInt(100_000, 999_999);
  const payload = payloadFor(token);
  const url = withPayload(new URL(path, origin), source, payload);
  return loaded(session, browserContext, url, async (page, _log, response) => {
    // A payload written into a link runs when someone follows it: follow those the page built from it.
    await page
      .evaluate((hook) => {
        for (const anchor of document.querySelectorAll<HTMLAnchorElement>("a[href^='javascript:']"))
          if (anchor.href.includes(hook)) anchor.click();
      }, HOOK)
      .catch(() => {});
    const calls = (await page
      .evaluate((hook) => (window as unknown as Record<string, number[]>)[`${hook}Calls`] ?? [], HOOK)
      .catch(() => [])) as number[];
    if (!calls.includes(token)) return undefined;
    const served = response ? await response.text().catch(() => "") : "";
    if (served.includes(payload)) return undefined;
    return url.href;
  });
}

/** `url` loaded in a tab of `browserContext` and settled; `read` answers from it before the tab goes back. */
async function loaded<T>(
  session: BrowserSession,
  browserContext: BrowserContext,
  url: URL,
  read: (page: Page, log: PageLog, response: Response | null) => Promise<T>,
): Promise<T> {
  const { page, log } = await session.borrowPage(browserContext);
  try {
    // Once per tab (tabs are reused); the scripts then run in every document the tab loads.
    if (!hooked.has(page)) {
      hooked.add(page);
      await page.addInitScript((hook) => {
        const calls: number[] = [];
        Object.defineProperty(window, hook, { value: (value: number) => calls.push(value), writable: false });
        Object.defineProperty(window, `${hook}Calls`, { value: calls, writable: false });
      }, HOOK);
      await page.addInitScript(watchCanarySinks, CANARY_WATCH);
    }
    const response = await page.goto(url.href, { waitUntil: "load", timeout: 10_000 }).catch(() => null);
    await apiCallsSettled(page, SETTLE_MS);
    return await read(page, log, response);
  } finally {
    await boundedCall(session.giveBack(page), 2 * EVALUATE_MS, undefined);
  }
}

/** Tabs that already carry the hook's and the canary watcher's init scripts. */
const hooked = new WeakSet<Page>();

/** The page's URL with `payload` in `source` (`#fragment` or `?name`). */
function withPayload(url: URL, source: string, payload: string): URL {
  if (source === "#fragment") url.hash = payload;
  else {
    // Encoded as a link in the wild is (encodeURI): a script that decodes the raw URL with decodeURI, which
    // leaves `%2F`, `%3D` and `+` as they are, gets the payload back whole.
    const name = source.replace(/^\?/, "");
    url.searchParams.delete(name);
    url.search = `${url.search ? `${url.search}&` : "?"}${encodeURIComponent(name)}=${encodeURI(payload)}`;
  }
  return url;
}

interface PageInputs {
  path: string;
  template: string;
  roles: string[] | undefined;
  sources: string[];
  /** The page loads script files of its own (inline scripts are not in the map). */
  scripted: boolean;
}

/**
 * Each HTML page once per template, with the query parameters its links and its GET forms carry and the
 * fragment. The time bound may not reach every page, so the likeliest come first: pages that load scripts
 * of their own (only a script writes the URL into the page), then pages with parameters.
 */
function pagesWithInputs(pages: readonly MapPage[]): PageInputs[] {
  const byTemplate = new Map<string, PageInputs>();
  for (const page of pages) {
    if (page.status !== undefined && page.status >= 400) continue;
    const template = page.path.split("?")[0]!.replace(/\/\d+(?=\/|$)/g, "/{id}");
    const entry = byTemplate.get(template) ?? {
      path: page.path.split("?")[0]!,
      template,
      roles: page.roles,
      sources: ["#fragment"],
      scripted: false,
    };
    if ((page.scripts ?? []).length > 0) entry.scripted = true;
    const own = page.path.split("?")[0]!;
    const names: string[] = [];
    for (const link of [page.path, ...page.links]) {
      const [linkPath, query] = link.split("?");
      if (query && linkPath === own) names.push(...new URLSearchParams(query).keys());
    }
    // A GET form that submits to its own page puts its fields in that page's URL (the page reader already
    // resolved an empty or `#` action to the page's path).
    for (const form of page.forms ?? [])
      if (form.method.toUpperCase() === "GET" && !form.scripted && form.action.split("?")[0] === own)
        names.push(...form.fields);
    for (const name of names) if (!entry.sources.includes(`?${name}`)) entry.sources.push(`?${name}`);
    byTemplate.set(template, entry);
  }
  const likelihood = (entry: PageInputs) => 2 * Number(entry.scripted) + Number(entry.sources.length > 1);
  return [...byTemplate.values()].sort((a, b) => likelihood(b) - likelihood(a));
}

function draftFor(context: ToolContext, hit: Hit): EnvelopeDraft {
  const where =
    hit.source === "#fragment" ? "the URL fragment" : `the query parameter ${hit.source.slice(1)}`;
  const steps = [
    `Open ${hit.url} in a browser${hit.role === ANONYMOUS.role ? "" : ` signed in as ${hit.role}`}.`,
    `The page's own script writes ${where} into ${hit.sink}, and the marker function runs (in a real attack, any script).`,
  ];
  const note = context.putArtifact(
    `browser/dom-xss-${hit.page.replace(/[^a-z0-9]+/gi, "-")}-${hit.source.replace(/[^a-z0-9]+/gi, "")}.json`,
    `${JSON.stringify(hit, null, 2)}\n`,
  );
  return {
    domain: "security",
    defect_class: "xss",
    title: `DOM-based XSS on ${hit.page}: ${where} runs as script`,
    summary: `Loading ${hit.page} with a marker in ${where} made the page's own script run it (sink: ${hit.sink}); a second load with a fresh marker ran again, and the server's HTML did not contain the marker, so the page's script put it there.`,
    location: { kind: "page", value: hit.page },
    evidence: [
      { kind: "artifact", description: "the two URLs whose marker ran, the role and the sink", uri: note },
      { kind: "note", description: `first: ${hit.url}; second: ${hit.confirmUrl}` },
    ],
    reproduction: { steps },
    impact: "A link with a crafted fragment or parameter runs script in the victim's session on this origin.",
    severity: "high",
    confidence: 0.9,
    dedupe: { discriminator: hit.source },
  };
}
