import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { ContainerGraph } from "./container-graph.ts";
import { normalizePathTemplate, type PathStyle } from "./path-template.ts";
import { PYTHON_ROUTE_SCRIPT } from "./python-route-script.ts";
import type { RouteInputs } from "./route-inputs.ts";

// Runs the Python extractor once over every .py file and turns its per-file facts into a container graph,
// resolving `from .views import bp`, `include("shop.urls")` and friends to files of the tree.

type PythonReference =
  | { local: string }
  | { module: string; level: number; name: string | null; attrs: string[] };

interface PythonFileFacts {
  containers: Record<string, { framework: string; prefix: string }>;
  routes: Array<{
    container: string;
    /** null for a dispatch table that does not say which method. */
    method: string | null;
    path: string;
    style: PathStyle;
    line: number;
    framework: string | null;
    /** What the route's handler reads and declares, already in the map's shape. */
    inputs?: RouteInputs;
  }>;
  mounts: Array<{
    parent: string;
    child: PythonReference;
    prefix: string;
    style?: PathStyle;
    replace: boolean;
  }>;
  channels: Array<{ container: string; path: string; style: PathStyle; line: number; framework: string }>;
  frameworks: string[];
}

interface PythonOutput {
  files: Record<string, PythonFileFacts>;
  errors: string[];
}

export interface PythonScan {
  graph: ContainerGraph;
  channels: Array<{ path: string; file: string; line: number; framework: string }>;
  frameworks: string[];
  notes: string[];
}

export function scanPythonRoutes(root: string, files: string[], timeoutMs = 60_000): PythonScan {
  const empty: PythonScan = {
    graph: { containers: [], mounts: [], routes: [] },
    channels: [],
    frameworks: [],
    notes: [],
  };
  if (files.length === 0) return empty;
  const result = spawnSync(pythonInterpreter(), ["-c", PYTHON_ROUTE_SCRIPT], {
    input: JSON.stringify({ root, files }),
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error || result.status !== 0) {
    const reason = result.error?.message ?? result.stderr.trim().split("\n").pop() ?? `exit ${result.status}`;
    return {
      ...empty,
      notes: [`Python routes not read (python3 failed: ${reason}); ${files.length} .py files skipped`],
    };
  }
  const output = JSON.parse(result.stdout) as PythonOutput;
  const scan = toGraph(output, new Set(files));
  if (output.errors.length > 0) {
    scan.notes.push(
      `${output.errors.length} Python files did not parse, e.g. ${output.errors.slice(0, 3).join("; ")}`,
    );
  }
  return scan;
}

/**
 * The interpreter that runs the extractor: `QAAS_PYTHON` when set, else the system's own python3 (version
 * managers' shims on PATH can take seconds to start), else whatever `python3` PATH finds. The script needs
 * only the standard library.
 */
export function pythonInterpreter(): string {
  const chosen = process.env.QAAS_PYTHON;
  if (chosen) return chosen;
  return fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

function toGraph(output: PythonOutput, files: ReadonlySet<string>): PythonScan {
  const graph: ContainerGraph = { containers: [], mounts: [], routes: [] };
  const channels: PythonScan["channels"] = [];
  const frameworks = new Set<string>();
  const resolveModule = moduleResolver(files);
  for (const [file, facts] of Object.entries(output.files)) {
    for (const framework of facts.frameworks) frameworks.add(framework);
    const key = (name: string): string => `${file}#${name}`;
    for (const [name, container] of Object.entries(facts.containers)) {
      graph.containers.push({
        key: key(name),
        framework: container.framework,
        prefix: container.prefix ? normalizePathTemplate(container.prefix, "angle") : "",
      });
    }
    for (const route of facts.routes) {
      graph.routes.push({
        container: key(route.container),
        method: route.method ?? "ALL",
        path: normalizePathTemplate(route.path, route.style),
        file,
        line: route.line,
        framework: route.framework ?? undefined,
        ...(route.inputs ? { inputs: route.inputs } : {}),
      });
    }
    for (const mount of facts.mounts) {
      const child =
        "local" in mount.child ? key(mount.child.local) : resolveReference(file, mount.child, resolveModule);
      if (child === undefined) continue;
      graph.mounts.push({
        parent: key(mount.parent),
        child,
        prefix: mount.prefix ? normalizePathTemplate(mount.prefix, mount.style ?? "angle") : "",
        replacesChildPrefix: mount.replace,
      });
    }
    for (const channel of facts.channels) {
      channels.push({
        path: normalizePathTemplate(channel.path, channel.style),
        file,
        line: channel.line,
        framework: channel.framework,
      });
    }
  }
  return { graph, channels, frameworks: [...frameworks], notes: [] };
}

/** `from .users import bp` → `pkg/users.py#bp`; `include("shop.urls")` → `shop/urls.py#urlpatterns`. */
function resolveReference(
  file: string,
  reference: Exclude<PythonReference, { local: string }>,
  resolveModule: (modulePath: string, relative: boolean) => string | undefined,
): string | undefined {
  const names = [...(reference.name ? [reference.name] : []), ...reference.attrs];
  let base = reference.module.replace(/\./g, "/");
  if (reference.level > 0) {
    let folder = path.posix.dirname(file);
    for (let level = 1; level < reference.level; level += 1) folder = path.posix.dirname(folder);
    base = [folder === "." ? "" : folder, base].filter(Boolean).join("/");
  }
  // The longest module path that is a file wins; the next name is the container in it.
  for (let count = names.length - 1; count >= 0; count -= 1) {
    const modulePath = [base, ...names.slice(0, count)].filter(Boolean).join("/");
    const moduleFile = resolveModule(modulePath, reference.level > 0);
    if (moduleFile) return `${moduleFile}#${names[count]}`;
  }
  return undefined;
}

function moduleResolver(
  files: ReadonlySet<string>,
): (modulePath: string, relative: boolean) => string | undefined {
  return (modulePath, relative) => {
    const candidates =
      modulePath === "" ? ["__init__.py"] : [`${modulePath}.py`, `${modulePath}/__init__.py`];
    for (const candidate of candidates) if (files.has(candidate)) return candidate;
    if (relative || modulePath === "") return undefined;
    // Absolute imports resolve against a source folder we do not know (src/, the project folder): match by suffix.
    const matches = [...files].filter((file) =>
      candidates.some((candidate) => file.endsWith(`/${candidate}`)),
    );
    return matches.sort((left, right) => left.length - right.length)[0];
  };
}
