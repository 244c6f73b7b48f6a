import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { architectureDraft, shortId } from "./graph-cache.ts";
import type { ImportGraph, ModuleNode } from "./import-graph.ts";
import { IMPORT_KINDS } from "./import-graph.ts";

// god-module: a module far above the codebase's own norms in size AND in coupling, that holds logic.
//   lines   ≥ max(400, p95 of module lines)                        (non-blank lines)
//   AND ( fan-in ≥ max(8, p90 of fan-in)  OR  fan-out ≥ max(10, p95 of fan-out) )
//   AND it holds logic: ≥ 8 functions/methods and under half its lines plain data.
// Percentiles are over application modules (tests, tool configuration and .d.ts files left out); fan-in
// counts distinct non-test importers. Size alone is not enough, and a big table of constants, a schema
// or a file of type declarations is not a god module however many modules read it.

export interface GodModuleThresholds {
  minLines: number;
  minFanIn: number;
  minFanOut: number;
  minFunctions: number;
  maxDataShare: number;
}

export const DEFAULT_THRESHOLDS: GodModuleThresholds = {
  minLines: 400,
  minFanIn: 8,
  minFanOut: 10,
  minFunctions: 8,
  maxDataShare: 0.5,
};

export interface GodModule {
  module: ModuleNode;
  reasons: string[];
  limits: { lines: number; fanIn: number; fanOut: number };
}

/** Nearest-rank percentile of `values` (0 for none). */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.max(1, Math.ceil(fraction * sorted.length));
  return sorted[rank - 1]!;
}

export function findGodModules(
  graph: ImportGraph,
  overrides: Partial<GodModuleThresholds> = {},
): { godModules: GodModule[]; limits: GodModule["limits"]; considered: number } {
  const thresholds = { ...DEFAULT_THRESHOLDS, ...overrides };
  const application = graph.modules.filter((module) => !module.test && !module.config && !module.declaration);
  const limits = {
    lines: Math.max(
      thresholds.minLines,
      percentile(
        application.map((module) => module.lines),
        0.95,
      ),
    ),
    fanIn: Math.max(
      thresholds.minFanIn,
      percentile(
        application.map((module) => module.fanIn),
        0.9,
      ),
    ),
    fanOut: Math.max(
      thresholds.minFanOut,
      percentile(
        application.map((module) => module.fanOut),
        0.95,
      ),
    ),
  };
  const godModules: GodModule[] = [];
  for (const module of application) {
    if (module.lines < limits.lines) continue;
    const coupledIn = module.fanIn >= limits.fanIn;
    const coupledOut = module.fanOut >= limits.fanOut;
    if (!coupledIn && !coupledOut) continue;
    const dataShare = module.lines === 0 ? 1 : module.dataLines / module.lines;
    if (module.functions < thresholds.minFunctions || dataShare >= thresholds.maxDataShare) continue;
    const reasons = [`${module.lines} lines (limit ${limits.lines})`];
    if (coupledIn) reasons.push(`imported by ${module.fanIn} modules (limit ${limits.fanIn})`);
    if (coupledOut) reasons.push(`imports ${module.fanOut} modules (limit ${limits.fanOut})`);
    reasons.push(`${module.functions} functions`);
    godModules.push({ module, reasons, limits });
  }
  return { godModules, limits, considered: application.length };
}

export function godModuleDrafts(
  found: readonly GodModule[],
  graph: ImportGraph,
  context: ToolContext,
  graphUri: string,
): EnvelopeDraft[] {
  return found.map(({ module, reasons, limits }) => {
    const importers = graph.edges
      .filter((edge) => edge.to === module.file && IMPORT_KINDS.has(edge.kind))
      .map((edge) => edge.from);
    const imports = graph.edges
      .filter((edge) => edge.from === module.file && IMPORT_KINDS.has(edge.kind))
      .map((edge) => edge.to);
    const detailUri = context.putArtifact(
      `architecture/god-module-${shortId(module.file)}.json`,
      `${JSON.stringify(
        {
          file: module.file,
          lines: module.lines,
          functions: module.functions,
          data_lines: module.dataLines,
          fan_in: module.fanIn,
          fan_out: module.fanOut,
          limits,
          importers: [...new Set(importers)].sort(),
          imports: [...new Set(imports)].sort(),
        },
        null,
        2,
      )}\n`,
    );
    return architectureDraft({
      defectClass: "god-module",
      title: `${module.file} is a god module (${reasons.slice(0, 3).join(", ")})`,
      summary:
        `${module.file} is far above this codebase's norms: ${reasons.join("; ")}. It holds logic, not data, ` +
        "so every change to any of its concerns touches a module most of the code depends on. Split it by " +
        "responsibility, starting with the functions only some of its importers use.",
      file: module.file,
      related: [],
      graphUri,
      detailUri,
      detailDescription: "size, function count, fan-in and fan-out against this codebase's percentiles",
      steps: [
        `Count the non-blank lines of ${module.file}: ${module.lines}.`,
        `List its importers (${module.fanIn}) and its imports (${module.fanOut}) in the graph artifact.`,
        `Compare with the limits computed from this codebase: ${limits.lines} lines, fan-in ${limits.fanIn}, fan-out ${limits.fanOut}.`,
      ],
      impact:
        "Changes concentrate in one file many modules depend on: merge conflicts, wide blast radius and slow reviews.",
      severity: "medium",
      confidence: 0.75,
      fixArea: module.file,
    });
  });
}
