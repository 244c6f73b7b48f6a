import fs from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { normalizePackageName } from "./advisory-snapshot.ts";
import type { Ecosystem } from "./versions.ts";

/** One installed package version, as a lockfile pins it. */
export interface InstalledPackage {
  ecosystem: Ecosystem;
  name: string;
  version: string;
  /** Declared by the project itself (not only pulled in by another package). */
  direct: boolean;
  /** The lockfile, relative to the target root. */
  file: string;
}

export const LOCKFILE_NAMES = [
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "requirements.txt",
  "poetry.lock",
  "Pipfile.lock",
];
const SKIPPED_FOLDERS = new Set([
  "node_modules",
  ".git",
  "dist",
  "build",
  "vendor",
  ".venv",
  "venv",
  "env",
  "__pycache__",
  ".qaas",
  "coverage",
  "target",
]);

/** Lockfiles in the root and one level of subfolders (a monorepo's `server/`, `web/`). */
export function findLockfiles(root: string): string[] {
  const found: string[] = [];
  const look = (folder: string) => {
    for (const name of LOCKFILE_NAMES) {
      const file = path.join(folder, name);
      if (fs.existsSync(file) && fs.statSync(file).isFile()) found.push(file);
    }
  };
  look(root);
  let entries: fs.Dirent[] = [];
  try {
    entries = fs.readdirSync(root, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name) && !entry.name.startsWith("."))
      look(path.join(root, entry.name));
  }
  return found;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Names the folder's package.json declares (every dependency kind). */
function declaredNpm(folder: string): Set<string> | undefined {
  const manifest = readJson(path.join(folder, "package.json"));
  if (!manifest) return undefined;
  const names = new Set<string>();
  for (const key of ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"]) {
    for (const name of Object.keys((manifest[key] as Record<string, unknown> | undefined) ?? {}))
      names.add(name);
  }
  return names;
}

function parsePackageLock(file: string, relative: string): InstalledPackage[] {
  const lock = readJson(file);
  if (!lock) return [];
  const result: InstalledPackage[] = [];
  const packages = lock.packages as
    | Record<string, { version?: string; link?: boolean; name?: string }>
    | undefined;
  if (packages) {
    const root = (packages[""] ?? {}) as Record<string, unknown>;
    const direct = new Set<string>();
    for (const key of ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"]) {
      for (const name of Object.keys((root[key] as Record<string, unknown> | undefined) ?? {}))
        direct.add(name);
    }
    for (const [key, entry] of Object.entries(packages)) {
      if (!key || entry.link || !entry.version) continue;
      const index = key.lastIndexOf("node_modules/");
      if (index < 0) continue;
      const name = key.slice(index + "node_modules/".length);
      result.push({
        ecosystem: "npm",
        name,
        version: entry.version,
        direct: direct.has(name) && key === `node_modules/${name}`,
        file: relative,
      });
    }
    return result;
  }
  const declared = declaredNpm(path.dirname(file));
  const walk = (
    dependencies: Record<string, { version?: string; dependencies?: Record<string, unknown> }> | undefined,
    top: boolean,
  ) => {
    for (const [name, entry] of Object.entries(dependencies ?? {})) {
      if (entry.version && !entry.version.startsWith("file:")) {
        result.push({
          ecosystem: "npm",
          name,
          version: entry.version,
          direct: top && (declared ? declared.has(name) : true),
          file: relative,
        });
      }
      walk(entry.dependencies as Record<string, { version?: string }> | undefined, false);
    }
  };
  walk(lock.dependencies as Record<string, { version?: string }> | undefined, true);
  return result;
}

function parseYarnLock(file: string, relative: string): InstalledPackage[] {
  const text = fs.readFileSync(file, "utf8");
  const declared = declaredNpm(path.dirname(file));
  const result: InstalledPackage[] = [];
  let names: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    if (!/^\s/.test(line)) {
      names = line
        .replace(/:\s*$/, "")
        .split(/,\s*/)
        .map((spec) => spec.trim().replace(/^"|"$/g, ""))
        .map((spec) => {
          const at = spec.indexOf("@", 1);
          return at > 0 ? spec.slice(0, at) : spec;
        })
        .filter((name) => name && name !== "__metadata");
      continue;
    }
    const version = line.match(/^\s+version:?\s+"?([^"\s]+)"?\s*$/)?.[1];
    if (version && names.length > 0 && /^\d/.test(version)) {
      for (const name of new Set(names)) {
        if (!result.some((known) => known.name === name && known.version === version)) {
          result.push({
            ecosystem: "npm",
            name,
            version,
            direct: declared ? declared.has(name) : false,
            file: relative,
          });
        }
      }
      names = [];
    }
  }
  return result;
}

