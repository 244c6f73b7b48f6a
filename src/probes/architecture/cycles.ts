import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { architectureDraft, shortId, sourceLine } from "./graph-cache.ts";
import type { ImportEdge, ImportGraph } from "./import-graph.ts";
import { adjacency } from "./import-graph.ts";
import type { ImportKind } from "./javascript-imports.ts";

// circular-dependency: strongly connected components (Tarjan) of two or more modules over LOAD-TIME
// imports only. Decision: `import type` (erased at compile time), `if TYPE_CHECKING:` imports, `import()`
// and imports inside functions (deferred until called) do not form a cycle a module loader runs into, so
// they are left out; a cycle through them is the usual, deliberate way to break one. Components made only
// of tests or tool configuration are not application structure and are not reported.

const LOAD_TIME: ReadonlySet<ImportKind> = new Set(["static"]);

export interface Cycle {
  /** Sorted member files: the component. */
  files: string[];
  /** One concrete loop through the component, starting and ending at `files[0]`. */
  path: string[];
  /** The import of each step of `path`. */
  steps: ImportEdge[];
}

/** Tarjan's algorithm, iterative (deep graphs must not overflow the stack); components of size ≥ 2. */
export function stronglyConnected(next: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  for (const start of [...next.keys()].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter);
    counter += 1;
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = next.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child]!;
        frame.child += 1;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter);
          counter += 1;
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length >= 2) components.push(component.sort());
      }
    }
  }
  return components.sort((left, right) => left[0]!.localeCompare(right[0]!));
}

/** The shortest loop from `start` back to itself inside `members` (breadth first, sorted neighbours). */
function shortestLoop(start: string, members: ReadonlySet<string>, next: Map<string, string[]>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  const seen = new Set([start]);
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const child of next.get(node) ?? []) {
      if (!members.has(child)) continue;
      if (child === start) {
        const loop = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = previous.get(at)) {
          loop.splice(1, 0, at);
        }
        return [...loop, start];
      }
      if (seen.has(child)) continue;
      seen.add(child);
      previous.set(child, node);
      queue.push(child);
    }
  }
  return [start];
}

export function findCycles(graph: ImportGraph): Cycle[] {
  const next = adjacency(graph, LOAD_TIME);
  const byFile = new Map(graph.modules.map((module) => [module.file, module]));
  const cycles: Cycle[] = [];
  for (const files of stronglyConnected(next)) {
    if (files.every((file) => byFile.get(file)?.test || byFile.get(file)?.config)) continue;
    const loop = shortestLoop(files[0]!, new Set(files), next);
    const steps: ImportEdge[] = [];
    for (let step = 0; step + 1 < loop.length; step += 1) {
      const edge = graph.edges.find(
        (candidate) =>
          candidate.from === loop[step] && candidate.to === loop[step + 1] && candidate.kind === "static",
      );
      if (edge) steps.push(edge);
    }
    cycles.push({ files, path: loop, steps });
  }
  return cycles;
}

export function cycleDrafts(
  cycles: readonly Cycle[],
  graph: ImportGraph,
  context: ToolContext,
  graphUri: string,
): EnvelopeDraft[] {
  return cycles.map((cycle) => {
    const quoted = cycle.steps.map((edge) => ({
      from: edge.from,
      line: edge.line,
      import: sourceLine(graph, edge.from, edge.line),
      to: edge.to,
    }));
    const detailUri = context.putArtifact(
      `architecture/cycle-${shortId(cycle.files.join("|"))}.json`,
      `${JSON.stringify({ members: cycle.files, loop: cycle.path, imports: quoted }, null, 2)}\n`,
    );
    const [first] = cycle.files;
    const loopText = cycle.path.join(" → ");
    const summary =
      `${cycle.files.length} modules import each other when they load: ${loopText}` +
      (cycle.files.length > cycle.path.length - 1
        ? ` (the component also holds ${cycle.files.filter((file) => !cycle.path.includes(file)).join(", ")})`
        : "") +
      ". Whichever module loads first sees the other half-initialised (undefined imports, temporal-dead-zone errors), " +
      "and none of them can be changed or tested alone. Break the loop by moving what both need into a module " +
      "neither imports back, or by depending on an interface (a type-only import) instead.";
    return architectureDraft({
      defectClass: "circular-dependency",
      title: `Import cycle: ${cycle.files.length === 2 ? `${cycle.files[0]} ↔ ${cycle.files[1]}` : `${first} and ${cycle.files.length - 1} other modules`}`,
      summary,
      file: first!,
      related: cycle.files.slice(1),
      graphUri,
      detailUri,
      detailDescription: "the import lines that close the cycle, one per step",
      steps: [
        ...quoted.map((step) => `${step.from}:${step.line} imports ${step.to}: \`${step.import}\``),
        `Together these load-time imports form the loop ${loopText}.`,
      ],
      impact:
        "Module initialisation order decides which import is undefined at load time; changes to one module ripple through every member.",
      severity: "medium",
      confidence: 0.9,
      discriminator: cycle.files.join("|"),
      fixArea: first,
    });
  });
}
