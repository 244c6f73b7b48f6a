import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { EntryPoint } from "./entry-points.ts";
import { findEntryPoints, inConventionFolder } from "./entry-points.ts";
import { architectureDraft, shortId } from "./graph-cache.ts";
import type { ImportGraph } from "./import-graph.ts";

// dead-code: application modules no entry point reaches through any import (static, type, deferred) or
// reference (a string naming the file, a folder loaded at run time). Unreachable modules that import each
// other are one finding, located at the module nothing else in the group imports.
// Not reported: tests, tool configuration, `.d.ts`, package markers (`__init__.py`), scripts and served
// folders, programs run by themselves, and modules whose name a string or an unresolved import mentions
// (they may be loaded by name). When the graph looks incomplete — no entry point, or more than a third of the
// modules unreachable — or code loads modules by computed names, findings are held below the threshold.

const NAME_LIKE_GENERIC = new Set([
  "index",
  "main",
  "utils",
  "types",
  "config",
  "constants",
  "helpers",
  "common",
]);

export interface DeadGroup {
  /** The module nothing else in the group imports (first by name). */
  file: string;
  /** The other unreachable modules it pulls in. */
  related: string[];
}

export interface DeadCodeResult {
  entries: EntryPoint[];
  groups: DeadGroup[];
  reachable: number;
  considered: number;
  /** Why findings are held, when they are. */
  doubt: string | undefined;
  notes: string[];
}

export function findDeadCode(graph: ImportGraph, profile: TargetProfile | undefined): DeadCodeResult {
  const entries = findEntryPoints(graph, profile);
  const notes: string[] = [];
  const next = new Map<string, string[]>();
  for (const edge of graph.edges) {
    const list = next.get(edge.from) ?? [];
    list.push(edge.to);
    next.set(edge.from, list);
  }
  const reached = new Set(entries.map((entry) => entry.file));
  const queue = [...reached];
  while (queue.length > 0) {
    const file = queue.pop()!;
    for (const child of next.get(file) ?? []) {
      if (reached.has(child)) continue;
      reached.add(child);
      queue.push(child);
    }
  }

  const application = graph.modules.filter(
    (module) =>
      !module.test &&
      !module.config &&
      !module.declaration &&
      !module.main &&
      path.posix.basename(module.file) !== "__init__.py" &&
      !inConventionFolder(module.file),
  );
  const mentioned = mentionedNames(graph, reached);
  const unreachable = application.filter((module) => !reached.has(module.file) && module.lines > 0);
  const dead = unreachable.filter((module) => {
    const stem = path.posix
      .basename(module.file)
      .replace(/\.[^.]+$/, "")
      .toLowerCase();
    if (!NAME_LIKE_GENERIC.has(stem) && mentioned.has(stem)) {
      notes.push(
        `${module.file} is unreachable but its name appears in a string or unresolved import: not reported`,
      );
      return false;
    }
    return true;
  });

  let doubt: string | undefined;
  if (entries.length === 0) doubt = "no entry point was found, so reachability cannot be judged";
  else if (dead.length > 3 && dead.length * 3 > application.length) {
    doubt = `${dead.length} of ${application.length} modules look unreachable, which suggests imports the graph could not resolve`;
  } else if (graph.opaqueLoads.some((load) => reached.has(load.file))) {
    doubt = `reachable code loads modules by computed names (${graph.opaqueLoads
      .map((load) => load.file)
      .slice(0, 3)
      .join(", ")})`;
  }
  return {
    entries,
    groups: groupDead(
      dead.map((module) => module.file),
      graph,
    ),
    reachable: reached.size,
    considered: application.length,
    doubt,
    notes,
  };
}

