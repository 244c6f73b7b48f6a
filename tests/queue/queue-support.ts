import pg from "pg";
import { afterAll, beforeAll, onTestFinished } from "vitest";
import { JobQueue } from "../../src/queue/job-queue.ts";
import type { SqlRunner } from "../../src/queue/shared-runs.ts";
import { type RunOptions, startRun } from "../../src/run/start-run.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { type PostgresServer, startPostgres } from "../support/postgres-server.ts";
import { wrongStatusDraft } from "../support/sample-draft.ts";
import { tempProject } from "../support/temp-config.ts";

// Shared by the queue tests: a fresh database per test on one throw-away server, and a tiny project
// whose discovery agents are MockSeats emitting one finding each.

let databases = 0;

/**
 * One throw-away PostgreSQL server for the calling test file, started before its tests and stopped after
 * them. Missing server binaries fail the file with what to install; it is never skipped.
 */
export function postgresForFile(): () => PostgresServer {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error("the test file's PostgreSQL server has not started");
    return server;
  };
}

/** A new empty database on the server, so each test's queue starts with no jobs. */
export async function freshDatabase(serverUrl: string): Promise<string> {
  databases += 1;
  const name = `queue_${process.pid}_${databases}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** FINDER and TWIN discover concurrently and report the same defect, worded alike. */
export function twoFinderProject() {
  const project = tempProject();
  for (const name of ["FINDER", "TWIN"]) {
    project.addAgent({
      name,
      yaml: {
        description: "Finds the wrong status on POST /items.",
        layer: "discover",
        phase: "discover",
        tools: ["emit_envelope"],
      },
    });
  }
  project.addMode("tiny", { roster: ["FINDER"], budget: { usd: 1 } });
  project.addMode("twins", { roster: ["FINDER", "TWIN"], budget: { usd: 1 } });
  const target = project.addTarget("tiny", { source: { path: "../.." }, environment: { mode: "none" } });
  return { ...project, target };
}

/** Every discovery agent emits the same finding; any other agent finishes at once. */
export const findingSeats = (_ref: unknown, agent: { config: { name: string } }) =>
  ["FINDER", "TWIN"].includes(agent.config.name)
    ? new MockSeat({
        run: { script: [{ tool: "emit_envelope", input: wrongStatusDraft(0.9) }, { finish: "one found" }] },
      })
    : new MockSeat({ run: { script: [{ finish: "nothing to do" }] } });

/** Short leases and maintenance, so that tests see expiry and retries within seconds. */
export const FAST_QUEUE = { leaseSeconds: 2, maintenanceSeconds: 1, tries: 3 };

/** A fresh database with the queue's tables, and a few connections to it that close when the test ends. */
export async function queueDatabase(serverUrl: string): Promise<{ url: string; sql: SqlRunner }> {
  const url = await freshDatabase(serverUrl);
  await (await JobQueue.open(url, FAST_QUEUE)).close();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  onTestFinished(() => pool.end().catch(() => {}));
  return { url, sql: async (text, values) => (await pool.query(text, values)).rows };
}

/** A run of the project's `tiny` mode coordinated here in queue mode; workers take its invocations. */
export function startQueuedRun(
  project: { home: string; configDir: string; target: string },
  url: string,
  extra: Partial<RunOptions> = {},
) {
  return startRun({
    home: project.home,
    configDir: project.configDir,
    mode: "tiny",
    target: project.target,
    json: true,
    queueUrl: url,
    queueSettings: FAST_QUEUE,
    ...extra,
  });
}
