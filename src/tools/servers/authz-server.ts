import { z } from "zod";
import { authzMatrix } from "../../probes/auditor/authz-matrix.ts";
import { probeActions, runProbeTool } from "../../probes/session/probe-run.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";
import { ProbeFilter } from "./contract-server.ts";

export const authzMatrixTool = defineTool({
  name: "authz_matrix",
  server: "authz",
  description:
    "Authentication and authorization matrix: for resources one profile user owns (created by the probe, or found in that user's list), replay every item operation as a peer of the same role, another tenant, a lower role (ranked by role name: superuser/owner > admin > manager/staff > member/user > viewer/guest) and anonymous; compare the data returned with the owner's (same data = leak, never status alone; writes judged by the owner's next read). Collections: anonymous vs signed-in, and for admin-marked operations the lowest role vs the highest. `security: []` operations are public on purpose. Answers { candidates (missing-authentication / missing-authorization), stats }.",
  input: z.strictObject({
    operation: ProbeFilter.operation,
    /** The owner whose resources are replayed (default: the least privileged non-admin user). */
    user: ProbeFilter.user,
    max_requests: ProbeFilter.max_requests,
  }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(context, "authz_matrix", { max_requests: input.max_requests ?? 1500 }, (run) =>
      authzMatrix(run, input),
    ),
});

export const authzTools: ToolDefinition[] = [authzMatrixTool];
