import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { QaasError } from "../errors.ts";
import type { LoadedTarget } from "../tools/context.ts";
import { blockedPortReason } from "./blocked-ports.ts";
import { SECRET_REF } from "./profile-schema.ts";
import { loadProfileSecrets, resolveSecret } from "./secrets.ts";

// Brings a target's environment up for a run and down after it. `managed` targets are reset, started and
// stopped with the profile's own commands; `external` ones are only checked for health; `none` is static.

export interface PreparedEnvironment {
  mode: string;
  baseUrl: string | undefined;
  /** The process group qaas started, if any. */
  readonly pid: number | undefined;
  /** Managed targets only: stops what is left of the server and starts it again (no reset, no seed). */
  restart?(): Promise<void>;
  stop(): Promise<void>;
}

export interface PrepareOptions {
  /** Where qaas keeps the pid of a managed target, so a killed run's server can be stopped on resume. */
  home: string;
  /**
   * The process group of a server this run started on this machine and never stopped: its coordinator was
   * killed, and another process (with a home of its own) takes the run over. Stopped before starting anew.
   */
  leftoverPid?: number;
  log(message: string): void;
}

export async function prepareEnvironment(
  target: LoadedTarget,
  options: PrepareOptions,
): Promise<PreparedEnvironment> {
  const { profile } = target;
  const environment = profile.environment;
  loadProfileSecrets(target);
  const baseUrl = environment.base_url;
  const idle: PreparedEnvironment = { mode: environment.mode, baseUrl, pid: undefined, stop: async () => {} };
  if (environment.mode === "none" || !baseUrl) return idle;
  const healthUrl = new URL(environment.health_path, baseUrl).toString();

  if (environment.mode !== "managed") {
    if (!(await isHealthy(healthUrl))) {
      throw new QaasError(
        "TARGET_UNREACHABLE",
        `target ${profile.name} does not answer at ${healthUrl}; start it, or fix environment.base_url/health_path in ${target.file}`,
      );
    }
    return idle;
  }

  if (!environment.start) {
    throw new QaasError(
      "TARGET_NO_START",
      `target ${profile.name} is managed but has no environment.start command (${target.file})`,
    );
  }
  const cwd = target.root ?? path.dirname(target.file);
  const pidFile = path.join(options.home, "environments", `${profile.name}.pid`);
  await stopLeftover(pidFile, options.log);
  if (options.leftoverPid !== undefined) await stopProcessGroup(options.leftoverPid, options.log);
  if (await isHealthy(healthUrl)) {
    throw new QaasError(
      "TARGET_PORT_BUSY",
      `something already answers at ${healthUrl}; qaas starts managed target ${profile.name} itself — stop that process first`,
    );
  }
  const statementLog = profile.database?.statement_log;
  const env = { ...process.env, ...resolveEnv(statementLog?.env), ...resolveEnv(environment.start.env) };
  const start = environment.start.command;
  fs.mkdirSync(path.dirname(pidFile), { recursive: true });

  /** Starts the server and waits until it is healthy; a failure stops what it started. */
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(start, {
      cwd,
      shell: true,
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env,
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    if (child.pid) fs.writeFileSync(pidFile, String(child.pid));
    const deadline = Date.now() + environment.startup_timeout_seconds * 1000;
    while (!(await isHealthy(healthUrl))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        killGroup(child);
        throw new QaasError(
          "TARGET_START_FAILED",
          `target ${profile.name} did not become healthy at ${healthUrl} within ${environment.startup_timeout_seconds}s` +
            (child.exitCode !== null ? ` (it exited with code ${child.exitCode})` : "") +
            (blockedPortReason(healthUrl) ? `: ${blockedPortReason(healthUrl)}` : "") +
            (stderr ? `; its last output:\n${stderr.trim()}` : ""),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return child;
  };

  options.log(`environment: starting ${profile.name} (${start})`);
  let child = await launch();
  // Reset and seed run against the live target, so a reset endpoint and a reset script both work.
  for (const [step, command] of [
    ["resetting", environment.reset],
    ["seeding", environment.seed],
  ] as const) {
    if (!command) continue;
    options.log(`environment: ${step} ${profile.name}`);
    try {
      await runCommand(command.command, cwd, command.env, command.timeout_seconds ?? 60);
    } catch (error) {
      killGroup(child);
      throw error;
    }
  }
  return {
    mode: environment.mode,
    baseUrl,
    get pid() {
      return child.pid;
    },
    // A server that died mid-run comes back as it was left: its data stays, nothing is reset or seeded
    // again (that would wipe what the run's other probes created and rely on).
    async restart() {
      killGroup(child);
      await waitForExit(child, 5000);
      options.log(`environment: restarting ${profile.name} (${start})`);
      child = await launch();
    },
    async stop() {
      if (environment.stop) {
        await runCommand(
          environment.stop.command,
          cwd,
          environment.stop.env,
          environment.stop.timeout_seconds ?? 30,
        ).catch(() => {});
      }
      killGroup(child);
      await waitForExit(child, 5000);
      fs.rmSync(pidFile, { force: true });
    },
  };
}

export async function isHealthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status < 500;
  } catch {
    return false;
  }
}

/** A run killed with SIGKILL leaves its managed server running; stop it before starting a new one. */
async function stopLeftover(pidFile: string, log: (message: string) => void): Promise<void> {
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
  fs.rmSync(pidFile, { force: true });
  await stopProcessGroup(pid, log);
}

async function stopProcessGroup(pid: number, log: (message: string) => void): Promise<void> {
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(-pid, "SIGTERM");
    log(`environment: stopped a server left running by an earlier run (pid ${pid})`);
  } catch {
    return;
  }
  for (let waited = 0; waited < 5000; waited += 100) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function killGroup(child: ChildProcess): void {
  if (!child.pid || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    // already gone
  }
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      resolve();
    }, timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export function runCommand(
  command: string,
  cwd: string,
  env: Record<string, string> | undefined,
  timeoutSeconds: number,
) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, {
      cwd,
      shell: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ...env },
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutSeconds * 1000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new QaasError(
            "TARGET_COMMAND_FAILED",
            `\`${command}\` failed with code ${code} in ${cwd}: ${stderr.trim()}`,
          ),
        );
    });
  });
}

/** A command's environment with every `secret_ref:NAME` value read now, at use time. */
function resolveEnv(env: Record<string, string> | undefined): Record<string, string> {
  if (!env) return {};
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [name, SECRET_REF.test(value) ? resolveSecret(value) : value]),
  );
}
