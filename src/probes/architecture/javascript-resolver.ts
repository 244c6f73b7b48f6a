import path from "node:path";
import ts from "typescript";
import { readText } from "./code-files.ts";

// Resolves an import specifier of a JavaScript/TypeScript file to a file of the tree, the way Node and
// TypeScript would without a build: relative paths with or without extensions, index files, NodeNext's
// `.js` written for a `.ts` source, tsconfig/jsconfig `paths` and `baseUrl`, package.json `imports` (`#x`),
// the common `@/` and `~/` aliases, and packages of the same repository (workspaces). Anything else is an
// external package.

const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".d.ts"];
const SOURCE_FOR_OUTPUT: Record<string, string[]> = {
  ".js": [".ts", ".tsx"],
  ".jsx": [".tsx"],
  ".mjs": [".mts"],
  ".cjs": [".cts"],
};

export type Resolution = { file: string } | { external: string } | { unresolved: true };

interface PathsConfig {
  /** Folder of the config, relative to the root ("" for the root). */
  folder: string;
  baseUrl: string | undefined;
  paths: Array<{ pattern: string; targets: string[] }>;
}

interface PackageManifest {
  folder: string;
  name: string | undefined;
  entry: string | undefined;
  imports: Record<string, unknown>;
}

export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function isInside(folder: string, file: string): boolean {
  return folder === "" || file === folder || file.startsWith(`${folder}/`);
}

