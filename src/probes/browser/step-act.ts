import type { Request } from "playwright-core";
import type { ToolContext } from "../../tools/context.ts";
import type { ToolResult } from "../../tools/result.ts";
import { err, ok } from "../../tools/result.ts";
import type { AgentTab } from "./agent-tab.ts";
import { createdPaths } from "./agent-tab.ts";
import type { LocatorSpec } from "./locate.ts";
import { describeSpec, locatorFor } from "./locate.ts";

// One step on one element, and what it caused: a person judging "nothing happened" or "it failed" needs
// the requests the page sent, where it went, and whether anything on it changed. A write that led to a
// new record's page marks that page as the run's own (destructive controls are allowed there).

export interface StepAction {
  action: "click" | "fill" | "select" | "check" | "uncheck" | "press";
  target: LocatorSpec;
  value: string | undefined;
}

export interface FoundElement {
  description: string;
  name: string;
  href: string | undefined;
}

const SETTLE_MS = 800;
const ASSETS = new Set(["image", "stylesheet", "font", "media"]);

export async function actOn(
  context: ToolContext,
  tab: AgentTab,
  step: StepAction,
  /** Judges the element found; a reason refuses the step. */
  refuse: (found: FoundElement) => string | undefined,
): Promise<ToolResult> {
  const locator = locatorFor(tab.page, step.target);
  const count = await locator.count();
  if (count === 0) return err(`no element matches ${describeSpec(step.target)} on ${tab.page.url()}`);
  const element = locator.first();
  const facts = await element.evaluate((node) => {
    const html = node as HTMLElement;
    const anchor = html.closest("a");
    const name = (
      html.getAttribute("aria-label") ??
      html.textContent ??
      (html as HTMLInputElement).value ??
      ""
    )
      .replace(/\s+/g, " ")
      .trim()
      .slice(0, 200);
    return { name, href: anchor?.href ?? undefined, tag: html.tagName.toLowerCase() };
  });
  const found = { description: `${facts.tag} "${facts.name}"`, name: facts.name, href: facts.href };
  const refused = refuse(found);
  if (refused) return err(refused);

  const before = tab.page.url();
  const requests: Request[] = [];
  const onRequest = (request: Request) => {
    if (!ASSETS.has(request.resourceType())) requests.push(request);
  };
  const dialogs = tab.log.dialogs.length;
  const downloads = tab.log.downloads.length;
  tab.page.on("request", onRequest);
  const domBefore = await domSize(tab);
  try {
    const timeout = 5000;
    if (step.action === "click") await element.click({ timeout });
    else if (step.action === "fill") await element.fill(step.value ?? "", { timeout });
    else if (step.action === "select") await element.selectOption(step.value ?? "", { timeout });
    else if (step.action === "check") await element.check({ timeout });
    else if (step.action === "uncheck") await element.uncheck({ timeout });
    else await element.press(step.value ?? "Enter", { timeout });
    await tab.page.waitForLoadState("load", { timeout: 10_000 }).catch(() => {});
    await tab.page.waitForTimeout(SETTLE_MS);
  } catch (error) {
    return err(
      `${step.action} on ${found.description} failed: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`,
    );
  } finally {
    tab.page.off("request", onRequest);
  }
  const after = tab.page.url();
  const sent = await Promise.all(
    requests.map(async (request) => {
      const response = await request.response().catch(() => null);
      return {
        method: request.method(),
        url: request.url(),
        status: response?.status() ?? null,
        failure: request.failure()?.errorText ?? null,
      };
    }),
  );
  const wrote = sent.some(
    (request) => request.method !== "GET" && (request.status ?? 0) < 400 && request.status !== null,
  );
  if (wrote && after !== before && !sameDocument(before, after)) {
    const path = new URL(after).pathname.replace(/\/+$/, "");
    // A new page whose path ends in an id: the record the write created.
    if (/\/[0-9a-f-]{1,36}$/i.test(path)) createdPaths(context).add(path);
  }
  return ok({
    element: found.description,
    url_before: before,
    url_after: after,
    requests: sent.slice(0, 20),
    dialogs: tab.log.dialogs.slice(dialogs),
    downloads: tab.log.downloads.slice(downloads),
    page_changed: after !== before || (await domSize(tab)) !== domBefore,
  });
}

function sameDocument(before: string, after: string): boolean {
  return before.split("#")[0] === after.split("#")[0];
}

/** A cheap fingerprint of the document: element count and text length. */
async function domSize(tab: AgentTab): Promise<string> {
  return tab.page
    .evaluate(() => `${document.getElementsByTagName("*").length}:${document.body?.innerText.length ?? 0}`)
    .catch(() => "gone");
}
