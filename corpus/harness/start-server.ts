import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import type { CorpusServer } from "../model/servers.ts";

// Starts one generated corpus server from its folder on a port the OS picks (PORT=0; the server prints
// the address it got), and stops its process group afterwards.

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

export async function startCorpusServer(
  corpusRoot: string,
  server: CorpusServer,
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<RunningServer> {
  const folder = path.join(corpusRoot, "servers", server.name);
  const [command, args] =
    server.stack === "node" ? [process.execPath, ["app.mjs"]] : ["/usr/bin/python3", ["-u", "app.py"]];
  const child = spawn(command, args, {
    cwd: folder,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env, PORT: "0" },
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      kill(child);
      reject(new Error(`${server.name} did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${server.name} exited with code ${code} before listening:\n${output}`));
    });
  });
  child.stdout?.removeAllListeners("data");
  child.stdout?.resume();
  child.stderr?.resume();
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => {
          kill(child, "SIGKILL");
          resolve();
        }, 5000);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        kill(child);
      }),
  };
}

function kill(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}
