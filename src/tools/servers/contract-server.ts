import { z } from "zod";
import { checkContract } from "../../probes/api/contract-probe.ts";
import { contractTestFor } from "../../probes/api/contract-test.ts";
import { fuzzOperations } from "../../probes/api/fuzz-probe.ts";
import { operationKey, selectOperations } from "../../probes/api/operation-index.ts";
import { probeSemantics } from "../../probes/api/semantics-probe.ts";
import { findUndocumented } from "../../probes/api/undocumented-probe.ts";
import { REPRO_TEST_FOLDER } from "../../probes/evidence/finding.ts";
import { probeTargetOf, surfaceBudget } from "../../probes/http/run-http.ts";
import { probeActions, runProbeTool } from "../../probes/session/probe-run.ts";
import { err, ok } from "../result.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";

/** Filters every probe tool accepts. */
export const ProbeFilter = {
  /** One operation: `METHOD /path` (template), a path, or an operationId. All operations when absent. */
  operation: z.string().optional(),
  /** Probe as this profile user only. */
  user: z.string().optional(),
  /** Cap on requests for this call (never above what the agent has left). */
  max_requests: z.number().int().positive().optional(),
};

const ProbeInput = z.strictObject(ProbeFilter);

export const checkContractTool = defineTool({
  name: "check_contract",
  server: "contract",
  description:
    "For each documented operation, send a valid request built from the schema (as the least privileged user it accepts; resources created first when the path needs an id) and check status and body against the OpenAPI document (ajv). Answers { candidates: EnvelopeDraft[] (contract-drift, unhandled-error), stats }, evidence already written as artifacts.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "check_contract",
      { max_requests: input.max_requests ?? surfaceBudget(context, 1500) },
      (run) => checkContract(run, input),
    ),
});

export const fuzzOperationTool = defineTool({
  name: "fuzz_operation",
  server: "contract",
  description:
    "Send edge and invalid values generated from each operation's schemas (boundaries, empty, null, unicode, huge numbers, wrong types, long strings, missing fields, malformed JSON) plus a bounded property-based search shrunk to a minimal case. Also checks business values a page fixes: a hidden or read-only price the server stores as the request names it. Reports unhandled-error (5xx), validation-missing (invalid input accepted) and wrong-status, each confirmed by a resend.",
  input: z.strictObject({ ...ProbeFilter, property_runs: z.number().int().min(0).max(100).optional() }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "fuzz_operation",
      { max_requests: input.max_requests ?? surfaceBudget(context, 2500) },
      (run) => fuzzOperations(run, input),
    ),
});

export const probeSemanticsTool = defineTool({
  name: "probe_semantics",
  server: "contract",
  description:
    "HTTP-semantics oracles on resources the probe creates itself: deleted resource still readable, refused PUT/PATCH that changed the resource anyway, PUT not idempotent, list omitting a just-created item, unknown id answered 2xx/5xx, 403-vs-404 existence leaks.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_semantics",
      { max_requests: input.max_requests ?? surfaceBudget(context, 800) },
      (run) => probeSemantics(run, input),
    ),
});

export const findUndocumentedTool = defineTool({
  name: "find_undocumented",
  server: "contract",
  description:
    "Endpoints seen in source or by crawling that the OpenAPI document does not list (framework, static, documentation, health and debug routes ignored). GETs are confirmed live against a not-found baseline; writes are reported from source without being sent.",
  input: z.strictObject({ operation: ProbeFilter.operation, max_requests: ProbeFilter.max_requests }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "find_undocumented",
      { max_requests: input.max_requests ?? surfaceBudget(context, 300) },
      (run) => findUndocumented(run, input),
    ),
});

export const generateContractTestTool = defineTool({
  name: "generate_contract_test",
  server: "contract",
  description:
    "Write a runnable `node --test` contract test for one operation (creates the resources its path needs, then asserts a documented success status and the documented body shape). Sends nothing; answers the artifact URI, the suggested path in the target and the command.",
  input: z.strictObject({ operation: z.string().min(1), user: z.string().optional() }),
  async run(input, context) {
    const map = context.systemMap();
    if (!map) return err("generate_contract_test: no system map is pinned for this run yet");
    const [operation] = selectOperations(map, input.operation);
    if (!operation)
      return err(
        `generate_contract_test: no operation matches "${input.operation}"; use "METHOD /path" as in the system map`,
      );
    const target = probeTargetOf(context);
    const baseUrl = typeof target === "string" ? (map.base_url ?? "http://127.0.0.1:3000") : target.baseUrl;
    const { script, content } = contractTestFor(map, operation, context.target?.profile, baseUrl, input.user);
    const name = `contract-${operationKey(operation)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")}`;
    const uri = context.putArtifact(`generate_contract_test/${name}.test.mjs`, content);
    const path = `${REPRO_TEST_FOLDER}/${name}.test.mjs`;
    return ok({
      artifact: uri,
      path,
      command: `node --test ${path}`,
      title: script.title,
      assertions: script.assertions.length,
      content,
    });
  },
});

export const contractTools: ToolDefinition[] = [
  checkContractTool,
  fuzzOperationTool,
  probeSemanticsTool,
  findUndocumentedTool,
  generateContractTestTool,
];
