import type { BrowserContext, Request, Response } from "playwright-core";
import type { BrowserSession } from "./browser-session.ts";
import { fillForm } from "./form-fill.ts";
import type { LoadOptions } from "./page-load.ts";
import { closePage, loadPage, stretchedWait } from "./page-load.ts";

// One journey through one form: a fresh load of the page, the form filled with valid values, submitted the
// way a person does (its submit button, else the form's own submit), and what followed recorded: the
// requests it sent and their answers, where the browser ended, the text the page showed before and after,
// and the exceptions thrown. Writes that would change what the run did not create (PUT, PATCH, DELETE, a
// POST to one record's address) are refused before they leave the browser: the journey is then not judged.

export interface SentRequest {
  method: string;
  url: string;
  body?: string;
  status?: number;
  responseBody?: string;
  failure?: string;
}

export interface JourneyRecord {
  page: string;
  formIndex: number;
  token: string;
  /** Why the journey did not happen (the form gone, values refused by its own rules), when it did not. */
  skipped?: string;
  /** Same-origin requests other than GET, and the document the browser navigated to, after submitting. */
  sent: SentRequest[];
  /** The document the submission led to, when it navigated. */
  landed?: { url: string; status?: number; title: string };
  /** Writes refused because they would change a record the run did not create. */
  refused: string[];
  textBefore: string;
  textAfter: string;
  exceptions: string[];
  domChanged: boolean;
  screenshot?: Uint8Array;
}

/** A write of a record the run did not create: an update or delete, or a POST to one record's address. */
export function updatesExisting(method: string, url: string): boolean {
  const upper = method.toUpperCase();
  if (upper === "PUT" || upper === "PATCH" || upper === "DELETE") return true;
  if (upper !== "POST") return false;
  const last = new URL(url).pathname.replace(/\/+$/, "").split("/").at(-1) ?? "";
  return /^\d+$|^[0-9a-f]{8}-[0-9a-f]{4}-|^[0-9a-f]{16,}$/i.test(last);
}

const VISIBLE_TEXT = "(() => (document.body ? document.body.innerText : '').slice(0, 20000))()";

export async function runJourney(
  session: BrowserSession,
  context: BrowserContext,
  url: string,
  formIndex: number,
  token: string,
  load: LoadOptions,
): Promise<JourneyRecord> {
  const origin = new URL(url).origin;
  const record: JourneyRecord = {
    page: url,
    formIndex,
    token,
    sent: [],
    refused: [],
    textBefore: "",
    textAfter: "",
    exceptions: [],
    domChanged: false,
  };
  const refuse = (method: string, target: string): string | undefined =>
    load.refuse?.(method, target) ??
    (new URL(target).origin === origin && updatesExisting(method, target)
      ? "an update of a record the run did not create"
      : undefined);
  const loaded = await loadPage(session, context, url, { ...load, refuse });
  // The tab goes on to other pages (tabs are reused): the journey's listeners leave with it, thrown or not.
  let detach = (): void => {};
  try {
    if (loaded.error || (loaded.status ?? 0) >= 400) {
      record.skipped = `the page did not load (${loaded.error ?? loaded.status})`;
      return record;
    }
    const { page } = loaded;
    const filled = await fillForm(page, formIndex, token);
    if (!filled.ok) {
      record.skipped = filled.reason;
      return record;
    }
    record.textBefore = String(await page.evaluate(VISIBLE_TEXT).catch(() => ""));
    await page.evaluate(`(() => {
      window.__qaasFormMutations = 0;
      window.__qaasSubmits = 0;
      document.addEventListener("submit", () => { window.__qaasSubmits += 1; }, true);
      new MutationObserver((records) => { window.__qaasFormMutations += records.length; })
        .observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    })()`);
    const pending: Array<Promise<void>> = [];
    const onRequest = (request: Request): void => {
      if (new URL(request.url()).origin !== origin) return;
      const method = request.method().toUpperCase();
      const isDocument = request.resourceType() === "document" && request.isNavigationRequest();
      if (method === "GET" && !isDocument) return;
      const sent: SentRequest = { method, url: request.url(), ...bodyOf(request) };
      record.sent.push(sent);
      pending.push(
        request
          .response()
          .then(async (response: Response | null) => {
            if (!response) return;
            sent.status = response.status();
            sent.responseBody = (await response.text().catch(() => "")).slice(0, 4000);
          })
          .catch(() => {}),
      );
    };
    const onFailed = (request: Request): void => {
      const sent = record.sent.find((each) => each.url === request.url() && each.status === undefined);
      if (sent) sent.failure = request.failure()?.errorText ?? "failed";
    };
    const errorsBefore = loaded.log.pageErrors.length;
    page.on("request", onRequest);
    page.on("requestfailed", onFailed);
    detach = () => {
      page.off("request", onRequest);
      page.off("requestfailed", onFailed);
    };
    const submit = page.locator(
      `form >> nth=${formIndex} >> css=button:not([type]), button[type=submit], input[type=submit]`,
    );
    const clicked = await submit
      .first()
      .click({ timeout: stretchedWait(loaded, 3000, 10_000) })
      .then(() => true)
      .catch(() => false);
    // A click can time out after it was dispatched (a busy machine): submitting again would send the form
    // twice, so the form is submitted by script only when nothing left and no submit event fired.
    if (!clicked && record.sent.length === 0 && page.url() === url)
      await page
        .evaluate(
          `window.__qaasSubmits === 0 && document.forms[${formIndex}] && document.forms[${formIndex}].requestSubmit()`,
        )
        .catch(() => {});
    await page.waitForLoadState("load", { timeout: 5000 }).catch(() => {});
    await loaded.settle(500, stretchedWait(loaded, 5000, 10_000));
    await Promise.all(pending);
    detach();
    record.refused = [...loaded.blocked];
    record.exceptions = loaded.log.pageErrors.slice(errorsBefore).map((error) => error.message);
    record.textAfter = String(await page.evaluate(VISIBLE_TEXT).catch(() => ""));
    const mutations = await page
      .evaluate("window.__qaasFormMutations === undefined ? -1 : window.__qaasFormMutations")
      .catch(() => -1);
    // -1: the document was replaced by a navigation, which changed the page all the same.
    record.domChanged = mutations !== 0;
    const navigated = record.sent.filter((each) => each.method === "GET").at(-1);
    if (navigated || page.url() !== url)
      record.landed = {
        url: page.url(),
        ...(navigated?.status !== undefined ? { status: navigated.status } : {}),
        title: await page.title().catch(() => ""),
      };
    record.screenshot = await page.screenshot({ timeout: 5000 }).catch(() => undefined);
    return record;
  } finally {
    detach();
    await closePage(session, loaded);
  }
}

function bodyOf(request: Request): { body?: string } {
  const body = request.postData();
  return body ? { body: body.slice(0, 4000) } : {};
}
