import { z } from "zod";
import { checkCopy } from "../../probes/guide/check-copy.ts";
import { checkNavigation } from "../../probes/guide/check-navigation.ts";
import { fromProbe } from "../result.ts";
import { defineTool } from "../tool.ts";
import { liveActions } from "./live-actions.ts";

// The `guide` server: GUIDE's deterministic usability checks against the live target. Each walks the UI
// from its entry as each role (in the run's browser when one is available) and answers
// `{ candidates: EnvelopeDraft[], stats }`, with the pages searched, an exchange and a screenshot stored as
// artifacts. Reading only: nothing is submitted, no sign-out or delete link is followed.

const common = {
  roles: z
    .array(z.string().min(1).max(100))
    .max(20)
    .optional()
    .describe("roles (or profile user names) to walk as; `anonymous` is one (default: every role)"),
  max_pages: z
    .number()
    .int()
    .min(1)
    .max(300)
    .optional()
    .describe("pages opened per role (default 80; a walk cut short flags no undiscoverable page)"),
  max_seconds: z.number().int().min(10).max(1800).optional().describe("the whole call (default 240)"),
  max_requests: z.number().int().min(10).max(5000).optional(),
};

const checkNavigationTool = defineTool({
  name: "check_navigation",
  server: "guide",
  description:
    "Walk the UI from its entry as each role (rendered DOM: script-built menus count) and compare it with the map's GET page routes. undiscoverable-feature: an HTML page that answers 200 when typed but that no reachable page links to and whose path no reachable page or loaded script mentions. dead-end: a reachable page with no link onward or back, no form, no navigation and no control, confirmed on a second page of its template or a fresh load.",
  input: z.strictObject(common),
  actions: liveActions,
  run: async (input, context) => fromProbe(await checkNavigation(context, input)),
});

const checkCopyTool = defineTool({
  name: "check_copy",
  server: "guide",
  description:
    "Read the help, FAQ and docs pages reachable from the UI entry for promises the application does not keep. misleading-copy: copy saying deleted items can be restored, undone or go to a trash, when no restore/undo/trash operation, route or page exists and (targets that allow writes only) a record the probe creates and deletes itself is really gone (404/410, absent from its list). Never deletes anything the probe did not create.",
  input: z.strictObject(common),
  actions: liveActions,
  run: async (input, context) => fromProbe(await checkCopy(context, input)),
});

export const guideTools = [checkNavigationTool, checkCopyTool];
