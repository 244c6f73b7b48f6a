import { z } from "zod";
import { readTargetFile, searchCode } from "../../probes/architecture/code-search.ts";
import { cycleDrafts, findCycles } from "../../probes/architecture/cycles.ts";
import { deadCodeDrafts, findDeadCode } from "../../probes/architecture/dead-code.ts";
import { findGodModules, godModuleDrafts } from "../../probes/architecture/god-modules.ts";
import type { GraphHandle } from "../../probes/architecture/graph-cache.ts";
import { ensureGraph } from "../../probes/architecture/graph-cache.ts";
import { checkLayering, layeringDrafts } from "../../probes/architecture/layering.ts";
import type { ToolContext } from "../context.ts";
import type { ToolResult } from "../result.ts";
import { err, fromProbe, ok } from "../result.ts";
import { defineTool } from "../tool.ts";

// The `code` server: the target's module graph and the four structural checks over it (each answers
// `{ candidates: EnvelopeDraft[], stats }` with evidence already stored as artifacts), plus bounded search
// and reading of the source. The answer key is never listed, searched or read.

async function withGraph(
  context: ToolContext,
  body: (handle: GraphHandle) => ToolResult,
): Promise<ToolResult> {
  const handle = await ensureGraph(context);
  if (typeof handle === "string") return err(handle);
  try {
    return body(handle);
  } catch (error) {
    return err(`${error instanceof Error ? error.message : String(error)}`);
  }
}

const importGraph = defineTool({
  name: "import_graph",
  server: "code",
  description:
    "Build (once per run) the import graph of the target's JavaScript/TypeScript and Python source and store it as an artifact. Answers its URI, counts, the largest and most-imported modules, and imports that did not resolve. The other code tools reuse it.",
  input: z.strictObject({
    rebuild: z.boolean().optional(),
    max_modules: z.number().int().min(0).max(2000).optional(),
  }),
  async run(input, context) {
    const handle = await ensureGraph(context, { rebuild: input.rebuild });
    if (typeof handle === "string") return err(handle);
    const { graph } = handle;
    const edgesByKind: Record<string, number> = {};
    for (const edge of graph.edges) edgesByKind[edge.kind] = (edgesByKind[edge.kind] ?? 0) + 1;
    const modules = [...graph.modules]
      .sort(
        (left, right) => right.fanIn + right.fanOut - (left.fanIn + left.fanOut) || right.lines - left.lines,
      )
      .slice(0, input.max_modules ?? 200)
      .map((module) => ({
        file: module.file,
        language: module.language,
        lines: module.lines,
        fan_in: module.fanIn,
        fan_out: module.fanOut,
        test: module.test,
      }));
    return ok({
      artifact: handle.uri,
      stats: {
        modules: graph.modules.length,
        tests: graph.modules.filter((module) => module.test).length,
        javascript: graph.modules.filter((module) => module.language === "javascript").length,
        python: graph.modules.filter((module) => module.language === "python").length,
        edges: graph.edges.length,
        edges_by_kind: edgesByKind,
        unresolved: graph.unresolved.length,
        external_packages: Object.keys(graph.externals).length,
        build_ms: handle.buildMs,
        truncated: graph.truncated,
        notes: graph.notes,
      },
      modules,
      unresolved: graph.unresolved.slice(0, 50),
    });
  },
});

const findCyclesTool = defineTool({
  name: "find_cycles",
  server: "code",
  description:
    "Import cycles: strongly connected components of two or more modules over load-time imports (type-only and deferred imports excluded). Answers candidate envelopes (circular-dependency) with the import lines of each loop as evidence.",
  input: z.strictObject({}),
  async run(_input, context) {
    return withGraph(context, ({ graph, uri }) => {
      const cycles = findCycles(graph);
      return ok({
        candidates: cycleDrafts(cycles, graph, context, uri),
        stats: {
          modules: graph.modules.length,
          load_time_edges: graph.edges.filter((edge) => edge.kind === "static").length,
          type_or_deferred_edges: graph.edges.filter((edge) => edge.kind === "type" || edge.kind === "lazy")
            .length,
          cycles: cycles.length,
          largest: Math.max(0, ...cycles.map((cycle) => cycle.files.length)),
        },
      });
    });
  },
});

