import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { readText } from "./code-files.ts";
import type { ImportGraph } from "./import-graph.ts";
import { buildImportGraph, graphArtifact } from "./import-graph.ts";

// One import graph per target root and run, built on first use and shared by every code tool (a model that
// calls find_cycles after import_graph does not pay for a second build), with its artifact written once.

export interface GraphHandle {
  graph: ImportGraph;
  /** `artifact://<run>/architecture/import-graph.json` */
  uri: string;
  /** Milliseconds the build took (0 when reused). */
  buildMs: number;
}

/** The graph of the target's source, or why there is none. */
export async function ensureGraph(
  context: ToolContext,
  options: { rebuild?: boolean } = {},
): Promise<GraphHandle | string> {
  const root = context.target?.root;
  if (root === undefined) {
    return "the target has no source root: set source.path (or source.git_url) in the target profile";
  }
  const key = `architecture:graph:${root}`;
  const cached = context.shared.get(key) as GraphHandle | undefined;
  if (cached && !options.rebuild) return { ...cached, buildMs: 0 };
  const started = performance.now();
  const graph = await buildImportGraph(root, { answerKey: context.target?.goldenLedger });
  const uri = context.putArtifact(
    "architecture/import-graph.json",
    `${JSON.stringify(graphArtifact(graph), null, 2)}\n`,
  );
  const handle: GraphHandle = { graph, uri, buildMs: Math.round(performance.now() - started) };
  context.shared.set(key, handle);
  return handle;
}

/** The text of one line of a file of the graph (for quoting an import), trimmed. */
export function sourceLine(graph: ImportGraph, file: string, line: number): string {
  if (line <= 0) return "";
  const text = readText(graph.root, file);
  return text?.split("\n")[line - 1]?.trim() ?? "";
}

/** A short stable id for artifact names. */
export function shortId(text: string): string {
  let hash = 2166136261;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 16777619);
  }
  return (hash >>> 0).toString(36);
}

export interface ArchitectureDraftInput {
  defectClass: "circular-dependency" | "layering-violation" | "god-module" | "dead-code";
  title: string;
  summary: string;
  file: string;
  related: string[];
  graphUri: string;
  /** The finding's own artifact (quoted import lines, metrics). */
  detailUri: string;
  detailDescription: string;
  steps: string[];
  impact: string;
  severity: EnvelopeDraft["severity"];
  confidence: number;
  discriminator?: string;
  fixArea?: string;
}

export function architectureDraft(input: ArchitectureDraftInput): EnvelopeDraft {
  const related = [...new Set(input.related.filter((file) => file !== input.file))];
  return {
    domain: "architecture",
    defect_class: input.defectClass,
    title: input.title.length > 200 ? `${input.title.slice(0, 197)}...` : input.title,
    summary: input.summary,
    location: {
      kind: "file",
      value: input.file,
      ...(related.length > 0 ? { related: related.map((value) => ({ kind: "file" as const, value })) } : {}),
    },
    evidence: [
      { kind: "artifact", description: input.detailDescription, uri: input.detailUri },
      {
        kind: "artifact",
        description: "the import graph of the target (modules, edges, metrics)",
        uri: input.graphUri,
      },
    ],
    reproduction: { steps: input.steps },
    impact: input.impact,
    severity: input.severity,
    confidence: input.confidence,
    suggested_fix_area: input.fixArea ?? input.file,
    ...(input.discriminator ? { dedupe: { discriminator: input.discriminator } } : {}),
  };
}
