import path from "node:path";
import type { CodeFile, CodeTree } from "./code-files.ts";
import { listCodeTree, readText } from "./code-files.ts";
import type { ImportKind, ModuleFacts } from "./javascript-imports.ts";
import { extractJavaScriptImports } from "./javascript-imports.ts";
import { JavaScriptResolver } from "./javascript-resolver.ts";
import { scanPython } from "./python-imports.ts";

// The module graph of a target: one node per JavaScript/TypeScript/Python file (tests included), one edge
// per import resolved to another file of the tree. Every architecture check reads this one structure.

export interface ImportEdge {
  from: string;
  to: string;
  kind: ImportKind;
  /** 1-based line of the import in `from` (0 for references found in strings). */
  line: number;
  specifier: string;
}

export interface ModuleNode extends CodeFile {
  lines: number;
  functions: number;
  dataLines: number;
  main: boolean;
  /** Distinct non-test modules importing this one (static, type or lazy imports). */
  fanIn: number;
  /** Distinct modules of the tree this one imports. */
  fanOut: number;
}

export interface ImportGraph {
  root: string;
  modules: ModuleNode[];
  edges: ImportEdge[];
  /** Relative or aliased specifiers that named no file of the tree. */
  unresolved: Array<{ from: string; specifier: string; line: number }>;
  /** Outside packages by name → importing files. */
  externals: Record<string, number>;
  /** File → the outside packages it imports. */
  externalImports: Map<string, string[]>;
  /** Files with dynamic imports whose target no literal reveals. */
  opaqueLoads: Array<{ file: string; count: number }>;
  /** String literals of each file shaped like paths or module names (not in the artifact). */
  strings: Map<string, string[]>;
  textFiles: string[];
  notes: string[];
  truncated: boolean;
}

/** Edges that are imports (not mere string references). */
export const IMPORT_KINDS: ReadonlySet<ImportKind> = new Set(["static", "type", "lazy"]);

export interface BuildOptions {
  answerKey?: string;
  maxFiles?: number;
}

export async function buildImportGraph(root: string, options: BuildOptions = {}): Promise<ImportGraph> {
  const tree = listCodeTree(root, { answerKey: options.answerKey, maxFiles: options.maxFiles });
  const fileSet = new Set(tree.code.map((file) => file.file));
  const graph: ImportGraph = {
    root,
    modules: [],
    edges: [],
    unresolved: [],
    externals: {},
    externalImports: new Map(),
    opaqueLoads: [],
    strings: new Map(),
    textFiles: tree.text,
    notes: tree.truncated ? [`the tree was cut at ${tree.code.length + tree.text.length} files`] : [],
    truncated: tree.truncated,
  };
  const facts = new Map<string, ModuleFacts>();
  const loaderFolders = new Map<string, string[]>();
  const externalsByFile = new Map<string, Set<string>>();
  const noteExternal = (file: string, name: string): void => {
    const names = externalsByFile.get(file) ?? new Set<string>();
    names.add(name);
    externalsByFile.set(file, names);
  };

  const resolver = new JavaScriptResolver(root, fileSet, tree.text);
  for (const file of tree.code.filter((entry) => entry.language === "javascript")) {
    const text = readText(root, file.file);
    if (text === undefined) continue;
    let fileFacts: ModuleFacts;
    try {
      fileFacts = extractJavaScriptImports(file.file, text);
    } catch (error) {
      graph.notes.push(
        `${file.file} did not parse: ${error instanceof Error ? error.message : String(error)}`,
      );
      continue;
    }
    facts.set(file.file, fileFacts);
    for (const reference of fileFacts.imports) {
      const resolution = resolver.resolve(file.file, reference.specifier);
      if ("file" in resolution) {
        if (resolution.file !== file.file) {
          graph.edges.push({ from: file.file, to: resolution.file, ...reference });
        }
      } else if ("external" in resolution) noteExternal(file.file, resolution.external);
      else graph.unresolved.push({ from: file.file, specifier: reference.specifier, line: reference.line });
    }
    for (const text of fileFacts.strings) {
      const target = stringTarget(resolver, file.file, text);
      if (target && target !== file.file) {
        graph.edges.push({ from: file.file, to: target, kind: "reference", line: 0, specifier: text });
      }
    }
    const folder = folderOf(file.file);
    loaderFolders.set(
      file.file,
      // `./x` is relative to the file; a bare `src/x/*.ts` glob is relative to where the program starts.
      fileFacts.loaders.flatMap((loader) =>
        /^\.{1,2}\//.test(loader.folder)
          ? [path.posix.join(folder, loader.folder)]
          : [path.posix.join(folder, loader.folder), loader.folder],
      ),
    );
  }

  const python = await scanPython(
    root,
    tree.code.filter((entry) => entry.language === "python").map((entry) => entry.file),
  );
  graph.notes.push(...python.notes);
  for (const [file, scan] of python.files) {
    facts.set(file, scan.facts);
    for (const edge of scan.resolved) graph.edges.push({ from: file, ...edge });
    for (const name of scan.externals) noteExternal(file, name);
    loaderFolders.set(file, scan.loaderFolders);
  }

  addLoaderEdges(graph, tree, loaderFolders);
  graph.edges = dedupeEdges(graph.edges);
  for (const [file, names] of externalsByFile) {
    graph.externalImports.set(file, [...names].sort());
    for (const name of names) graph.externals[name] = (graph.externals[name] ?? 0) + 1;
  }
  for (const [file, fileFacts] of facts) {
    graph.strings.set(file, fileFacts.strings);
    if (fileFacts.opaqueLoads > 0) graph.opaqueLoads.push({ file, count: fileFacts.opaqueLoads });
  }
  graph.modules = tree.code.map((file) => {
    const fileFacts = facts.get(file.file);
    return {
      ...file,
      lines: fileFacts?.lines ?? 0,
      functions: fileFacts?.functions ?? 0,
      dataLines: fileFacts?.dataLines ?? 0,
      main: fileFacts?.main ?? false,
      fanIn: 0,
      fanOut: 0,
    };
  });
  countFans(graph);
  return graph;
}

