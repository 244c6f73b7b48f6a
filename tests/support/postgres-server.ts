import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../../src/targets/free-port.ts";

// A throwaway PostgreSQL server for tests: initdb into a temp folder, start it on a free loopback port
// with its socket in that folder, stop it and delete everything afterwards. Uses the distribution's
// server binaries (Debian: /usr/lib/postgresql/<version>/bin). As root, PostgreSQL refuses to run, so
// the commands run as the `postgres` user and the folder is handed to it.

export interface PostgresServer {
  /** postgresql://postgres@127.0.0.1:<port>/postgres (trust authentication, loopback only). */
  url: string;
  port: number;
  version: string;
  stop(): Promise<void>;
}

export const POSTGRES_MISSING =
  "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in /usr/lib/postgresql/<version>/bin: install them with `apt-get install postgresql` (CI installs it)";

export function findPostgresBin(): { bin: string; version: string } | undefined {
  const base = "/usr/lib/postgresql";
  let versions: string[] = [];
  try {
    versions = fs.readdirSync(base).sort((left, right) => Number(right) - Number(left));
  } catch {
    return undefined;
  }
  for (const version of versions) {
    const bin = path.join(base, version, "bin");
    if (["initdb", "pg_ctl", "postgres"].every((name) => fs.existsSync(path.join(bin, name))))
      return { bin, version };
  }
  return undefined;
}

export async function startPostgres(): Promise<PostgresServer> {
  const found = findPostgresBin();
  if (!found) throw new Error(POSTGRES_MISSING);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-postgres-"));
  const data = path.join(folder, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync("chown", ["-R", "postgres:postgres", folder]);
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", path.join(found.bin, command), ...args]]
      : [path.join(found.bin, command), args];
    const result = spawnSync(file, argv as string[], { encoding: "utf8", timeout: 60_000 });
    if (result.status !== 0) {
      throw new Error(
        `${command} failed (${result.status}): ${result.stderr || result.stdout || result.error?.message}`,
      );
    }
    return result.stdout;
  };
  run("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--no-locale"]);
  const port = await freePort();
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  run("pg_ctl", [
    "-D",
    data,
    "-o",
    options,
    "-l",
    path.join(folder, "server.log"),
    "-w",
    "-t",
    "30",
    "start",
  ]);
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    version: found.version,
    async stop() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        fs.rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}
