import { listSourceFiles, readSource, type SourceTreeOptions } from "../routes/source-tree.ts";
import { runPythonScript } from "../source/python-script.ts";
import type { CodeAccessScan, DataAccess } from "./data-access-types.ts";
import { scanJavaScriptFile } from "./javascript-access.ts";
import { PYTHON_ACCESS_SCRIPT } from "./python-access-script.ts";

// How a target's code reaches its database: every SQL string and single-row ORM lookup in its JS/TS and
// Python source. Tests, dependencies and the golden ledger are never read (see listSourceFiles).

const JAVASCRIPT_EXTENSIONS = new Set([".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"]);
const PYTHON_EXTENSIONS = new Set([".py"]);

export interface CodeAccessOptions extends SourceTreeOptions {
  /** Passed to python3; a stuck parse must not stall an agent. */
  timeoutMs?: number;
}

export async function scanCodeAccess(root: string, options: CodeAccessOptions = {}): Promise<CodeAccessScan> {
  const scan: CodeAccessScan = {
    accesses: [],
    comparisons: [],
    modelTables: {},
    modelColumns: {},
    enablesForeignKeys: false,
    files: 0,
    truncated: false,
    problems: [],
  };
  const javascript = listSourceFiles(root, JAVASCRIPT_EXTENSIONS, options);
  for (const file of javascript.files) {
    const text = readSource(root, file);
    if (text === undefined) {
      scan.problems.push(`${file}: could not be read`);
      continue;
    }
    // Only files that mention SQL or a query API are worth a parse.
    if (!/select|insert|update|delete|find|where|Table\(|define\(|@Entity/i.test(text)) continue;
    try {
      const found = scanJavaScriptFile(file, text);
      scan.accesses.push(...found.accesses);
      scan.comparisons.push(...found.comparisons);
      Object.assign(scan.modelTables, found.modelTables);
      Object.assign(scan.modelColumns, found.modelColumns);
      scan.enablesForeignKeys ||= found.enablesForeignKeys;
    } catch (error) {
      scan.problems.push(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const python = listSourceFiles(root, PYTHON_EXTENSIONS, options);
  if (python.files.length > 0) await mergePython(scan, root, python.files, options.timeoutMs ?? 60_000);
  scan.files = javascript.files.length + python.files.length;
  scan.truncated = javascript.truncated || python.truncated;
  scan.accesses = sortByPlace(scan.accesses);
  return scan;
}

async function mergePython(
  scan: CodeAccessScan,
  root: string,
  files: string[],
  timeoutMs: number,
): Promise<void> {
  const result = await runPythonScript(
    PYTHON_ACCESS_SCRIPT,
    { root, files },
    {
      timeoutMs,
      maxOutputBytes: 64 * 1024 * 1024,
    },
  );
  if (!result.ok) {
    scan.problems.push(
      `Python sources not read (python3 failed: ${result.reason}); ${files.length} .py files skipped`,
    );
    return;
  }
  const output = JSON.parse(result.stdout) as Omit<CodeAccessScan, "files" | "truncated">;
  scan.accesses.push(...output.accesses);
  scan.comparisons.push(...output.comparisons);
  Object.assign(scan.modelTables, output.modelTables);
  Object.assign(scan.modelColumns, output.modelColumns);
  scan.enablesForeignKeys ||= output.enablesForeignKeys;
  scan.problems.push(...output.problems);
}

/** Accesses sorted by place; a write statement whose result nobody reads is a write. */
function sortByPlace(accesses: DataAccess[]): DataAccess[] {
  for (const access of accesses) {
    if (
      access.cardinality === "unknown" &&
      access.sql &&
      /^\s*\(?\s*(insert|update|delete|replace)\b/i.test(access.sql)
    ) {
      access.cardinality = "write";
      access.via = "statement";
    }
  }
  return [...accesses].sort((left, right) => left.file.localeCompare(right.file) || left.line - right.line);
}