function folderOf(file: string): string {
  return path.posix.dirname(file) === "." ? "" : path.posix.dirname(file);
}

/** A string literal naming a file: `./worker.js`, `src/jobs/nightly.ts`, `new URL("./x.ts", import.meta.url)`. */
function stringTarget(resolver: JavaScriptResolver, from: string, text: string): string | undefined {
  if (text.startsWith("./") || text.startsWith("../")) {
    return resolver.resolvePath(path.posix.join(folderOf(from), text));
  }
  if (text.includes("/") && /\.[cm]?[jt]sx?$/.test(text)) {
    return (
      resolver.resolvePath(text.replace(/^\//, "")) ??
      resolver.resolvePath(path.posix.join(folderOf(from), text))
    );
  }
  return undefined;
}

/** A folder loaded at run time reaches its modules and the index files of its direct subfolders. */
function addLoaderEdges(graph: ImportGraph, tree: CodeTree, loaderFolders: Map<string, string[]>): void {
  for (const [from, folders] of loaderFolders) {
    for (const raw of folders) {
      const normalized = path.posix.normalize(raw.replace(/\/+$/, ""));
      if (normalized.startsWith("..")) continue;
      const folder = normalized === "." ? "" : normalized;
      for (const file of tree.code) {
        const relative =
          folder === ""
            ? file.file
            : file.file.startsWith(`${folder}/`)
              ? file.file.slice(folder.length + 1)
              : undefined;
        if (relative === undefined || file.file === from) continue;
        const depth = relative.split("/").length;
        const isIndex = /^(index\.[cm]?[jt]sx?|__init__\.py)$/.test(path.posix.basename(relative));
        if (depth === 1 || (depth === 2 && isIndex)) {
          graph.edges.push({
            from,
            to: file.file,
            kind: "reference",
            line: 0,
            specifier: `${folder || "."}/*`,
          });
        }
      }
    }
  }
}

/** One edge per (from, to, kind); the first line wins. */
function dedupeEdges(edges: ImportEdge[]): ImportEdge[] {
  const seen = new Set<string>();
  return edges.filter((edge) => {
    const key = `${edge.from}\u0000${edge.to}\u0000${edge.kind}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function countFans(graph: ImportGraph): void {
  const byFile = new Map(graph.modules.map((module) => [module.file, module]));
  const importers = new Map<string, Set<string>>();
  const imported = new Map<string, Set<string>>();
  for (const edge of graph.edges) {
    if (!IMPORT_KINDS.has(edge.kind)) continue;
    const source = byFile.get(edge.from);
    if (!importers.has(edge.to)) importers.set(edge.to, new Set());
    if (source && !source.test) importers.get(edge.to)!.add(edge.from);
    if (!imported.has(edge.from)) imported.set(edge.from, new Set());
    imported.get(edge.from)!.add(edge.to);
  }
  for (const module of graph.modules) {
    module.fanIn = importers.get(module.file)?.size ?? 0;
    module.fanOut = imported.get(module.file)?.size ?? 0;
  }
}

/** Runtime adjacency: `from` → files it imports with one of `kinds`. */
export function adjacency(graph: ImportGraph, kinds: ReadonlySet<ImportKind>): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const module of graph.modules) next.set(module.file, []);
  for (const edge of graph.edges) {
    if (!kinds.has(edge.kind)) continue;
    const list = next.get(edge.from);
    if (list && !list.includes(edge.to)) list.push(edge.to);
  }
  for (const list of next.values()) list.sort();
  return next;
}

/** The serialisable form written as the graph artifact. */
export function graphArtifact(graph: ImportGraph): Record<string, unknown> {
  return {
    root: ".",
    modules: graph.modules.map((module) => ({
      file: module.file,
      language: module.language,
      test: module.test,
      config: module.config,
      lines: module.lines,
      functions: module.functions,
      data_lines: module.dataLines,
      fan_in: module.fanIn,
      fan_out: module.fanOut,
    })),
    edges: graph.edges.map((edge) => ({
      from: edge.from,
      to: edge.to,
      kind: edge.kind,
      line: edge.line,
      specifier: edge.specifier,
    })),
    unresolved: graph.unresolved,
    externals: graph.externals,
    opaque_loads: graph.opaqueLoads,
    notes: graph.notes,
    truncated: graph.truncated,
  };
}
