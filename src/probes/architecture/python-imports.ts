import path from "node:path";
import { runPythonScript } from "../source/python-script.ts";
import type { ImportKind, ModuleFacts } from "./javascript-imports.ts";
import { PYTHON_IMPORTS_SCRIPT } from "./python-imports-script.ts";

// Python imports resolved against the source tree: `import a.b`, `from a import b` (b a submodule or a
// name), `from . import x`, `from ..pkg import y`. Absolute imports are looked up from the importing
// script's own folder (when it is not a package) and from the tree's source roots: the root, `src/`, and the
// folder above each top-level package. Nothing is matched by suffix, so an import of an outside package
// never lands on a same-named file by accident.

interface PythonImport {
  module: string;
  names: string[];
  level: number;
  line: number;
  kind: ImportKind;
}

interface PythonFileFacts {
  imports: PythonImport[];
  loaders: Array<{ folder: string; line: number; dotted: boolean }>;
  strings: string[];
  opaque: number;
  lines: number;
  functions: number;
  data_lines: number;
  main: boolean;
}

export interface ResolvedPythonImport {
  to: string;
  kind: ImportKind;
  line: number;
  specifier: string;
}

export interface PythonFileScan {
  facts: ModuleFacts;
  resolved: ResolvedPythonImport[];
  /** Top-level names of modules not in the tree (outside packages). */
  externals: string[];
  /** Loader folders relative to the root. */
  loaderFolders: string[];
}

export interface PythonScan {
  files: Map<string, PythonFileScan>;
  notes: string[];
}

const folderOf = (file: string): string => (path.posix.dirname(file) === "." ? "" : path.posix.dirname(file));
const join = (...parts: string[]): string => parts.filter((part) => part !== "").join("/");

export async function scanPython(
  root: string,
  files: readonly string[],
  timeoutMs = 60_000,
): Promise<PythonScan> {
  const scan: PythonScan = { files: new Map(), notes: [] };
  if (files.length === 0) return scan;
  const result = await runPythonScript(
    PYTHON_IMPORTS_SCRIPT,
    { root, files },
    {
      timeoutMs,
      maxOutputBytes: 128 * 1024 * 1024,
    },
  );
  if (!result.ok) {
    scan.notes.push(
      `Python imports not read (python3 failed: ${result.reason}); ${files.length} .py files have no edges`,
    );
    return scan;
  }
  const output = JSON.parse(result.stdout) as { files: Record<string, PythonFileFacts>; errors: string[] };
  if (output.errors.length > 0) {
    scan.notes.push(
      `${output.errors.length} Python files did not parse, e.g. ${output.errors.slice(0, 3).join("; ")}`,
    );
  }
  const resolver = new PythonResolver(new Set(files));
  for (const [file, facts] of Object.entries(output.files)) {
    scan.files.set(file, resolver.scanFile(file, facts));
  }
  return scan;
}

export class PythonResolver {
  private readonly packages: Set<string>;
  private readonly roots: string[];

  constructor(private readonly files: ReadonlySet<string>) {
    this.packages = new Set(
      [...files].filter((file) => path.posix.basename(file) === "__init__.py").map((file) => folderOf(file)),
    );
    const roots = new Set<string>([""]);
    if ([...files].some((file) => file.startsWith("src/"))) roots.add("src");
    for (const folder of this.packages) {
      const parent = folderOf(folder);
      if (!this.packages.has(parent) || parent === "") roots.add(parent);
    }
    for (const file of files) if (path.posix.basename(file) === "manage.py") roots.add(folderOf(file));
    this.roots = [...roots];
  }