function splitPnpmKey(key: string): { name: string; version: string } | undefined {
  const cleaned = key.replace(/^\//, "").replace(/\(.*$/, "");
  const at = cleaned.lastIndexOf("@");
  if (at > 0) {
    const version = cleaned.slice(at + 1).split("_")[0]!;
    return /^\d/.test(version) ? { name: cleaned.slice(0, at), version } : undefined;
  }
  const slash = cleaned.lastIndexOf("/");
  if (slash <= 0) return undefined;
  const version = cleaned.slice(slash + 1).split("_")[0]!;
  return /^\d/.test(version) ? { name: cleaned.slice(0, slash), version } : undefined;
}

function parsePnpmLock(file: string, relative: string): InstalledPackage[] {
  let lock: Record<string, unknown>;
  try {
    lock = (parseYaml(fs.readFileSync(file, "utf8")) ?? {}) as Record<string, unknown>;
  } catch {
    return [];
  }
  const direct = new Set<string>();
  const importers = (lock.importers as Record<string, Record<string, unknown>> | undefined) ?? { ".": lock };
  for (const importer of Object.values(importers)) {
    for (const key of ["dependencies", "devDependencies", "optionalDependencies"]) {
      for (const name of Object.keys((importer?.[key] as Record<string, unknown> | undefined) ?? {}))
        direct.add(name);
    }
  }
  const result: InstalledPackage[] = [];
  for (const key of Object.keys((lock.packages as Record<string, unknown> | undefined) ?? {})) {
    const parsed = splitPnpmKey(key);
    if (!parsed || result.some((known) => known.name === parsed.name && known.version === parsed.version))
      continue;
    result.push({ ecosystem: "npm", ...parsed, direct: direct.has(parsed.name), file: relative });
  }
  return result;
}

function parseRequirements(file: string, relative: string): InstalledPackage[] {
  const result: InstalledPackage[] = [];
  for (const raw of fs.readFileSync(file, "utf8").split(/\r?\n/)) {
    const line = raw.split(/\s+#/)[0]!.split(";")[0]!.trim();
    if (!line || line.startsWith("#") || line.startsWith("-")) continue;
    const match = line.match(
      /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([A-Za-z0-9._+!-]+)\s*$/,
    );
    if (match)
      result.push({
        ecosystem: "PyPI",
        name: normalizePackageName("PyPI", match[1]!),
        version: match[2]!,
        direct: true,
        file: relative,
      });
  }
  return result;
}

/** Top-level dependency names of a pyproject.toml (Poetry tables or PEP 621 `dependencies`). */
function declaredPython(folder: string): Set<string> | undefined {
  const file = path.join(folder, "pyproject.toml");
  if (!fs.existsSync(file)) return undefined;
  const text = fs.readFileSync(file, "utf8");
  const names = new Set<string>();
  let table = "";
  for (const line of text.split(/\r?\n/)) {
    const header = line.match(/^\s*\[([^\]]+)\]\s*$/);
    if (header) {
      table = header[1]!.trim();
      continue;
    }
    if (/^tool\.poetry\.(dev-)?dependencies$|^tool\.poetry\.group\.[^.]+\.dependencies$/.test(table)) {
      const key = line.match(/^\s*([A-Za-z0-9._-]+)\s*=/)?.[1];
      if (key && key.toLowerCase() !== "python") names.add(normalizePackageName("PyPI", key));
    }
    for (const quoted of line.matchAll(
      /"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;].*)?"/g,
    )) {
      if (table === "project" || table.startsWith("project.optional-dependencies"))
        names.add(normalizePackageName("PyPI", quoted[1]!));
    }
  }
  return names;
}

function parsePoetryLock(file: string, relative: string): InstalledPackage[] {
  const declared = declaredPython(path.dirname(file));
  const result: InstalledPackage[] = [];
  let name: string | undefined;
  for (const line of fs.readFileSync(file, "utf8").split(/\r?\n/)) {
    if (/^\s*\[\[package\]\]\s*$/.test(line)) {
      name = undefined;
      continue;
    }
    const field = line.match(/^(name|version)\s*=\s*"([^"]+)"/);
    if (!field) continue;
    if (field[1] === "name") name = normalizePackageName("PyPI", field[2]!);
    else if (name) {
      result.push({
        ecosystem: "PyPI",
        name,
        version: field[2]!,
        direct: declared ? declared.has(name) : true,
        file: relative,
      });
      name = undefined;
    }
  }
  return result;
}

function parsePipfileLock(file: string, relative: string): InstalledPackage[] {
  const lock = readJson(file);
  if (!lock) return [];
  const pipfile = path.join(path.dirname(file), "Pipfile");
  const declared = fs.existsSync(pipfile)
    ? new Set(
        [...fs.readFileSync(pipfile, "utf8").matchAll(/^\s*"?([A-Za-z0-9][A-Za-z0-9._-]*)"?\s*=/gm)].map(
          (match) => normalizePackageName("PyPI", match[1]!),
        ),
      )
    : undefined;
  const result: InstalledPackage[] = [];
  for (const section of ["default", "develop"]) {
    for (const [raw, entry] of Object.entries(
      (lock[section] as Record<string, { version?: string }> | undefined) ?? {},
    )) {
      const version = entry.version?.replace(/^===?/, "");
      if (!version) continue;
      const name = normalizePackageName("PyPI", raw);
      result.push({
        ecosystem: "PyPI",
        name,
        version,
        direct: declared ? declared.has(name) : true,
        file: relative,
      });
    }
  }
  return result;
}

/** Every package pinned by one lockfile; an unreadable file yields nothing rather than an error. */
export function parseLockfile(file: string, root: string): InstalledPackage[] {
  const relative = path.relative(root, file).split(path.sep).join("/");
  const base = path.basename(file);
  try {
    if (base === "package-lock.json" || base === "npm-shrinkwrap.json")
      return parsePackageLock(file, relative);
    if (base === "yarn.lock") return parseYarnLock(file, relative);
    if (base === "pnpm-lock.yaml") return parsePnpmLock(file, relative);
    if (base === "requirements.txt") return parseRequirements(file, relative);
    if (base === "poetry.lock") return parsePoetryLock(file, relative);
    if (base === "Pipfile.lock") return parsePipfileLock(file, relative);
  } catch {
    return [];
  }
  return [];
}
