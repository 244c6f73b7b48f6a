import { z } from "zod";
import { authzMatrix } from "../../probes/auditor/authz-matrix.ts";
import { surfaceBudget } from "../../probes/http/run-http.ts";
import { probeActions, runProbeTool } from "../../probes/session/probe-run.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";
import { ProbeFilter } from "./contract-server.ts";

export const authzMatrixTool = defineTool({
  name: "authz_matrix",
  server: "authz",
  description:
    "Authentication and authorization matrix: for resources one profile user owns (created by the probe — under their parent when only a nested collection creates them — or found in that user's lists and answers), replay every item operation as a peer of the same role, another tenant, a lower role (ranked by role name: superuser/owner > admin > manager/staff > member/user > viewer/guest) and anonymous; compare the data returned with the owner's (same data = leak, never status alone; writes judged by the owner's next read; items the outsider's own lists show are shared on purpose). Collections: anonymous vs signed-in. Vertical: each read as the most privileged and the least privileged user of the SAME tenant; same data on an evidently privileged operation (admin words in path/tags/id/summary, a documented 403, or a refused sibling) is missing-authorization. Forged tokens: when sessions are JWTs, `alg: none` and an altered payload under the original signature are replayed to an authenticated read (broken-authentication when accepted). `security: []` operations are public on purpose. Answers { candidates (missing-authentication / missing-authorization / broken-authentication), stats }.",
  input: z.strictObject({
    operation: ProbeFilter.operation,
    /** The owner whose resources are replayed (default: the least privileged non-admin user). */
    user: ProbeFilter.user,
    max_requests: ProbeFilter.max_requests,
  }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "authz_matrix",
      { max_requests: input.max_requests ?? surfaceBudget(context, 1500) },
      (run) => authzMatrix(run, input),
    ),
});

export const authzTools: ToolDefinition[] = [authzMatrixTool];
