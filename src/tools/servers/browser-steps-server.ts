import { z } from "zod";
import type { GuardedAction } from "../../guardrails/actions.ts";
import { checkAction } from "../../guardrails/check.ts";
import { currentTab, showsCreatedRecord, tabFor } from "../../probes/browser/agent-tab.ts";
import { destructiveReason } from "../../probes/browser/destructive-controls.ts";
import { describeMatches, locatorFor } from "../../probes/browser/locate.ts";
import { actOn, type StepAction } from "../../probes/browser/step-act.ts";
import { crawlRendered } from "../../probes/browser/step-crawl.ts";
import {
  axeSummary,
  expectOnPage,
  navigateTab,
  startTrace,
  stopTrace,
} from "../../probes/browser/step-page.ts";
import { probeTargetOf } from "../../probes/http/run-http.ts";
import { joinUrl } from "../../probes/http/target-url.ts";
import { resolveSecret } from "../../targets/secrets.ts";
import type { ToolContext } from "../context.ts";
import { err, ok } from "../result.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";

// The `browser` server's step tools: what a model seat drives a real Chromium with, one step at a time,
// as one role at one width (see agent-tab.ts). Every step is a guarded action: navigation is a request to
// the target (its origin only), and operating a control that signs out, deletes or spends is refused
// unless the page shows a record the run created — judged before the call from what the agent named, and
// again on the element actually found, whatever it was called by.

const Locator = z
  .strictObject({
    role: z.string().min(1).max(40).optional(),
    name: z.string().min(1).max(200).optional(),
    test_id: z.string().min(1).max(200).optional(),
    text: z.string().min(1).max(200).optional(),
    exact: z.boolean().optional(),
  })
  .refine((spec) => spec.role || spec.name || spec.test_id || spec.text, {
    message: "name the element by role (and name), name (its label), test_id or text",
  });

const Width = z.enum(["desktop", "mobile"]).optional();

function targetUrl(context: ToolContext, path: string): string {
  const target = probeTargetOf(context);
  const base =
    typeof target === "string" ? (context.target?.profile.environment.base_url ?? "") : target.baseUrl;
  return /^[a-z]+:\/\//i.test(path) ? path : joinUrl(base, path);
}

/** The page an action happens on: the agent's tab, else the target's base URL. */
function pageUrl(context: ToolContext): string {
  const tab = currentTab(context);
  return typeof tab === "string" ? targetUrl(context, "/") : tab.page.url();
}

function uiAction(
  context: ToolContext,
  action: string,
  control: string,
  name?: string,
  href?: string,
): GuardedAction {
  const url = pageUrl(context);
  return {
    kind: "ui_action",
    action,
    control,
    url,
    destructive: destructiveReason(name, href),
    createdByRun: showsCreatedRecord(context, url),
  };
}

const navigate = defineTool({
  name: "navigate",
  server: "browser",
  description:
    "Open a page of the target in Chromium as a role (default: the current one, else anonymous) at desktop or mobile width, and wait until its network is quiet. Answers the status, final URL, title, and the console errors, uncaught exceptions and failed requests the page produced.",
  input: z.strictObject({
    path: z.string().min(1).max(2000).describe("a path of the target (/projects) or a URL of its origin"),
    as: z.string().min(1).max(100).optional().describe("role (or anonymous) to browse as"),
    width: Width,
  }),
  actions: (input, context) => [{ kind: "http_request", method: "GET", url: targetUrl(context, input.path) }],
  run: async (input, context) => {
    const tab = await tabFor(context, input.as, input.width);
    if (typeof tab === "string") return err(tab);
    return ok(await navigateTab(tab, targetUrl(context, input.path)));
  },
});

const locate = defineTool({
  name: "locate",
  server: "browser",
  description:
    "Find elements on the current page by role and accessible name, else test id, else visible text (in that order). Answers how many match and, for the first few, their role, name, tag, visibility and whether they are enabled.",
  input: z.strictObject({ target: Locator }),
  run: async (input, context) => {
    const tab = currentTab(context);
    if (typeof tab === "string") return err(tab);
    const locator = locatorFor(tab.page, input.target);
    return ok({ count: await locator.count(), elements: await describeMatches(locator) });
  },
});

const act = defineTool({
  name: "act",
  server: "browser",
  description:
    "Operate one element of the current page: click, fill (text by `value`, a credential only by `secret_ref`), select an option, check, uncheck, or press a key. Answers what happened: URL before and after, requests the page sent, dialogs, downloads, whether the page changed. Controls that sign out, delete or spend are refused unless the page shows a record this run created.",
  input: z.strictObject({
    action: z.enum(["click", "fill", "select", "check", "uncheck", "press"]),
    target: Locator,
    value: z.string().max(5000).optional().describe("text to fill, option to select, or key to press"),
    secret_ref: z
      .string()
      .regex(/^secret_ref:[A-Z_][A-Z0-9_]*$/)
      .optional()
      .describe("fill a credential from the environment (never write one in `value`)"),
  }),
  actions: (input, context) => [
    uiAction(context, input.action, JSON.stringify(input.target), input.target.name ?? input.target.text),
  ],
  run: async (input, context) => {
    const tab = currentTab(context);
    if (typeof tab === "string") return err(tab);
    if (input.value !== undefined && isProfileSecret(context, input.value))
      return err("that value is a credential of the profile: pass it as secret_ref, never as text");
    let value = input.value;
    if (input.secret_ref) {
      try {
        value = resolveSecret(input.secret_ref, process.env, "act");
      } catch (error) {
        return err(error instanceof Error ? error.message : String(error));
      }
    }
    const step: StepAction = { action: input.action, target: input.target, value };
    return actOn(context, tab, step, (found) => {
      // The element actually found is judged too: a test id or text can name a sign-out button.
      const decision = checkAction(
        context.agent,
        uiAction(context, input.action, found.description, found.name, found.href),
        context,
      );
      return decision.allowed ? undefined : decision.reason;
    });
  },
});