/** Names (lower-case stems) in imports that did not resolve, and in strings when code imports computed names. */
function mentionedNames(graph: ImportGraph, reached: ReadonlySet<string>): Set<string> {
  const names = new Set<string>();
  const addLast = (text: string): void => {
    const bare = text.split(":")[0]!.replace(/\.[cm]?[jt]sx?$|\.py$/, "");
    const last = bare
      .split(bare.includes("/") ? "/" : ".")
      .filter(Boolean)
      .pop();
    if (last) names.add(last.toLowerCase());
  };
  // A string can only load a module through a computed import; without one, strings name nothing.
  const computedLoads = graph.opaqueLoads.length > 0;
  for (const [file, strings] of graph.strings) {
    if (!computedLoads || !reached.has(file)) continue;
    // URL paths (`/api/reports`) name routes, not modules.
    for (const text of strings) if (!text.startsWith("/")) addLast(text);
  }
  for (const unresolved of graph.unresolved) addLast(unresolved.specifier);
  return names;
}

/** Weakly connected groups of unreachable modules, each located at a module no other member imports. */
function groupDead(files: readonly string[], graph: ImportGraph): DeadGroup[] {
  const members = new Set(files);
  const neighbours = new Map<string, Set<string>>(files.map((file) => [file, new Set<string>()]));
  const imported = new Set<string>();
  for (const edge of graph.edges) {
    if (!members.has(edge.from) || !members.has(edge.to)) continue;
    neighbours.get(edge.from)!.add(edge.to);
    neighbours.get(edge.to)!.add(edge.from);
    imported.add(edge.to);
  }
  const seen = new Set<string>();
  const groups: DeadGroup[] = [];
  for (const file of [...files].sort()) {
    if (seen.has(file)) continue;
    const group: string[] = [];
    const stack = [file];
    seen.add(file);
    while (stack.length > 0) {
      const current = stack.pop()!;
      group.push(current);
      for (const other of neighbours.get(current) ?? []) {
        if (!seen.has(other)) {
          seen.add(other);
          stack.push(other);
        }
      }
    }
    group.sort();
    const head = group.find((member) => !imported.has(member)) ?? group[0]!;
    groups.push({ file: head, related: group.filter((member) => member !== head) });
  }
  return groups;
}

export function deadCodeDrafts(
  result: DeadCodeResult,
  graph: ImportGraph,
  context: ToolContext,
  graphUri: string,
): EnvelopeDraft[] {
  const byFile = new Map(graph.modules.map((module) => [module.file, module]));
  return result.groups.map((group) => {
    const members = [group.file, ...group.related];
    const detailUri = context.putArtifact(
      `architecture/dead-code-${shortId(members.join("|"))}.json`,
      `${JSON.stringify(
        {
          unreachable: members.map((file) => ({ file, lines: byFile.get(file)?.lines ?? 0 })),
          importers_outside_group: graph.edges
            .filter((edge) => members.includes(edge.to) && !members.includes(edge.from))
            .map((edge) => ({ from: edge.from, kind: edge.kind })),
          entry_points: result.entries,
          doubt: result.doubt ?? null,
        },
        null,
        2,
      )}\n`,
    );
    const lines = members.reduce((total, file) => total + (byFile.get(file)?.lines ?? 0), 0);
    return architectureDraft({
      defectClass: "dead-code",
      title:
        group.related.length === 0
          ? `${group.file} is never imported: dead module`
          : `${group.file} and ${group.related.length} module(s) it uses are never reached: dead code`,
      summary:
        `No entry point (${result.entries.length} found: package.json, scripts, conventions, tests) reaches ` +
        `${members.join(", ")} through any import or reference (${lines} lines). ` +
        "Dead modules still cost reviews, upgrades and confusion about which code is live. Delete them, or wire " +
        "them in if they were meant to run." +
        (result.doubt ? ` Held for a person: ${result.doubt}.` : ""),
      file: group.file,
      related: group.related,
      graphUri,
      detailUri,
      detailDescription:
        "the unreachable modules, who imports them, and the entry points reachability started from",
      steps: [
        `Search the code for imports of ${group.file}: nothing outside the group imports it.`,
        `Entry points considered: ${result.entries
          .slice(0, 8)
          .map((entry) => entry.file)
          .join(", ")}${result.entries.length > 8 ? ", …" : ""}.`,
      ],
      impact: "Unused code misleads readers and keeps being maintained, audited and upgraded for nothing.",
      severity: "low",
      confidence: result.doubt ? 0.5 : 0.85,
      fixArea: group.file,
    });
  });
}
