import { AxeBuilder } from "@axe-core/playwright";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { CHROMIUM_ARGS, findChromium } from "../../src/probes/traffic/chromium.ts";
import type { OracleClient } from "./oracle.ts";

// The UI oracles' eyes: one headless Chromium for the whole self-check, a fresh context per question. A
// page is audited the way the public catalogues define its defects, each check independent of qaas:
// uncaught exceptions and unhandled rejections (MDN `error`/`unhandledrejection`), console.error calls, a
// same-origin request answered 5xx, a script/stylesheet/image or a same-origin link answering 404/410/5xx,
// axe-core's WCAG 2 A/AA rules, horizontal overflow at a 375 px phone width (WCAG 1.4.10), a visible
// control another element covers at 1280 or 375 px (Playwright's own actionability check: the element at
// the control's centre "intercepts pointer events"; WCAG 2.5.8), text clipped by a box too small for it
// (overflow hidden or clip, no ellipsis or line clamp; WCAG 1.4.4, 1.4.10), and every button clicked on a
// fresh load: one that changes nothing (no DOM change, no request, no navigation), throws, or ends on an
// error answer (≥ 400, or a 5xx request) is a broken step.

export interface UiReport {
  consoleErrors: string[];
  brokenLinks: string[];
  accessibility: string[];
  overflow: string[];
  overlap: string[];
  clipped: string[];
  brokenSteps: string[];
}

export type UiCheck = keyof UiReport;

const ALL_CHECKS: readonly UiCheck[] = [
  "consoleErrors",
  "brokenLinks",
  "accessibility",
  "overflow",
  "overlap",
  "clipped",
  "brokenSteps",
];

export function launchOracleBrowser(): () => Promise<Browser> {
  let launched: Promise<Browser> | undefined;
  return () => {
    launched ??= (async () => {
      const { chromium } = await import("playwright-core");
      return chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS, timeout: 30_000 });
    })();
    return launched;
  };
}

async function withContext<T>(
  client: OracleClient,
  width: number,
  use: (context: BrowserContext) => Promise<T>,
): Promise<T> {
  if (!client.browser) throw new Error("this oracle needs a browser (the self-check launches one)");
  const browser = await client.browser();
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  try {
    return await use(context);
  } finally {
    await context.close();
  }
}

interface Load {
  page: Page;
  errors: string[];
  failures: string[];
  status: number;
}

/** Opens a page and records what the catalogue calls errors while it loads and settles. */
async function open(context: BrowserContext, url: string, settleMs = 700): Promise<Load> {
  const page = await context.newPage();
  const origin = new URL(url).origin;
  const errors: string[] = [];
  const failures: string[] = [];
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    // Chrome reports a failed load as a console error too; loads are judged from the network below.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
      errors.push(`console.error: ${message.text()}`);
  });
  page.on("response", (response) => {
    const request = response.request();
    if (new URL(response.url()).origin !== origin) return;
    const type = request.resourceType();
    if (response.status() >= 500)
      failures.push(`${request.method()} ${response.url()} → ${response.status()}`);
    else if (["script", "stylesheet", "image", "font"].includes(type) && response.status() >= 400)
      failures.push(`${type} ${new URL(response.url()).pathname} → ${response.status()}`);
  });
  const response = await page.goto(url, { waitUntil: "load" });
  // A page's scripts act after its own requests answer: wait for the network to go quiet first, so a
  // rejection raised after a slow fetch (a busy machine) is still seen.
  await page.waitForLoadState("networkidle", { timeout: 5000 }).catch(() => undefined);
  await page.waitForTimeout(settleMs);
  return { page, errors, failures, status: response?.status() ?? 0 };
}