const expectStep = defineTool({
  name: "expect",
  server: "browser",
  description:
    "Check the current page within a timeout: a text is shown, an element is visible (by role+name, test id or text), or the URL contains a string. Answers verdict pass or fail with a code (EXPECT_TEXT_MISSING, EXPECT_ELEMENT_MISSING, EXPECT_URL_MISMATCH) and what was there instead.",
  input: z
    .strictObject({
      text: z.string().min(1).max(500).optional(),
      element: Locator.optional(),
      url_contains: z.string().min(1).max(2000).optional(),
      timeout_ms: z.number().int().min(100).max(15_000).optional(),
    })
    .refine((input) => input.text || input.element || input.url_contains, {
      message: "say what to expect: text, element or url_contains",
    }),
  run: async (input, context) => {
    const tab = currentTab(context);
    if (typeof tab === "string") return err(tab);
    return ok(await expectOnPage(tab, input));
  },
});

const accessibilityTree = defineTool({
  name: "accessibility_tree",
  server: "browser",
  description:
    "The current page as assistive technology reads it: the ARIA snapshot (roles, accessible names, states) of the whole page or of one element — what to locate elements by, and what a screen-reader user gets.",
  input: z.strictObject({
    within: Locator.optional(),
    max_chars: z.number().int().min(200).max(50_000).optional(),
  }),
  run: async (input, context) => {
    const tab = currentTab(context);
    if (typeof tab === "string") return err(tab);
    const root = input.within ? locatorFor(tab.page, input.within).first() : tab.page.locator("body");
    const snapshot = await root.ariaSnapshot({ timeout: 5000 });
    const limit = input.max_chars ?? 8000;
    return ok({
      url: tab.page.url(),
      tree: snapshot.length > limit ? `${snapshot.slice(0, limit)}\n…` : snapshot,
      truncated: snapshot.length > limit,
    });
  },
});

const screenshot = defineTool({
  name: "screenshot",
  server: "browser",
  description:
    "Take a PNG screenshot of the current page (the viewport, or the full page) and store it as an artifact.",
  input: z.strictObject({ full_page: z.boolean().optional(), label: z.string().max(80).optional() }),
  run: async (input, context) => {
    const tab = currentTab(context);
    if (typeof tab === "string") return err(tab);
    const png = await tab.page.screenshot({ fullPage: input.full_page ?? false });
    const name = `browser/${context.agent.name.toLowerCase()}-${(input.label ?? "page").replace(/[^a-z0-9]+/gi, "-")}-${Date.now()}.png`;
    return ok({ url: tab.page.url(), artifact: context.putArtifact(name, png) });
  },
});

const axe = defineTool({
  name: "axe",
  server: "browser",
  description:
    "Scan the current page with axe-core (WCAG 2 A and AA rules). Answers the violations of the impacts asked for (default serious and critical), one entry per rule with its help text and the first affected elements.",
  input: z.strictObject({
    impacts: z
      .array(z.enum(["minor", "moderate", "serious", "critical"]))
      .min(1)
      .optional(),
  }),
  run: async (input, context) => {
    const tab = currentTab(context);
    if (typeof tab === "string") return err(tab);
    return ok(await axeSummary(tab, input.impacts ?? ["serious", "critical"]));
  },
});

const trace = defineTool({
  name: "trace",
  server: "browser",
  description:
    "Start or stop a Playwright trace of the current role's browser context (screenshots, DOM snapshots, network); stopping stores the trace zip as an artifact, viewable with `npx playwright show-trace`.",
  input: z.strictObject({ action: z.enum(["start", "stop"]) }),
  run: async (input, context) => {
    const tab = currentTab(context);
    if (typeof tab === "string") return err(tab);
    if (input.action === "start") return ok(await startTrace(tab));
    const zip = await stopTrace(tab);
    if (typeof zip === "string") return err(zip);
    return ok({
      artifact: context.putArtifact(
        `browser/${context.agent.name.toLowerCase()}-trace-${Date.now()}.zip`,
        zip,
      ),
    });
  },
});

const crawl = defineTool({
  name: "crawl",
  server: "browser",
  description:
    "From a page (default the UI entry), follow the same-origin links the rendered pages show, as a role, breadth first (never sign-out or delete links). Answers each page reached: path, status, title, and how many links and forms it offers.",
  input: z.strictObject({
    from: z.string().min(1).max(2000).optional(),
    as: z.string().min(1).max(100).optional(),
    max_pages: z.number().int().min(1).max(100).optional(),
  }),
  actions: (input, context) => [
    {
      kind: "http_request",
      method: "GET",
      url: targetUrl(context, input.from ?? context.target?.profile.ui?.entry ?? "/"),
    },
  ],
  run: async (input, context) => {
    const tab = await tabFor(context, input.as, undefined);
    if (typeof tab === "string") return err(tab);
    const from = targetUrl(context, input.from ?? context.target?.profile.ui?.entry ?? "/");
    return ok(await crawlRendered(tab, from, input.max_pages ?? 25));
  },
});

function isProfileSecret(context: ToolContext, value: string): boolean {
  for (const user of context.target?.profile.users ?? []) {
    if (!user.password) continue;
    try {
      if (resolveSecret(user.password) === value) return true;
    } catch {
      // An unresolvable secret cannot be the value given.
    }
  }
  return false;
}

export const browserStepTools: ToolDefinition[] = [
  navigate,
  locate,
  act,
  expectStep,
  accessibilityTree,
  screenshot,
  axe,
  trace,
  crawl,
];
