import { z } from "zod";
import { timeEndpoints } from "../../probes/load/endpoint-timing.ts";
import { measureQueryGrowth } from "../../probes/load/query-growth.ts";
import { probeRedos } from "../../probes/load/redos.ts";
import { probeUnbounded } from "../../probes/load/unbounded.ts";
import { findUnindexed } from "../../probes/load/unindexed.ts";
import { probeActions } from "../../probes/session/probe-run.ts";
import { fromProbe } from "../result.ts";
import { defineTool, type ToolDefinition } from "../tool.ts";

// The load server: how cost grows with data. Each tool drives the live target within its request cap
// (and the agent's budget), creates only data it owns (where writes are allowed) and removes it after,
// and answers `{ candidates, stats }` with the measurements written as artifacts.

const Operation = z
  .string()
  .optional()
  .describe("limit to one operation: `METHOD /path`, a path or an operation id");
const MaxRequests = z.number().int().positive().max(2000).optional();

const measureQueryGrowthTool = defineTool({
  name: "measure_query_growth",
  server: "load",
  description:
    "Count the SQL statements (from the statement log) each list operation runs at two sizes (limit small/large, or before/after creating items the probe owns — for a list under a parent, all of them under one parent of its own), minimum of `samples` runs each, the larger point measured twice. Statements growing with the items returned (Δqueries ≥ 0.8 × Δitems) is an N+1: answers n-plus-one candidates naming the repeated statement.",
  input: z.strictObject({
    operation: Operation,
    small: z.number().int().positive().max(50).optional(),
    large: z.number().int().positive().max(200).optional(),
    create: z.number().int().min(0).max(25).optional(),
    samples: z.number().int().min(1).max(5).optional(),
    max_operations: z.number().int().positive().max(100).optional(),
    max_requests: MaxRequests,
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await measureQueryGrowth(context, input));
  },
});

const probeUnboundedTool = defineTool({
  name: "probe_unbounded",
  server: "load",
  description:
    "Find list operations that return everything: a documented limit/page-size parameter that is ignored (limit=1 answers the full set), or no page size at all with a list that grows by every item the probe adds (at most 25, removed after) and a SELECT without LIMIT. Answers unbounded-result candidates.",
  input: z.strictObject({
    operation: Operation,
    create: z.number().int().min(0).max(25).optional(),
    max_operations: z.number().int().positive().max(100).optional(),
    max_requests: MaxRequests,
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await probeUnbounded(context, input));
  },
});

const findUnindexedTool = defineTool({
  name: "find_unindexed",
  server: "load",
  description:
    "Send each read operation once (and once with its documented filters), collect the statements it runs from the statement log, and EXPLAIN each distinct one read-only. A full scan of a table filtered on a column no index starts with is an unindexed-query candidate at the operation that ran it.",
  input: z.strictObject({
    operation: Operation,
    max_operations: z.number().int().positive().max(100).optional(),
    max_requests: MaxRequests,
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await findUnindexed(context, input));
  },
});

const timeEndpointsTool = defineTool({
  name: "time_endpoints",
  server: "load",
  description:
    "Time each read operation `samples` times after a discarded warm-up; an operation whose median exceeds the profile's slow_endpoint_ms (or `budget_ms`) is timed again and reported only when the second round agrees. Times operations the run already paces as slow. With `writes`, times instead the creates and actions the run's other probes saw answer slowly, twice each, alone and with fresh values on records of the probe's own (targets that allow writes only). Answers slow-endpoint candidates.",
  input: z.strictObject({
    operation: Operation,
    writes: z.boolean().optional(),
    samples: z.number().int().min(2).max(7).optional(),
    budget_ms: z.number().positive().optional(),
    max_operations: z.number().int().positive().max(100).optional(),
    max_requests: MaxRequests,
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await timeEndpoints(context, input));
  },
});

const probeRedosTool = defineTool({
  name: "probe_redos",
  server: "load",
  description:
    "Look for regular expressions that backtrack catastrophically (ReDoS) behind fields a pattern checks (email, URL, phone, username…): a run of letters ending in a character no pattern accepts grows two letters at a time until an answer is slow, then a same-length control and a repeat confirm it. Never edits records it did not create. Answers slow-endpoint candidates.",
  input: z.strictObject({
    operation: Operation,
    max_fields: z.number().int().positive().max(40).optional(),
    max_requests: MaxRequests,
  }),
  actions: (_input, context) => probeActions(context),
  async run(input, context) {
    return fromProbe(await probeRedos(context, input));
  },
});

export const loadTools: ToolDefinition[] = [
  measureQueryGrowthTool,
  probeUnboundedTool,
  findUnindexedTool,
  timeEndpointsTool,
  probeRedosTool,
];