/** Audits one page for the given checks (all by default). */
export async function auditPage(
  client: OracleClient,
  path: string,
  checks: readonly UiCheck[] = ALL_CHECKS,
): Promise<UiReport> {
  const url = new URL(path, client.baseUrl).href;
  const report: UiReport = {
    consoleErrors: [],
    brokenLinks: [],
    accessibility: [],
    overflow: [],
    overlap: [],
    clipped: [],
    brokenSteps: [],
  };
  await withContext(client, 1280, async (context) => {
    const load = await open(context, url);
    if (load.status >= 400) report.brokenSteps.push(`the page answers ${load.status}`);
    report.consoleErrors.push(...load.errors, ...load.failures.filter((line) => line.includes("→ 5")));
    report.brokenLinks.push(...load.failures.filter((line) => !line.includes("→ 5")));
    if (checks.includes("brokenLinks")) {
      const origin = new URL(url).origin;
      const links = await load.page.$$eval("a[href]", (anchors) =>
        anchors.map((anchor) => (anchor as HTMLAnchorElement).href),
      );
      for (const link of new Set(links)) {
        if (new URL(link).origin !== origin) continue;
        const answer = await context.request.get(link, { maxRedirects: 0 });
        if ([404, 410].includes(answer.status()) || answer.status() >= 500)
          report.brokenLinks.push(`link ${new URL(link).pathname} → ${answer.status()}`);
      }
    }
    if (checks.includes("accessibility")) {
      const results = await new AxeBuilder({ page: load.page }).withTags(["wcag2a", "wcag2aa"]).analyze();
      report.accessibility.push(
        ...results.violations.map((violation) => `${violation.id} (${violation.nodes.length})`),
      );
    }
    // Clipping is measured before the overlap check's trial clicks scroll anything into view.
    if (checks.includes("clipped")) report.clipped.push(...(await clippedText(load.page, 1280)));
    if (checks.includes("overlap")) report.overlap.push(...(await coveredControls(load.page, 1280)));
    await load.page.close();
    if (checks.includes("brokenSteps")) report.brokenSteps.push(...(await clickEveryButton(context, url)));
  });
  if (checks.some((check) => ["overflow", "overlap", "clipped"].includes(check))) {
    await withContext(client, 375, async (context) => {
      const load = await open(context, url, 200);
      const widths = await load.page.evaluate(() => [
        document.documentElement.scrollWidth,
        document.documentElement.clientWidth,
      ]);
      if ((widths[0] ?? 0) > (widths[1] ?? 0) + 1)
        report.overflow.push(`${widths[0]} px wide in a ${widths[1]} px viewport`);
      if (checks.includes("clipped")) report.clipped.push(...(await clippedText(load.page, 375)));
      if (checks.includes("overlap")) report.overlap.push(...(await coveredControls(load.page, 375)));
      await load.page.close();
    });
  }
  for (const check of Object.keys(report) as UiCheck[]) if (!checks.includes(check)) report[check] = [];
  return report;
}

/** The controls a person clicks or types into. */
const CONTROLS = "button, a[href], input:not([type=hidden]), select, textarea";

/**
 * What covers a control at the point a click aims at, by Playwright's own actionability check (a trial
 * click that does not act): the element that "intercepts pointer events" there. Other failures (not
 * visible, disabled, still moving) are no overlap. A label in front of its own control covers nothing:
 * clicking a label activates its control (HTML's label activation behaviour), the custom checkbox pattern.
 */
async function coveredBy(control: Locator): Promise<string | undefined> {
  try {
    await control.click({ trial: true, timeout: 1500 });
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const cover = /- (<.*?>.*?) intercepts pointer events/.exec(message)?.[1];
    if (!cover) return undefined;
    const ownLabel = await control.evaluate((element) => {
      const box = element.getBoundingClientRect();
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return hit?.closest("label")?.control === element;
    });
    return ownLabel ? undefined : cover;
  }
}

/** The visible controls another element covers on this load, each checked where Playwright would click. */
async function coveredControls(page: Page, width: number): Promise<string[]> {
  const controls = page.locator(CONTROLS);
  const covered: string[] = [];
  const count = await controls.count();
  for (let index = 0; index < count; index += 1) {
    const control = controls.nth(index);
    if (!(await control.isVisible())) continue;
    const cover = await coveredBy(control);
    if (!cover) continue;
    const name = await control.evaluate(
      (element) =>
        `${element.tagName.toLowerCase()} "${(element.textContent ?? "").trim() || element.getAttribute("aria-label") || element.id}"`,
    );
    covered.push(`at ${width} px ${name} is covered by ${cover}`);
  }
  return covered;
}

