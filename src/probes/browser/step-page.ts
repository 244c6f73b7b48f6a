import { AxeBuilder } from "@axe-core/playwright";
import type { AgentTab } from "./agent-tab.ts";
import type { LocatorSpec } from "./locate.ts";
import { describeSpec, locatorFor } from "./locate.ts";

// Page-level steps: opening a page and reading what it did, checking what it shows, scanning it with axe,
// and tracing it. Answers are short enough for a model to read in one turn.

const QUIET_MS = 3000;

export async function navigateTab(tab: AgentTab, url: string) {
  const console = tab.log.console.length;
  const errors = tab.log.pageErrors.length;
  const network = tab.log.network.length;
  let status: number | null = null;
  let error: string | undefined;
  try {
    const response = await tab.page.goto(url, { waitUntil: "load", timeout: 15_000 });
    status = response?.status() ?? null;
    await tab.page.waitForLoadState("networkidle", { timeout: QUIET_MS }).catch(() => {});
  } catch (failure) {
    error = (failure instanceof Error ? failure.message : String(failure)).split("\n")[0];
  }
  const failed = tab.log.network
    .slice(network)
    .filter((entry) => entry.failure || (entry.status ?? 0) >= 400)
    .map((entry) => `${entry.method} ${entry.url} ${entry.failure ?? entry.status}`);
  return {
    as: tab.role,
    width: tab.viewport.name,
    status,
    url: tab.page.url(),
    title: await tab.page.title().catch(() => ""),
    ...(error ? { error } : {}),
    console_errors: tab.log.console
      .slice(console)
      // A resource that failed to load is answered under failed_requests, with its URL.
      .filter((entry) => entry.type === "error" && !entry.text.startsWith("Failed to load resource"))
      .slice(0, 5)
      .map((entry) => entry.text.slice(0, 300)),
    page_errors: tab.log.pageErrors.slice(errors, errors + 5).map((entry) => entry.message.slice(0, 300)),
    failed_requests: failed.slice(0, 10),
  };
}

export async function expectOnPage(
  tab: AgentTab,
  expected: { text?: string; element?: LocatorSpec; url_contains?: string; timeout_ms?: number },
) {
  const timeout = expected.timeout_ms ?? 3000;
  if (expected.url_contains) {
    const met = await tab.page
      .waitForURL((url) => url.href.includes(expected.url_contains!), { timeout })
      .then(() => true)
      .catch(() => false);
    if (!met) return { verdict: "fail", code: "EXPECT_URL_MISMATCH", detail: `the URL is ${tab.page.url()}` };
  }
  if (expected.text) {
    const shown = await tab.page
      .getByText(expected.text)
      .first()
      .waitFor({ state: "visible", timeout })
      .then(() => true)
      .catch(() => false);
    if (!shown) {
      const visible = (await tab.page.evaluate(() => document.body?.innerText ?? "").catch(() => ""))
        .replace(/\s+/g, " ")
        .slice(0, 300);
      return {
        verdict: "fail",
        code: "EXPECT_TEXT_MISSING",
        detail: `not shown; the page reads: ${visible}`,
      };
    }
  }
  if (expected.element) {
    const shown = await locatorFor(tab.page, expected.element)
      .first()
      .waitFor({ state: "visible", timeout })
      .then(() => true)
      .catch(() => false);
    if (!shown)
      return {
        verdict: "fail",
        code: "EXPECT_ELEMENT_MISSING",
        detail: `no visible ${describeSpec(expected.element)} on ${tab.page.url()}`,
      };
  }
  return { verdict: "pass", code: "OK", detail: `as expected on ${tab.page.url()}` };
}

export async function axeSummary(tab: AgentTab, impacts: readonly string[]) {
  const results = await new AxeBuilder({ page: tab.page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  const violations = results.violations
    .filter((violation) => impacts.includes(violation.impact ?? ""))
    .map((violation) => ({
      rule: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.length,
      targets: violation.nodes.slice(0, 5).map((node) => node.target.join(" ")),
    }));
  return { url: tab.page.url(), violations };
}

const tracing = new WeakSet<AgentTab["context"]>();

export async function startTrace(tab: AgentTab) {
  if (!tracing.has(tab.context)) {
    await tab.context.tracing.start({ screenshots: true, snapshots: true });
    tracing.add(tab.context);
  }
  return { tracing: true, as: tab.role };
}

export async function stopTrace(tab: AgentTab): Promise<Uint8Array | string> {
  if (!tracing.has(tab.context))
    return "no trace is running for this role: call trace with action start first";
  tracing.delete(tab.context);
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-trace-"));
  const file = path.join(folder, "trace.zip");
  try {
    await tab.context.tracing.stop({ path: file });
    return new Uint8Array(fs.readFileSync(file));
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}