const checkLayeringTool = defineTool({
  name: "check_layering",
  server: "code",
  description:
    "Layering violations against the profile's declared layers (outermost first), or layers inferred from folder names (routes/controllers/handlers → services/domain → db/repositories/models). Upward imports are violations; skipping a layer is one for inferred layers, or declared ones with strict: true.",
  input: z.strictObject({ strict: z.boolean().optional() }),
  async run(input, context) {
    return withGraph(context, ({ graph, uri }) => {
      const result = checkLayering(graph, context.target?.profile, { strict: input.strict });
      return ok({
        candidates: layeringDrafts(result, graph, context, uri),
        stats: {
          layers_source: result.model.source,
          layers: result.model.names,
          modules_in_layers: result.model.layerOf.size,
          violations: result.violations.length,
          tolerated_skips: result.toleratedSkips,
        },
      });
    });
  },
});

const findGodModulesTool = defineTool({
  name: "find_god_modules",
  server: "code",
  description:
    "God modules: lines ≥ max(400, p95) AND (fan-in ≥ max(8, p90) OR fan-out ≥ max(10, p95)), holding logic (≥ 8 functions, under half plain data). Floors can be raised or lowered.",
  input: z.strictObject({
    min_lines: z.number().int().positive().optional(),
    min_fan_in: z.number().int().positive().optional(),
    min_fan_out: z.number().int().positive().optional(),
  }),
  async run(input, context) {
    return withGraph(context, ({ graph, uri }) => {
      const found = findGodModules(graph, {
        ...(input.min_lines ? { minLines: input.min_lines } : {}),
        ...(input.min_fan_in ? { minFanIn: input.min_fan_in } : {}),
        ...(input.min_fan_out ? { minFanOut: input.min_fan_out } : {}),
      });
      return ok({
        candidates: godModuleDrafts(found.godModules, graph, context, uri),
        stats: { limits: found.limits, considered: found.considered, god_modules: found.godModules.length },
      });
    });
  },
});

const findDeadCodeTool = defineTool({
  name: "find_dead_code",
  server: "code",
  description:
    "Dead modules: application modules no entry point reaches (package.json main/bin/exports/scripts, profile entry_points, framework conventions, tests). Answers candidate envelopes (dead-code) and the entry points used.",
  input: z.strictObject({}),
  async run(_input, context) {
    return withGraph(context, ({ graph, uri }) => {
      const result = findDeadCode(graph, context.target?.profile);
      return ok({
        candidates: deadCodeDrafts(result, graph, context, uri),
        stats: {
          entry_points: result.entries.length,
          entries: result.entries.slice(0, 40),
          reachable: result.reachable,
          considered: result.considered,
          dead_groups: result.groups.length,
          doubt: result.doubt ?? null,
          notes: result.notes.slice(0, 40),
        },
      });
    });
  },
});

const searchCodeTool = defineTool({
  name: "search_code",
  server: "code",
  description:
    "Search the target's source and text files for a string (or a regular expression with regex: true). Answers up to max_results (≤ 200) matches with file and line. path limits the search to a folder or glob.",
  input: z.strictObject({
    query: z.string().min(1).max(200),
    regex: z.boolean().optional(),
    case_sensitive: z.boolean().optional(),
    path: z.string().max(300).optional(),
    max_results: z.number().int().min(1).max(200).optional(),
  }),
  async run(input, context) {
    const root = context.target?.root;
    if (root === undefined)
      return err("the target has no source root: set source.path in the target profile");
    return fromProbe(
      searchCode(root, {
        query: input.query,
        regex: input.regex,
        caseSensitive: input.case_sensitive,
        path: input.path,
        maxResults: input.max_results,
        answerKey: context.target?.goldenLedger,
      }),
    );
  },
});

const readFileTool = defineTool({
  name: "read_file",
  server: "code",
  description:
    "Read one file of the target (path relative to the target root), from start_line for up to max_lines (≤ 2000) lines.",
  input: z.strictObject({
    path: z.string().min(1).max(1000),
    start_line: z.number().int().positive().optional(),
    max_lines: z.number().int().min(1).max(2000).optional(),
  }),
  actions: (input) => [{ kind: "read_file", path: input.path }],
  async run(input, context) {
    const root = context.target?.root;
    if (root === undefined)
      return err("the target has no source root: set source.path in the target profile");
    return fromProbe(
      readTargetFile(root, {
        path: input.path,
        startLine: input.start_line,
        maxLines: input.max_lines,
        answerKey: context.target?.goldenLedger,
      }),
    );
  },
});

export const codeTools = [
  importGraph,
  findCyclesTool,
  checkLayeringTool,
  findGodModulesTool,
  findDeadCodeTool,
  searchCodeTool,
  readFileTool,
];