/**
 * Text a box too small for it cuts off: an element whose overflow is hidden or clip on an axis its content
 * overflows, holding text. Deliberate truncation is not clipping: an ellipsis on the horizontal axis, a line
 * clamp, or a visually hidden box of 1 px (text for screen readers). Select and textarea show their own
 * content in a list or by scrolling.
 */
async function clippedText(page: Page, width: number): Promise<string[]> {
  const boxes = await page.evaluate(() => {
    // No function is declared in here: tsx would wrap it in a helper the page does not have.
    const found: string[] = [];
    for (const element of document.querySelectorAll("body *")) {
      if (element.matches("select, textarea")) continue;
      const style = getComputedStyle(element);
      const clipX = ["hidden", "clip"].includes(style.overflowX);
      const clipY = ["hidden", "clip"].includes(style.overflowY);
      if (!clipX && !clipY) continue;
      const text = (element.textContent ?? "").replace(/\s+/g, " ").trim();
      if (text === "") continue;
      const box = element.getBoundingClientRect();
      if (box.width <= 1 || box.height <= 1) continue;
      if (!["", "none"].includes(style.getPropertyValue("-webkit-line-clamp"))) continue;
      const wide =
        clipX && element.scrollWidth > element.clientWidth + 1 && style.textOverflow !== "ellipsis";
      const tall = clipY && element.scrollHeight > element.clientHeight + 1;
      if (!wide && !tall) continue;
      const name = [element.tagName.toLowerCase(), ...element.classList].join(".");
      found.push(
        `${name} "${text.slice(0, 40)}" needs ${element.scrollWidth}×${element.scrollHeight} px in ${element.clientWidth}×${element.clientHeight}`,
      );
    }
    return found;
  });
  return boxes.map((line) => `at ${width} px ${line}`);
}

