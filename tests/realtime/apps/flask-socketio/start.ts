import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Starts app.py with Debian's Python (Flask-SocketIO, gevent) on a free port, and stops it again.

export const FLASK_APP_ROOT = path.dirname(fileURLToPath(import.meta.url));

export interface FlaskSocketIoApp {
  baseUrl: string;
  close(): Promise<void>;
}

export function startFlaskSocketIoApp(timeoutMs = 20_000): Promise<FlaskSocketIoApp> {
  const child = spawn("/usr/bin/python3", ["app.py"], {
    cwd: FLASK_APP_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(timer);
    }
  };
  return new Promise((resolve, reject) => {
    let output = "";
    let errors = "";
    const timer = setTimeout(() => {
      void close();
      reject(new Error(`app.py did not print its port within ${timeoutMs} ms: ${errors.slice(-500)}`));
    }, timeoutMs);
    child.stderr.on("data", (chunk: Buffer) => {
      errors += chunk.toString("utf8");
    });
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const port = /^(\d+)\s*$/m.exec(output)?.[1];
      if (!port) return;
      clearTimeout(timer);
      resolve({ baseUrl: `http://127.0.0.1:${port}`, close });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`app.py exited (${code}) before listening: ${errors.slice(-500)}`));
    });
  });
}
