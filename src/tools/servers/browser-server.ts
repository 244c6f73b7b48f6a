import { z } from "zod";
import { browsePages } from "../../probes/browser/browse-pages.ts";
import { probeDomXss } from "../../probes/browser/dom-xss.ts";
import { BROWSER_CHECKS } from "../../probes/browser/page-checks.ts";
import { submitForms } from "../../probes/browser/submit-forms.ts";
import { fromProbe } from "../result.ts";
import { defineTool } from "../tool.ts";
import { liveActions } from "./live-actions.ts";

// The `browser` server's deterministic pass: `browse_pages` opens the map's pages in the run's Chromium as
// each role and answers `{ candidates: EnvelopeDraft[], stats }`, every candidate confirmed on a second load
// and carrying a screenshot, what the browser recorded and a generated browser test.

/** A pass's time bound in seconds. */
function passSeconds(max: number, description: string) {
  return z.number().int().min(10).max(max).optional().describe(description);
}

const browsePagesTool = defineTool({
  name: "browse_pages",
  server: "browser",
  description:
    "Open every page of the system map in headless Chromium as each role (anonymous first; one page per path template) and check: console errors and uncaught exceptions (console), links and assets answering 404/410/5xx (links), serious/critical axe WCAG 2 A/AA violations (accessibility), visible buttons that do nothing when clicked (controls; destructive, sign-out and payment controls are never clicked, writes are blocked on targets that do not allow them), sideways overflow at phone width (layout), and the page's own fetch/XHR failing with 5xx (background). Each candidate is confirmed on a fresh load or a second request. Answers { candidates, stats }.",
  input: z.strictObject({
    roles: z
      .array(z.string().min(1).max(100))
      .max(20)
      .optional()
      .describe(
        "roles (or profile user names) to browse as; `anonymous` is one; default: anonymous and every profile role",
      ),
    max_pages: z.number().int().min(1).max(200).optional().describe("pages per role (default 30)"),
    max_seconds: passSeconds(
      1800,
      "the whole pass on an idle machine (default 120); up to 3× while pages load slowly, and up to 4× while other agents of the run still work and none waits for a slot",
    ),
    checks: z
      .array(z.enum(BROWSER_CHECKS))
      .min(1)
      .optional()
      .describe("a subset of the checks (default: all)"),
  }),
  actions: liveActions,
  run: async (input, context) => fromProbe(await browsePages(context, input)),
});

const submitFormsTool = defineTool({
  name: "submit_forms",
  server: "browser",
  description:
    "Walk the journeys of the map's pages in headless Chromium: each form (once per name and action, as the first role that sees it) is filled with valid values from its field types, constraints and labels, and submitted. misleading-copy: the page announces success while the request it sent failed; broken-journey: a 5xx behind the scenes, an error page, or a submission that does nothing. Confirmed by a second journey with fresh values. Only when the profile allows writes; never sign-in, upload, delete or payment forms, and updates of records the run did not create are refused in the browser. Answers { candidates, stats }.",
  input: z.strictObject({
    roles: z.array(z.string().min(1).max(100)).max(20).optional(),
    max_forms: z.number().int().min(1).max(100).optional().describe("forms tried (default 20)"),
    max_seconds: passSeconds(
      900,
      "the whole pass on an idle machine (default 45); up to 3× while pages load slowly",
    ),
  }),
  // A journey writes: the guardrails judge it as a POST to the target, refused where writes are not allowed.
  actions: (input, context) => liveActions(input, context).map((action) => ({ ...action, method: "POST" })),
  run: async (input, context) => fromProbe(await submitForms(context, input)),
});

const probeDomXssTool = defineTool({
  name: "probe_dom_xss",
  server: "browser",
  description:
    "Load each mapped page in Chromium with an inert marker in each query parameter its links carry and in the fragment (HTML, script-string and javascript: URL forms); a marker that runs, again on a fresh load with a new marker, and that the server did not echo itself is DOM-based XSS. Answers { candidates, stats }.",
  input: z.strictObject({
    max_pages: z.number().int().min(1).max(200).optional().describe("page templates tried (default 30)"),
    max_seconds: passSeconds(
      1800,
      "the whole pass on an idle machine (default 60); up to 3× while pages load slowly",
    ),
  }),
  actions: liveActions,
  run: async (input, context) => fromProbe(await probeDomXss(context, input)),
});

export const browserTools = [browsePagesTool, probeDomXssTool, submitFormsTool];
