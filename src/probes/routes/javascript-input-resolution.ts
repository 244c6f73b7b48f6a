import { exportedLocal, type JavaScriptFileModel } from "./javascript-file-model.ts";
import { dtoSchema } from "./javascript-nest-inputs.ts";
import { applySchema, type ReadSink, type SchemaLocation } from "./javascript-request-reads.ts";
import { type InputsDraft, RouteArgumentReader } from "./javascript-route-inputs.ts";
import { validatorSchema } from "./javascript-validators.ts";
import { type RouteInputs, RouteInputsBuilder } from "./route-inputs.ts";

// The second half of reading a route's inputs, once every file is parsed: handlers and schemas a route
// names from another file are looked up there, and whatever those import in turn, a few hops at most.

/** How far a chain of imports is followed for one route (a handler importing a schema: two hops). */
const MAX_DEFERRED_HOPS = 3;

/**
 * Route inputs with every deferred name looked up: handlers and schemas imported from other files of the
 * tree, and whatever those import in turn (a few hops at most).
 */
export function resolveInputs(
  draft: InputsDraft,
  modelOf: (file: string, specifier: string) => JavaScriptFileModel | undefined,
): RouteInputs {
  if (draft.deferred.length === 0) return draft.inputs;
  const builder = new RouteInputsBuilder().merge(draft.inputs);
  let pending = draft.deferred.map((entry) => ({ entry, hop: 1 }));
  const seen = new Set<string>();
  while (pending.length > 0) {
    const next: typeof pending = [];
    for (const { entry, hop } of pending) {
      const model = modelOf(entry.file, entry.reference.specifier);
      if (!model) continue;
      const key = `${entry.kind} ${model.file} ${entry.reference.exportName} ${entry.kind === "handler" ? entry.member : entry.location}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const sink: ReadSink = { builder, deferred: [] };
      if (entry.kind === "handler")
        new RouteArgumentReader(model, sink).collectExport(entry.reference.exportName, entry.member);
      else resolveSchema(model, entry.reference.exportName, entry.location, sink);
      if (hop < MAX_DEFERRED_HOPS)
        next.push(...sink.deferred.map((deferred) => ({ entry: deferred, hop: hop + 1 })));
    }
    pending = next;
  }
  return builder.build();
}

function resolveSchema(
  model: JavaScriptFileModel,
  exportName: string,
  location: SchemaLocation,
  sink: ReadSink,
): void {
  const local = exportedLocal(model, exportName === "*" ? "default" : exportName);
  const imported = model.bindings.imports.get(local);
  if (imported) {
    sink.deferred.push({ kind: "schema", file: model.file, reference: imported, location });
    return;
  }
  const declared = model.declarations.get(local);
  const schema = declared ? validatorSchema(declared, model.validators) : undefined;
  const klass = model.classes.get(local);
  const resolved = schema ?? (klass ? dtoSchema(model, klass) : undefined);
  if (resolved) applySchema(sink.builder, resolved, location);
}
