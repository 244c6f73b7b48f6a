import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// The source readers' Python helpers (an `ast` walk over a target's .py files) run in a child process that
// the run waits for without holding its event loop: a synchronous spawn stalls every agent's requests for
// as long as the parse takes (seconds on a busy machine), and their timeouts then fire on answers that
// had arrived.

/**
 * The interpreter: `QAAS_PYTHON` when set, else the system's own python3 (version managers' shims on PATH
 * can take seconds to start), else whatever `python3` PATH finds. The scripts need only the standard library.
 */
export function pythonInterpreter(): string {
  const chosen = process.env.QAAS_PYTHON;
  if (chosen) return chosen;
  return fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

let scriptFolder: string | undefined;
const scriptFiles = new Map<string, string>();

/**
 * The script as a file for the interpreter to run. Passed with `-c` it would be one argument, which the
 * kernel caps at 128 KiB (E2BIG), and the route reader is that long. One private folder per process.
 */
export function pythonScriptFile(script: string): string {
  const known = scriptFiles.get(script);
  if (known) return known;
  scriptFolder ??= fs.mkdtempSync(path.join(os.tmpdir(), "qaas-python-"));
  const file = path.join(scriptFolder, `script-${scriptFiles.size + 1}.py`);
  fs.writeFileSync(file, script);
  scriptFiles.set(script, file);
  return file;
}

export type PythonResult = { ok: true; stdout: string } | { ok: false; reason: string };

/** Runs `script` with `input` as JSON on its standard input; its standard output, or why it failed. */
export function runPythonScript(
  script: string,
  input: unknown,
  options: { timeoutMs: number; maxOutputBytes: number },
): Promise<PythonResult> {
  return new Promise((resolve) => {
    const child = spawn(pythonInterpreter(), [pythonScriptFile(script)], { stdio: ["pipe", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let failure: string | undefined;
    const stop = (reason: string): void => {
      failure ??= reason;
      child.kill();
    };
    const timer = setTimeout(() => stop(`no answer within ${options.timeoutMs} ms`), options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxOutputBytes) stop(`output over ${options.maxOutputBytes} bytes`);
      else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    // A child that dies before reading its input closes the pipe: that is its exit status's to explain.
    child.stdin.on("error", () => {});
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: error.message });
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      if (failure) return resolve({ ok: false, reason: failure });
      if (status === 0) return resolve({ ok: true, stdout: Buffer.concat(stdout).toString("utf8") });
      const last = Buffer.concat(stderr).toString("utf8").trim().split("\n").pop();
      resolve({ ok: false, reason: last || (signal ? `stopped by ${signal}` : `exit ${status}`) });
    });
    child.stdin.end(JSON.stringify(input));
  });
}