  scanFile(file: string, raw: PythonFileFacts): PythonFileScan {
    const resolved: ResolvedPythonImport[] = [];
    const externals: string[] = [];
    const add = (to: string | undefined, kind: ImportKind, line: number, specifier: string): void => {
      if (to !== undefined && to !== file) resolved.push({ to, kind, line, specifier });
    };
    for (const entry of raw.imports) {
      const specifier = `${".".repeat(entry.level)}${entry.module}`;
      const bases = this.basesFor(file, entry.level);
      if (bases === undefined) continue;
      const targets: string[] = [];
      if (entry.names.length === 0) {
        const found = this.longestModule(entry.module, bases);
        if (found) targets.push(found);
      } else {
        for (const name of entry.names) {
          const submodule = name === "*" ? undefined : this.moduleFile(join(entry.module, name), bases);
          const found = submodule ?? this.moduleFile(entry.module, bases);
          if (found && !targets.includes(found)) targets.push(found);
        }
      }
      if (targets.length === 0) {
        if (entry.level === 0 && entry.module) externals.push(entry.module.split(".")[0]!);
        continue;
      }
      for (const target of targets) add(target, entry.kind, entry.line, specifier);
      // Importing a.b.c runs a/__init__.py and a/b/__init__.py first: they are reached, not imported.
      for (const target of targets) {
        for (const ancestor of this.ancestorPackages(target))
          add(ancestor, "reference", entry.line, specifier);
      }
    }
    for (const text of raw.strings) {
      const target = this.stringTarget(file, text);
      if (target) add(target, "reference", 0, text);
    }
    const loaderFolders = raw.loaders.flatMap((loader) => {
      if (loader.dotted) {
        // `import_module(f"app.plugins.{name}")`: the package folder under whichever source root has it.
        return this.roots
          .map((root) => `${join(root, loader.folder.replace(/\/$/, ""))}/`)
          .filter((folder) => [...this.files].some((candidate) => candidate.startsWith(folder)));
      }
      const relative = loader.folder.startsWith("./") || loader.folder.startsWith("../");
      return [relative ? `${path.posix.normalize(join(folderOf(file), loader.folder))}/` : loader.folder];
    });
    return {
      facts: {
        imports: [],
        loaders: raw.loaders.map((loader) => ({ folder: loader.folder, line: loader.line })),
        opaqueLoads: raw.opaque,
        strings: raw.strings,
        lines: raw.lines,
        functions: raw.functions,
        dataLines: raw.data_lines,
        main: raw.main,
      },
      resolved,
      externals,
      loaderFolders,
    };
  }

  hasModules(): boolean {
    return this.files.size > 0;
  }

  /** The file of a dotted module name (`app.main`), from the source roots; the longest prefix that is one. */
  moduleByName(dotted: string): string | undefined {
    return this.longestModule(dotted, this.roots);
  }

  /** A module file for a dotted name under one of `bases`: `a/b.py` or `a/b/__init__.py`. */
  moduleFile(dotted: string, bases: readonly string[]): string | undefined {
    const relative = dotted.split(".").filter(Boolean).join("/");
    for (const base of bases) {
      const stem = join(base, relative);
      if (relative !== "" && this.files.has(`${stem}.py`)) return `${stem}.py`;
      const init = join(stem, "__init__.py");
      if (this.files.has(init)) return init;
    }
    return undefined;
  }

  private longestModule(dotted: string, bases: readonly string[]): string | undefined {
    const parts = dotted.split(".");
    for (let count = parts.length; count >= 1; count -= 1) {
      const found = this.moduleFile(parts.slice(0, count).join("."), bases);
      if (found) return found;
    }
    return undefined;
  }

  /** Where a module name is looked up from; undefined when a relative import climbs out of the tree. */
  private basesFor(file: string, level: number): string[] | undefined {
    if (level > 0) {
      let folder = folderOf(file);
      for (let step = 1; step < level; step += 1) {
        if (folder === "") return undefined;
        folder = folderOf(folder);
      }
      return [folder];
    }
    const own = folderOf(file);
    // A script outside any package has its own folder on sys.path.
    return this.packages.has(own) ? this.roots : [own, ...this.roots.filter((root) => root !== own)];
  }

  private ancestorPackages(target: string): string[] {
    const ancestors: string[] = [];
    let folder = folderOf(target);
    if (path.posix.basename(target) === "__init__.py") folder = folderOf(folder);
    while (this.packages.has(folder) && folder !== "") {
      ancestors.push(join(folder, "__init__.py"));
      folder = folderOf(folder);
    }
    return ancestors;
  }

  /** `"shop.apps.ShopConfig"`, `"main:app"`, `"tasks/cleanup.py"`: the file a string names, if any. */
  private stringTarget(file: string, text: string): string | undefined {
    if (text.endsWith(".py")) {
      const candidates = [path.posix.normalize(join(folderOf(file), text)), path.posix.normalize(text)];
      return candidates.find((candidate) => this.files.has(candidate));
    }
    const dotted = text.split(":")[0] ?? "";
    const bases = this.basesFor(file, 0) ?? this.roots;
    const parts = dotted.split(".");
    // `pkg.module.attr`: the longest prefix that is a module, as long as it is more than an outside package.
    for (let count = parts.length; count >= 1; count -= 1) {
      const found = this.moduleFile(parts.slice(0, count).join("."), bases);
      if (found) return found;
    }
    return undefined;
  }
}
