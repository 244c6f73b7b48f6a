import type { APIRequestContext, Page } from "playwright-core";
import { NEVER_FOLLOW, sameOriginPath } from "../pages/urls.ts";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";
import type { PageLog } from "./browser-session.ts";

// Links and assets that lead nowhere. Anchors are read from the rendered page (so links a script adds
// count), kept when they stay on the target's origin and do not look like sign-out or destroy links, and
// requested with the role's cookies; 404, 410 and 5xx are broken. Assets (images, scripts, styles, fonts)
// are taken from what the page actually failed to load. Either is reported only when a second request
// answers the same way.

export interface RenderedLink {
  /** Absolute URL without fragment. */
  url: string;
  text: string;
}

export interface FailedAsset {
  url: string;
  resourceType: string;
  status?: number;
  failure?: string;
}

export interface TargetCheck {
  status?: number;
  error?: string;
}

const ASSET_TYPES = new Set(["image", "script", "stylesheet", "font", "media"]);
// Aborted by us (a refused write) or by the page itself (navigation away): not the asset's fault.
const NOT_THE_ASSETS_FAULT = /ERR_ABORTED|blockedbyclient|ERR_BLOCKED_BY_CLIENT/i;

export function isBrokenStatus(status: number | undefined): boolean {
  return status === 404 || status === 410 || (status !== undefined && status >= 500);
}

export async function renderedLinks(page: Page, origin: string): Promise<RenderedLink[]> {
  const anchors = await boundedCall(
    page.$$eval("a[href]", (elements) =>
      elements.map((element) => ({
        href: (element as HTMLAnchorElement).href,
        text: (element.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 80),
        label: element.getAttribute("aria-label") ?? "",
      })),
    ),
    EVALUATE_MS,
    [] as Array<{ href: string; text: string; label: string }>,
  );
  const links = new Map<string, RenderedLink>();
  const base = new URL(page.url());
  for (const anchor of anchors) {
    const path = sameOriginPath(anchor.href, base, origin);
    if (!path || NEVER_FOLLOW.test(path) || NEVER_FOLLOW.test(`${anchor.text} ${anchor.label}`)) continue;
    const url = new URL(path, origin).toString();
    if (!links.has(url)) links.set(url, { url, text: anchor.text || anchor.label });
  }
  return [...links.values()];
}

/** Same-origin assets the page asked for and did not get, plus images that rendered nothing. */
export async function failedAssets(page: Page, log: PageLog, origin: string): Promise<FailedAsset[]> {
  const assets = new Map<string, FailedAsset>();
  for (const entry of log.network) {
    if (!ASSET_TYPES.has(entry.resourceType) || !sameOrigin(entry.url, origin)) continue;
    const failed =
      (entry.status !== undefined && entry.status >= 400) ||
      (entry.failure !== undefined && !NOT_THE_ASSETS_FAULT.test(entry.failure));
    if (failed && !assets.has(entry.url))
      assets.set(entry.url, {
        url: entry.url,
        resourceType: entry.resourceType,
        ...(entry.status !== undefined ? { status: entry.status } : {}),
        ...(entry.failure ? { failure: entry.failure } : {}),
      });
  }
  const blankImages = await boundedCall(
    page.$$eval("img", (images) =>
      (images as HTMLImageElement[])
        .filter((image) => image.complete && image.naturalWidth === 0 && image.currentSrc)
        .map((image) => image.currentSrc),
    ),
    EVALUATE_MS,
    [] as string[],
  );
  for (const url of blankImages)
    if (sameOrigin(url, origin) && !assets.has(url)) assets.set(url, { url, resourceType: "image" });
  return [...assets.values()];
}

/** One GET with the role's cookies (the browser context's request client); redirects are followed. */
export async function checkTarget(request: APIRequestContext, url: string): Promise<TargetCheck> {
  try {
    const response = await request.get(url, { timeout: 10_000, failOnStatusCode: false });
    await response.dispose().catch(() => {});
    return { status: response.status() };
  } catch (error) {
    return { error: (error instanceof Error ? error.message : String(error)).split("\n")[0] };
  }
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}
