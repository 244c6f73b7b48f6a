import { spawn } from "node:child_process";

// Runs one test command as its own process group with a hard timeout: a hung test (a server that never
// answers, a watch mode left on) is killed with everything it started, and the run goes on.

export interface ProcessResult {
  exitCode: number | null;
  timedOut: boolean;
  /** stdout then stderr, each cut to its last `OUTPUT_LIMIT` characters. */
  stdout: string;
  stderr: string;
  durationMs: number;
}

const OUTPUT_LIMIT = 200_000;

export function runTestProcess(
  command: string,
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs: number; signal?: AbortSignal },
): Promise<ProcessResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, {
      cwd: options.cwd,
      shell: true,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...options.env, CI: "1", FORCE_COLOR: "0", NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout = (stdout + chunk.toString()).slice(-OUTPUT_LIMIT);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-OUTPUT_LIMIT);
    });
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => killGroup();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (exitCode: number | null) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ exitCode, timedOut, stdout, stderr, durationMs: Date.now() - started });
    };
    child.on("error", (error) => {
      stderr += `\n${error.message}`;
      finish(null);
    });
    child.on("close", (code) => finish(code));
  });
}