/** Each button on its own fresh load: what the click changed, threw or was answered. */
async function clickEveryButton(context: BrowserContext, url: string): Promise<string[]> {
  const probe = await open(context, url, 100);
  const count = await probe.page.locator("button, input[type=submit]").count();
  await probe.page.close();
  const broken: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const load = await open(context, url, 200);
    const { page } = load;
    const button = page.locator("button, input[type=submit]").nth(index);
    const name = ((await button.textContent()) ?? "").trim() || `button ${index + 1}`;
    // A button something covers cannot be clicked at all: that is the overlap check's finding, not a step's.
    if (await coveredBy(button)) {
      await page.close();
      continue;
    }
    await page.evaluate(() => {
      const marker = window as unknown as { __changes: number };
      marker.__changes = 0;
      new MutationObserver((records) => {
        marker.__changes += records.length;
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    const before = { errors: load.errors.length, failures: load.failures.length };
    let requests = 0;
    const statuses: number[] = [];
    page.on("request", () => {
      requests += 1;
    });
    page.on("response", (response) => {
      if (
        response.request().isNavigationRequest() ||
        ["fetch", "xhr"].includes(response.request().resourceType())
      )
        statuses.push(response.status());
    });
    const navigated = page.waitForEvent("framenavigated", { timeout: 2000 }).then(
      () => true,
      () => false,
    );
    await button.click({ timeout: 10_000 });
    const moved = await navigated;
    await page.waitForTimeout(400);
    const changes = moved
      ? 1
      : await page.evaluate(() => (window as unknown as { __changes: number }).__changes);
    if (load.errors.length > before.errors) broken.push(`"${name}" throws: ${load.errors.at(-1)}`);
    else if (statuses.some((status) => status >= 400 && (moved || status >= 500)))
      broken.push(`"${name}" is answered ${statuses.join(", ")}`);
    else if (changes === 0 && requests === 0) broken.push(`"${name}" changes nothing`);
    await page.close();
  }
  return broken;
}

/** Clicks the named button on a fresh load and answers the visible text after it, with the requests' statuses. */
export async function afterClick(
  client: OracleClient,
  path: string,
  button: string,
  fill: Record<string, string> = {},
): Promise<{ text: string; statuses: number[] }> {
  return withContext(client, 1280, async (context) => {
    const { page } = await open(context, new URL(path, client.baseUrl).href, 100);
    const statuses: number[] = [];
    page.on("response", (response) => {
      if (["fetch", "xhr", "document"].includes(response.request().resourceType()))
        statuses.push(response.status());
    });
    for (const [label, value] of Object.entries(fill)) await page.getByLabel(label).fill(value);
    await page.getByRole("button", { name: button }).click({ timeout: 10_000 });
    await page.waitForTimeout(800);
    const text = (await page.locator("body").textContent()) ?? "";
    await page.close();
    return { text, statuses };
  });
}

/**
 * A UI variant's oracle: the page is flawed when the browser sees any UI defect on it (the ledger matches
 * by domain and page, so a safe page must show none). A vulnerable page must show its own class's defect;
 * one that shows only another's is a mislabelled variant, reported as the oracle failing.
 */
export function pageOracle(path: string, own: UiCheck, vulnerable: boolean) {
  return async (client: OracleClient) => {
    const report = await auditPage(client, path);
    const seen = Object.entries(report).filter(([, lines]) => lines.length > 0);
    const evidence = seen.map(([check, lines]) => `${check}: ${lines.join("; ")}`).join(" | ") || "clean";
    if (vulnerable && report[own].length === 0) throw new Error(`no ${own} on ${path} (${evidence})`);
    return { flawed: seen.length > 0, evidence };
  };
}

/**
 * DOM-based XSS, judged in a browser: the page is loaded with each payload of the cheat sheets' three
 * contexts (HTML, a JavaScript string, a URL) in `source` (`#fragment` or `?name`), links the script built
 * with `javascript:` are followed, and the payload calls a marker function defined before the page's own
 * scripts. Flawed when any payload called it.
 */
export function domScriptOracle(path: string, source: string, vulnerable: boolean) {
  return async (client: OracleClient) => {
    const payloads = ["<img src=x onerror=__marked(1)>", "'-__marked(2)-'", "javascript:__marked(3)"];
    const ran: string[] = [];
    await withContext(client, 1280, async (context) => {
      await context.addInitScript(() => {
        const calls: number[] = [];
        Object.assign(window, { __marked: (value: number) => calls.push(value), __calls: calls });
      });
      for (const payload of payloads) {
        const url = new URL(path, client.baseUrl);
        if (source === "#fragment") url.hash = payload;
        else url.searchParams.set(source.slice(1), payload);
        const { page } = await open(context, url.href, 200);
        await page.evaluate(() => {
          for (const anchor of document.querySelectorAll<HTMLAnchorElement>("a[href^='javascript:']"))
            anchor.click();
        });
        await page.waitForTimeout(100);
        const calls = await page.evaluate(() => (window as unknown as { __calls: number[] }).__calls);
        if (calls.length > 0) ran.push(payload);
        await page.close();
      }
    });
    const evidence = ran.length > 0 ? `ran: ${ran.join(" | ")}` : "no payload ran";
    if (vulnerable && ran.length === 0) throw new Error(`no payload ran on ${path} through ${source}`);
    return { flawed: ran.length > 0, evidence };
  };
}

/** Opens a page at desktop width and answers what `read` finds on it once it settled. */
export async function openedPage<T>(
  client: OracleClient,
  path: string,
  read: (page: Page) => Promise<T>,
): Promise<T> {
  return withContext(client, 1280, async (context) => {
    const { page } = await open(context, new URL(path, client.baseUrl).href, 100);
    try {
      return await read(page);
    } finally {
      await page.close();
    }
  });
}
