import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { ToolContext } from "../../tools/context.ts";
import { architectureDraft, shortId, sourceLine } from "./graph-cache.ts";
import type { ImportEdge, ImportGraph } from "./import-graph.ts";
import type { LayerModel } from "./layers.ts";
import { layerModel } from "./layers.ts";

// layering-violation. Each layer may import itself and the layers below it (further in).
// - Upward: a module importing a layer above it (data access importing a route) is always a violation.
// - Skipping: an outer module importing two or more layers down (a route reaching the database past the
//   services) is a violation when layers are inferred from folder names and the target is data access,
//   or when declared layers are strict. With inferred layers it is reported only when the bypass is the
//   exception: fewer than half of the outer modules that import lower layers do it, and the skipped layer
//   is in use by them. A codebase whose routes all talk to the database has no service layer to skip.
// Type-only imports count upward (the dependency is real) at a confidence below the filing threshold,
// and never for skipping. Tests, tool configuration and tooling scripts (seeders, migrations, programs run
// by themselves) are not layer code.

const TOOLING_NAME =
  /(^|[._-])(seeds?|seeder|seed-data|fixtures?|migrat\w*|reset|scripts?|setup|bootstrap|cli)([._-]|$)/i;

export interface LayerViolation {
  from: string;
  fromLayer: string;
  imports: Array<{ edge: ImportEdge; toLayer: string; kind: "upward" | "skipping" }>;
}

export interface LayeringResult {
  model: LayerModel;
  violations: LayerViolation[];
  /** Skipping imports seen but not reported because they are the norm. */
  toleratedSkips: number;
}

export function checkLayering(
  graph: ImportGraph,
  profile: TargetProfile | undefined,
  options: { strict?: boolean } = {},
): LayeringResult {
  const model = layerModel(graph, profile);
  const byFile = new Map(graph.modules.map((module) => [module.file, module]));
  const isLayerCode = (file: string): boolean => {
    const module = byFile.get(file);
    if (!module || module.test || module.config || module.main) return false;
    return !TOOLING_NAME.test(path.posix.basename(file));
  };
  const skipAllowed = model.source === "declared" && !options.strict;
  const upward: Array<{ edge: ImportEdge; from: number; to: number }> = [];
  const skipping: Array<{ edge: ImportEdge; from: number; to: number }> = [];
  for (const edge of graph.edges) {
    if (edge.kind === "reference" || !isLayerCode(edge.from)) continue;
    const from = model.layerOf.get(edge.from);
    const to = model.layerOf.get(edge.to);
    if (from === undefined || to === undefined || from === to) continue;
    if (from > to) upward.push({ edge, from, to });
    else if (to - from >= 2 && edge.kind !== "type" && !skipAllowed) {
      if (model.source === "declared" || model.dataAccess.has(edge.to)) skipping.push({ edge, from, to });
    }
  }

  // Skipping is judged against the codebase's own habit, per outer layer.
  const reportedSkips: typeof skipping = [];
  let toleratedSkips = 0;
  for (const layer of new Set(skipping.map((entry) => entry.from))) {
    const bypassers = new Set(
      skipping.filter((entry) => entry.from === layer).map((entry) => entry.edge.from),
    );
    const downward = new Set<string>();
    let throughNext = false;
    for (const edge of graph.edges) {
      if (edge.kind === "reference" || edge.kind === "type" || !isLayerCode(edge.from)) continue;
      const from = model.layerOf.get(edge.from);
      const to = model.layerOf.get(edge.to);
      if (from !== layer || to === undefined || to <= layer) continue;
      downward.add(edge.from);
      if (to === layer + 1) throughNext = true;
    }
    const entries = skipping.filter((entry) => entry.from === layer);
    // A strict declaration is the team's own rule: every skip breaks it, however common.
    if (model.source === "declared" || (throughNext && bypassers.size * 2 < downward.size)) {
      reportedSkips.push(...entries);
    } else toleratedSkips += entries.length;
  }

  const grouped = new Map<string, LayerViolation>();
  const addViolation = (
    entry: { edge: ImportEdge; from: number; to: number },
    kind: "upward" | "skipping",
  ): void => {
    const violation = grouped.get(entry.edge.from) ?? {
      from: entry.edge.from,
      fromLayer: model.names[entry.from] ?? String(entry.from),
      imports: [],
    };
    if (!violation.imports.some((item) => item.edge.to === entry.edge.to)) {
      violation.imports.push({ edge: entry.edge, toLayer: model.names[entry.to] ?? String(entry.to), kind });
    }
    grouped.set(entry.edge.from, violation);
  };
  for (const entry of upward) addViolation(entry, "upward");
  for (const entry of reportedSkips) addViolation(entry, "skipping");
  const violations = [...grouped.values()].sort((left, right) => left.from.localeCompare(right.from));
  return { model, violations, toleratedSkips };
}

export function layeringDrafts(
  result: LayeringResult,
  graph: ImportGraph,
  context: ToolContext,
  graphUri: string,
): EnvelopeDraft[] {
  const { model } = result;
  return result.violations.map((violation) => {
    const quoted = violation.imports.map((item) => ({
      imported: item.edge.to,
      layer: item.toLayer,
      kind: item.kind,
      import_kind: item.edge.kind,
      line: item.edge.line,
      import: sourceLine(graph, violation.from, item.edge.line),
    }));
    const detailUri = context.putArtifact(
      `architecture/layering-${shortId(violation.from)}.json`,
      `${JSON.stringify(
        {
          file: violation.from,
          layer: violation.fromLayer,
          layers: model.names,
          layers_source: model.source,
          violations: quoted,
        },
        null,
        2,
      )}\n`,
    );
    const upward = violation.imports.filter((item) => item.kind === "upward");
    const typeOnly = violation.imports.every((item) => item.edge.kind === "type");
    const first = violation.imports[0]!;
    const what =
      first.kind === "upward"
        ? `imports ${first.edge.to} from the ${first.toLayer} layer above it`
        : `imports ${first.edge.to} from the ${first.toLayer} layer directly, skipping the layer between`;
    const source =
      model.source === "declared"
        ? "the layers the target profile declares"
        : "layers inferred from folder names";
    const summary =
      `${violation.from} (${violation.fromLayer} layer) ${what}` +
      (violation.imports.length > 1 ? `, and ${violation.imports.length - 1} more such import(s)` : "") +
      `. Judged against ${source} (outermost first: ${model.names.join(" → ")}); each layer may only import itself and the layers below it` +
      (upward.length === 0 ? ", through the next one" : "") +
      `. Move the logic it needs into the right layer, or invert the dependency.`;
    const confidence = typeOnly
      ? 0.65
      : model.source === "declared"
        ? 0.9
        : first.kind === "upward"
          ? 0.8
          : 0.75;
    return architectureDraft({
      defectClass: "layering-violation",
      title: `${violation.from} ${first.kind === "upward" ? "imports an outer layer" : "bypasses a layer"}: ${first.edge.to}`,
      summary,
      file: violation.from,
      related: violation.imports.map((item) => item.edge.to),
      graphUri,
      detailUri,
      detailDescription: "the offending import lines with the layer of each side",
      steps: quoted.map(
        (item) =>
          `${violation.from}:${item.line} (${violation.fromLayer}) imports ${item.imported} (${item.layer}): \`${item.import}\``,
      ),
      impact:
        "The layer boundary stops holding: rules enforced in one layer can be bypassed, and lower layers cannot change without breaking upper ones.",
      severity: "medium",
      confidence,
      fixArea: violation.from,
    });
  });
}
