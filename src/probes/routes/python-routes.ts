import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pythonInterpreter, pythonScriptFile } from "../source/python-script.ts";
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

const EMPTY: PythonScan = {
  graph: { containers: [], mounts: [], routes: [] },
  channels: [],
  frameworks: [],
  notes: [],
};
const MAX_OUTPUT = 64 * 1024 * 1024;

export function scanPythonRoutes(root: string, files: string[], timeoutMs = 60_000): PythonScan {
  if (files.length === 0) return structuredClone(EMPTY);
  const result = spawnSync(pythonInterpreter(), [pythonScriptFile(PYTHON_ROUTE_SCRIPT)], {
    input: JSON.stringify({ root, files }),
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: MAX_OUTPUT,
  });
  const failure =
    result.error?.message ?? (result.status !== 0 ? lastLine(result.stderr, result.status) : undefined);
  return finishScan(failure, result.stdout, files);
}

/**
 * Starts the Python extractor in a child process and answers its scan later, so the caller can read the
 * JavaScript files meanwhile. The request goes through a file: a pipe would fill while the caller is busy.
 */
export function startPythonRoutes(
  root: string,
  files: string[],
  timeoutMs = 60_000,
): () => Promise<PythonScan> {
  if (files.length === 0) return async () => structuredClone(EMPTY);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-routes-"));
  const requestFile = path.join(folder, "request.json");
  fs.writeFileSync(requestFile, JSON.stringify({ root, files }));
  const input = fs.openSync(requestFile, "r");
  const child = spawn(pythonInterpreter(), [pythonScriptFile(PYTHON_ROUTE_SCRIPT)], {
    stdio: [input, "pipe", "pipe"],
  });
  fs.closeSync(input);
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let size = 0;
  child.stdout?.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_OUTPUT) child.kill();
    else stdout.push(chunk);
  });
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
  const started = Date.now();
  const done = new Promise<PythonScan>((resolve) => {
    const finish = (failure: string | undefined): void => {
      clearTimeout(timer);
      fs.rmSync(folder, { recursive: true, force: true });
      resolve(finishScan(failure, Buffer.concat(stdout).toString("utf8"), files));
    };
    // The timeout counts from the start, while the caller may still be busy: checked once it listens.
    const timer = setTimeout(() => child.kill(), Math.max(1, timeoutMs - (Date.now() - started)));
    child.on("error", (error) => finish(error.message));
    child.on("close", (status, signal) =>
      finish(
        status === 0
          ? undefined
          : signal
            ? `stopped by ${signal}`
            : lastLine(Buffer.concat(stderr).toString("utf8"), status),
      ),
    );
  });
  return () => done;
}

function lastLine(stderr: string, status: number | null): string {
  return stderr.trim().split("\n").pop() || `exit ${status}`;
}

function finishScan(failure: string | undefined, stdout: string, files: string[]): PythonScan {
  if (failure !== undefined) {
    return {
      ...structuredClone(EMPTY),
      notes: [`Python routes not read (python3 failed: ${failure}); ${files.length} .py files skipped`],
    };
  }
  const output = JSON.parse(stdout) as PythonOutput;
  const scan = toGraph(output, new Set(files));
  if (output.errors.length > 0) {
    scan.notes.push(
      `${output.errors.length} Python files not (fully) read, e.g. ${output.errors.slice(0, 3).join("; ")}`,
    );
  }
  return scan;
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