function normalize(candidate: string): string | undefined {
  const normalized = path.posix.normalize(candidate).replace(/^\.\//, "");
  if (normalized.startsWith("..") || path.posix.isAbsolute(normalized)) return undefined;
  return normalized.replace(/\/$/, "");
}

function readJsonConfig(root: string, relative: string): Record<string, unknown> | undefined {
  const text = readText(root, relative);
  if (text === undefined) return undefined;
  // tsconfig files allow comments and trailing commas; TypeScript's own reader accepts them.
  const parsed = ts.parseConfigFileTextToJson(relative, text);
  return parsed.config && typeof parsed.config === "object"
    ? (parsed.config as Record<string, unknown>)
    : undefined;
}

export class JavaScriptResolver {
  private readonly configs: PathsConfig[];
  private readonly manifests: PackageManifest[];

  constructor(
    private readonly root: string,
    private readonly files: ReadonlySet<string>,
    textFiles: readonly string[],
  ) {
    this.configs = textFiles
      .filter((file) => /(^|\/)(tsconfig|jsconfig)(\.[\w-]+)?\.json$/.test(file))
      .map((file) => this.pathsConfig(file))
      .filter((config): config is PathsConfig => config !== undefined)
      .sort((left, right) => right.folder.length - left.folder.length);
    this.manifests = textFiles
      .filter((file) => /(^|\/)package\.json$/.test(file))
      .map((file) => this.manifest(file))
      .filter((manifest): manifest is PackageManifest => manifest !== undefined)
      .sort((left, right) => right.folder.length - left.folder.length);
  }

  resolve(from: string, specifier: string): Resolution {
    const folder = path.posix.dirname(from) === "." ? "" : path.posix.dirname(from);
    if (
      specifier.startsWith("./") ||
      specifier.startsWith("../") ||
      specifier === "." ||
      specifier === ".."
    ) {
      return this.fileOr(this.resolvePath(path.posix.join(folder, specifier)));
    }
    if (specifier.startsWith("/")) return this.fileOr(this.resolvePath(specifier.slice(1)));
    if (/^[a-z]+:/i.test(specifier)) return { external: specifier.split(":")[0]! };
    if (specifier.startsWith("#")) return this.fileOr(this.packageImport(from, specifier));
    const mapped = this.mappedPath(from, specifier);
    if (mapped) return { file: mapped };
    const workspace = this.workspacePackage(specifier);
    if (workspace) return { file: workspace };
    if (/^[@~]\//.test(specifier)) {
      const rest = specifier.slice(2);
      const base = this.manifests.find((manifest) => isInside(manifest.folder, from))?.folder ?? "";
      const found =
        this.resolvePath(path.posix.join(base, "src", rest)) ?? this.resolvePath(path.posix.join(base, rest));
      return this.fileOr(found);
    }
    return { external: packageName(specifier) };
  }

  /** A file for a path relative to the root, trying extensions, NodeNext output names and index files. */
  resolvePath(candidate: string): string | undefined {
    const base = normalize(candidate);
    if (base === undefined) return undefined;
    if (this.files.has(base)) return base;
    const extension = path.posix.extname(base);
    const stem = base.slice(0, base.length - extension.length);
    for (const source of SOURCE_FOR_OUTPUT[extension] ?? []) {
      if (this.files.has(stem + source)) return stem + source;
    }
    for (const added of EXTENSIONS) if (this.files.has(base + added)) return base + added;
    for (const added of EXTENSIONS) {
      const index = base === "" ? `index${added}` : `${base}/index${added}`;
      if (this.files.has(index)) return index;
    }
    return undefined;
  }

  private fileOr(file: string | undefined): Resolution {
    return file ? { file } : { unresolved: true };
  }

  private mappedPath(from: string, specifier: string): string | undefined {
    for (const config of this.configs) {
      if (!isInside(config.folder, from)) continue;
      for (const { pattern, targets } of config.paths) {
        const star = pattern.indexOf("*");
        let captured: string | undefined;
        if (star < 0) captured = specifier === pattern ? "" : undefined;
        else {
          const prefix = pattern.slice(0, star);
          const suffix = pattern.slice(star + 1);
          if (
            specifier.startsWith(prefix) &&
            specifier.endsWith(suffix) &&
            specifier.length >= pattern.length - 1
          ) {
            captured = specifier.slice(prefix.length, specifier.length - suffix.length);
          }
        }
        if (captured === undefined) continue;
        // Without a baseUrl the targets were already joined to their config's folder.
        const base = config.baseUrl ?? "";
        for (const target of targets) {
          const found = this.resolvePath(path.posix.join(base, target.replace("*", captured)));
          if (found) return found;
        }
      }
      if (config.baseUrl !== undefined) {
        const found = this.resolvePath(path.posix.join(config.baseUrl, specifier));
        if (found) return found;
      }
    }
    return undefined;
  }

  private packageImport(from: string, specifier: string): string | undefined {
    const manifest = this.manifests.find((candidate) => isInside(candidate.folder, from));
    if (!manifest) return undefined;
    for (const [key, value] of Object.entries(manifest.imports)) {
      const target = conditionalTarget(value);
      if (target === undefined) continue;
      const star = key.indexOf("*");
      if (star < 0 && key === specifier) return this.resolvePath(path.posix.join(manifest.folder, target));
      if (star >= 0 && specifier.startsWith(key.slice(0, star)) && specifier.endsWith(key.slice(star + 1))) {
        const captured = specifier.slice(star, specifier.length - (key.length - star - 1));
        return this.resolvePath(path.posix.join(manifest.folder, target.replace("*", captured)));
      }
    }
    return undefined;
  }

  private workspacePackage(specifier: string): string | undefined {
    const name = packageName(specifier);
    const manifest = this.manifests.find((candidate) => candidate.name === name);
    if (!manifest) return undefined;
    const subpath = specifier.slice(name.length).replace(/^\//, "");
    if (subpath) {
      return (
        this.resolvePath(path.posix.join(manifest.folder, subpath)) ??
        this.resolvePath(path.posix.join(manifest.folder, "src", subpath))
      );
    }
    const entry = manifest.entry
      ? this.resolvePath(path.posix.join(manifest.folder, manifest.entry))
      : undefined;
    return (
      entry ??
      this.resolvePath(path.posix.join(manifest.folder, "src/index")) ??
      this.resolvePath(path.posix.join(manifest.folder, "index"))
    );
  }

  private pathsConfig(file: string): PathsConfig | undefined {
    const folder = path.posix.dirname(file) === "." ? "" : path.posix.dirname(file);
    let current: string | undefined = file;
    let baseUrl: string | undefined;
    let paths: PathsConfig["paths"] | undefined;
    // Follow `extends` a few levels: the nearest file that sets a field wins, as in TypeScript.
    for (let depth = 0; current !== undefined && depth < 5; depth += 1) {
      const config = readJsonConfig(this.root, current);
      if (!config) break;
      const options = (config.compilerOptions ?? {}) as Record<string, unknown>;
      const configFolder: string = path.posix.dirname(current) === "." ? "" : path.posix.dirname(current);
      if (baseUrl === undefined && typeof options.baseUrl === "string") {
        baseUrl = normalize(path.posix.join(configFolder, options.baseUrl)) ?? "";
      }
      if (paths === undefined && options.paths && typeof options.paths === "object") {
        paths = Object.entries(options.paths as Record<string, unknown>).map(([pattern, targets]) => ({
          pattern,
          targets: (Array.isArray(targets) ? targets : [])
            .filter((target): target is string => typeof target === "string")
            .map((target) => (baseUrl === undefined ? path.posix.join(configFolder, target) : target)),
        }));
      }
      const parent: unknown = config.extends;
      current =
        typeof parent === "string" && parent.startsWith(".")
          ? normalize(path.posix.join(configFolder, parent.endsWith(".json") ? parent : `${parent}.json`))
          : undefined;
    }
    if (baseUrl === undefined && paths === undefined) return undefined;
    return { folder, baseUrl, paths: paths ?? [] };
  }

  private manifest(file: string): PackageManifest | undefined {
    const config = readJsonConfig(this.root, file);
    if (!config) return undefined;
    const folder = path.posix.dirname(file) === "." ? "" : path.posix.dirname(file);
    const exportsField = config.exports;
    const entry =
      conditionalTarget(
        exportsField &&
          typeof exportsField === "object" &&
          !Array.isArray(exportsField) &&
          "." in exportsField
          ? (exportsField as Record<string, unknown>)["."]
          : exportsField,
      ) ??
      (typeof config.module === "string" ? config.module : undefined) ??
      (typeof config.main === "string" ? config.main : undefined);
    return {
      folder,
      name: typeof config.name === "string" ? config.name : undefined,
      entry,
      imports:
        config.imports && typeof config.imports === "object"
          ? (config.imports as Record<string, unknown>)
          : {},
    };
  }
}

/** The file a package.json `exports`/`imports` value points to, whatever its conditions. */
export function conditionalTarget(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(conditionalTarget).find((target) => target !== undefined);
  if (value && typeof value === "object") {
    const record = value as Record<string, unknown>;
    for (const condition of ["source", "development", "import", "node", "require", "default"]) {
      const target = conditionalTarget(record[condition]);
      if (target !== undefined) return target;
    }
  }
  return undefined;
}
