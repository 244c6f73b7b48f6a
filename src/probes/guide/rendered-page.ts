import type { BrowserContext } from "playwright-core";
import { apiCallsSettled } from "../browser/api-quiet.ts";
import type { BrowserSession } from "../browser/browser-session.ts";

// One page as a person sees it once its scripts ran: every way onward the rendered DOM offers (anchors a
// script wrote into a menu count as much as server-rendered ones), the controls that may navigate without
// being links, and the document's text and the scripts it loaded, for the "mentioned anywhere" signal.

export interface RenderedPage {
  /** `/path?query` requested. */
  path: string;
  /** Where the browser ended after redirects, as `/path?query` (same origin) or an absolute URL. */
  finalPath: string;
  status: number | undefined;
  contentType: string;
  html: boolean;
  /** Same-origin `/path?query` targets of anchors, areas, frames, and data-href/routerlink attributes. */
  links: string[];
  /** Links opened in a new tab or embedded in a frame: closing the tab, or the host page, is the way back. */
  detachedLinks: string[];
  /** Same-origin form actions with their methods. */
  forms: Array<{ action: string; method: string }>;
  /** `<nav>` or role=navigation elements present. */
  navigationLandmarks: number;
  /** Buttons and clickable elements not part of a form: a script may navigate with them. */
  controls: number;
  /** The rendered document (capped), searched for paths a script might build. */
  text: string;
  /** Same-origin script URLs the page loaded (network log and script tags). */
  scripts: string[];
  error?: string;
}

const DOM_READER = `(() => {
  const attr = (el, name) => el.getAttribute(name);
  const links = [];
  const detached = [];
  for (const el of document.querySelectorAll("a[href], area[href]")) {
    links.push(el.href);
    if ((attr(el, "target") || "").toLowerCase() === "_blank") detached.push(el.href);
  }
  for (const el of document.querySelectorAll("iframe[src], frame[src]")) { links.push(el.src); detached.push(el.src); }
  for (const el of document.querySelectorAll("[data-href], [data-url], [data-link], [routerlink], [ng-reflect-router-link], [to]")) {
    const value = attr(el, "data-href") || attr(el, "data-url") || attr(el, "data-link") || attr(el, "routerlink") || attr(el, "ng-reflect-router-link") || attr(el, "to");
    if (value) { try { links.push(new URL(value, document.baseURI).href); } catch {} }
  }
  for (const el of document.querySelectorAll("[onclick]")) {
    const match = /(?:location(?:\\.href)?\\s*=|location\\.assign\\(|navigate\\(|open\\()\\s*['"\`]([^'"\`]+)/.exec(attr(el, "onclick") || "");
    if (match) { try { links.push(new URL(match[1], document.baseURI).href); } catch {} }
  }
  const forms = [...document.forms].map((form) => ({ action: form.action || location.href, method: (form.getAttribute("method") || "get").toUpperCase() }));
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const controls = [...document.querySelectorAll("button, [role=button], [role=link], [role=menuitem], [role=tab], [onclick], input[type=button], select")]
    .filter((el) => !el.closest("form") && visible(el)).length;
  const navigationLandmarks = document.querySelectorAll("nav, [role=navigation]").length;
  const scripts = [...document.scripts].map((el) => el.src).filter(Boolean);
  return { links, detached, forms, controls, navigationLandmarks, scripts, html: document.documentElement.outerHTML.slice(0, 1000000) };
})()`;

interface DomFacts {
  links: string[];
  detached: string[];
  forms: Array<{ action: string; method: string }>;
  controls: number;
  navigationLandmarks: number;
  scripts: string[];
  html: string;
}

/** Same-origin `/path?query` of an absolute URL, fragment dropped; undefined elsewhere. */
export function localPath(url: string, origin: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) return undefined;
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return undefined;
  }
}

/**
 * How long a page's own calls and scripts may take to settle after `load` (menus fetched on start-up, client
 * routers); images and other assets are not waited for, they add no way onward.
 */
const SETTLE_MS = 2_500;

/** Opens `path` in the role's browser context, reads the rendered DOM and gives the tab back. */
export async function renderPage(
  session: BrowserSession,
  context: BrowserContext,
  origin: string,
  path: string,
  options: { screenshot?: boolean; timeoutMs?: number } = {},
): Promise<{ page: RenderedPage; screenshot?: Uint8Array }> {
  const opened = await session.open(context, new URL(path, origin).href, options.timeoutMs);
  try {
    const contentType = opened.response?.headers()["content-type"] ?? "";
    const finalUrl = opened.page.url();
    const rendered: RenderedPage = {
      path,
      finalPath: localPath(finalUrl, origin) ?? finalUrl,
      status: opened.response?.status(),
      contentType,
      html: /html/i.test(contentType),
      links: [],
      detachedLinks: [],
      forms: [],
      navigationLandmarks: 0,
      controls: 0,
      text: "",
      scripts: [],
      ...(opened.error ? { error: opened.error } : {}),
    };
    if (!rendered.html || opened.error) return { page: rendered };
    await apiCallsSettled(opened.page, SETTLE_MS);
    const facts = (await opened.page.evaluate(DOM_READER).catch(() => undefined)) as DomFacts | undefined;
    if (!facts) return { page: { ...rendered, error: "the rendered page could not be read" } };
    const unique = (values: Array<string | undefined>): string[] => [
      ...new Set(values.filter((value): value is string => value !== undefined)),
    ];
    const loaded = session
      .logOf(opened.page)
      ?.network.filter((entry) => entry.resourceType === "script")
      .map((entry) => entry.url);
    rendered.links = unique(facts.links.map((link) => localPath(link, origin)));
    rendered.detachedLinks = unique(facts.detached.map((link) => localPath(link, origin)));
    rendered.forms = facts.forms.flatMap((form) => {
      const action = localPath(form.action, origin);
      return action ? [{ action, method: form.method === "POST" ? "POST" : "GET" }] : [];
    });
    rendered.controls = facts.controls;
    rendered.navigationLandmarks = facts.navigationLandmarks;
    rendered.text = facts.html;
    rendered.scripts = unique([...facts.scripts, ...(loaded ?? [])].map((url) => localPath(url, origin)));
    const screenshot = options.screenshot
      ? await opened.page.screenshot({ fullPage: true, timeout: 10_000 }).catch(() => undefined)
      : undefined;
    return { page: rendered, ...(screenshot ? { screenshot } : {}) };
  } finally {
    await session.giveBack(opened.page).catch(() => {});
  }
}
