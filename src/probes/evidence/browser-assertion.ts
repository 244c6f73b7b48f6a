// A reproduction whose proof is only visible in a browser (a stored value the page's own script inserts as
// markup) still starts with plain HTTP steps; this helper, appended to the generated `node --test` file
// only when such an assertion is used, opens the page in Chromium as the step's user, lets its requests
// settle and counts the elements of a tag. Only such tests import playwright-core (a static import, which
// the test runner looks for to link the driver qaas browses with); the others keep needing nothing but Node.

/** Whether a rendered test needs the browser helper. */
export function needsBrowser(assertions: ReadonlyArray<{ kind: string }>): boolean {
  return assertions.some((assertion) => assertion.kind === "rendered_lacks_element");
}

export const BROWSER_IMPORT = 'import { chromium } from "playwright-core";';

/**
 * How a generated test gets its browser: a launch, as a person runs it, or a connection to the browser
 * server qaas keeps for its own runs of the tests (`QAAS_BROWSER_WS`), which spares a launch per run.
 */
export const OPEN_BROWSER = `process.env.QAAS_BROWSER_WS
    ? await chromium.connect(process.env.QAAS_BROWSER_WS)
    : await chromium.launch({
        executablePath: process.env.QAAS_CHROMIUM ?? "/usr/bin/chromium",
        args: ["--no-sandbox", "--disable-dev-shm-usage"],
      })`;

export const BROWSER_HELPERS = String.raw`
// Needs playwright-core and a Chromium (QAAS_CHROMIUM, default /usr/bin/chromium).
async function renderedElements(steps, path, user, tag) {
  const browser = ${OPEN_BROWSER};
  try {
    const headers = {};
    let url = new URL(fill(steps, path), BASE_URL).toString();
    if (user) {
      const session = await credential(user);
      url = applyCredential(headers, url, session.token, session.cookies);
    }
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const origin = new URL(url).origin;
    const cookie = headers.cookie ?? "";
    delete headers.cookie;
    const cookies = cookie.split(";").map((part) => part.trim()).filter((part) => part.includes("="))
      .map((part) => ({ name: part.slice(0, part.indexOf("=")), value: part.slice(part.indexOf("=") + 1), url: origin }));
    if (cookies.length > 0) await context.addCookies(cookies);
    // Other credentials (a bearer token) go to the target only, on the page's own requests too.
    if (Object.keys(headers).length > 0)
      await context.route((target) => target.origin === origin, (route) => route.continue({ headers: { ...route.request().headers(), ...headers } }));
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "load" });
    await page.waitForLoadState("networkidle", { timeout: 5000 }).catch(() => {});
    return await page.evaluate((name) => document.getElementsByTagName(name).length, fill(steps, tag));
  } finally {
    await browser.close();
  }
}
`;

/** The assertion line: no element of `tag` in the page `path` seen as `user`. */
export function renderedLacksElement(assertion: {
  page: string;
  as?: string;
  tag: string;
  message: string;
}): string {
  const args = [assertion.page, assertion.as ?? null, assertion.tag].map((value) => JSON.stringify(value));
  return `assert.equal(await renderedElements(steps, ${args.join(", ")}), 0, ${JSON.stringify(assertion.message)});`;
}
