import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyQueueRuns } from "../../src/cli/queue-runs.ts";
import { startRun } from "../../src/run/start-run.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { type PostgresServer, startPostgres } from "../support/postgres-server.ts";
import { REPO_ROOT, tempProject } from "../support/temp-config.ts";
import { freshDatabase } from "./queue-support.ts";

// The distributed mode as it is deployed, with real processes that share nothing but the queue's
// PostgreSQL and an artifacts folder (each has a store folder of its own, as on separate machines):
// `qaas sweep --queue` queues a nightly on four targets, a coordinator and three workers take them, one
// worker is SIGKILLed in the middle of an invocation and then the coordinator too, and a second
// coordinator takes over. Every run still finishes, with a whole ledger, each finding stored once, and
// the findings of an embedded run.

const run = promisify(execFile);
const BIN = path.join(REPO_ROOT, "bin/qaas.js");
const TARGETS = ["alpha", "beta", "gamma", "delta"];

// Slow enough that a worker can be killed while it is inside the invocation.
const playbook = `
export default async function (session) {
  // A worker on another machine signs in with the profile's secrets file, as the coordinator's process does.
  if (process.env.QUEUE_TEST_SECRET !== "from-the-file") throw new Error("the profile's secrets file was not loaded");
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const artifact = await session.call("put_artifact", { name: "exchange.txt", content: "GET /things/abc -> 500" });
  if (!artifact.ok) throw new Error(artifact.error);
  const emitted = await session.call("emit_envelope", {
    domain: "api",
    defect_class: "unhandled-error",
    title: "Reading a thing by a non-numeric id answers 500",
    summary: "The server fails instead of answering 400 or 404.",
    location: { kind: "endpoint", value: "GET /things/{id}" },
    evidence: [{ kind: "artifact", description: "the exchange", uri: artifact.data.uri }],
    reproduction: { steps: ["GET /things/abc"] },
    impact: "Clients see a server error.",
    severity: "medium",
    confidence: 0.9,
  });
  if (!emitted.ok) throw new Error(emitted.error);
  return { summary: "one found" };
}
`;

let server: PostgresServer;
const children: ChildProcess[] = [];
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  stopAll();
  await server?.stop();
});

/** Kills every process this file started that is still alive, by its pid. */
function stopAll() {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null || !child.pid) continue;
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {
      // Already gone (killed by the test itself, its exit not yet seen).
    }
  }
}

const logs: string[] = [];

function project() {
  const created = tempProject();
  created.addAgent({
    name: "SLOWFIND",
    yaml: {
      description: "Finds one defect, slowly.",
      layer: "discover",
      phase: "discover",
      max_turns: 5,
      tools: ["put_artifact", "emit_envelope"],
    },
    playbook,
  });
  created.addMode("tiny", { roster: ["SLOWFIND"], budget: { usd: 1 } });
  const artifacts = path.join(created.dir, "shared-artifacts");
  created.patchSystem((system) => {
    system.queue = { artifacts: { folder: artifacts } };
  });
  fs.writeFileSync(
    path.join(created.configDir, "targets", "queue.secrets.env"),
    "QUEUE_TEST_SECRET=from-the-file\n",
  );
  const targets = TARGETS.map((name) =>
    created.addTarget(name, {
      source: { path: "../.." },
      environment: { mode: "none", secrets_file: "queue.secrets.env" },
    }),
  );
  return { ...created, targets, artifacts, homeOf: (id: string) => path.join(created.dir, "homes", id) };
}

function worker(url: string, home: string, id: string, role: string): ChildProcess {
  const child = spawn(process.execPath, [BIN, "--home", home, "worker", "--id", id, "--role", role], {
    env: { ...process.env, QAAS_QUEUE_URL: url, QAAS_QUEUE_LEASE_SECONDS: "3" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr?.on("data", (chunk: Buffer) => logs.push(`${id}: ${chunk.toString()}`));
  children.push(child);
  return child;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 90): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("queue mode with processes", () => {
  it("finishes every run of a four-target nightly through a killed worker and a killed coordinator", async () => {
    const { home, configDir, targets, artifacts, homeOf } = project();
    const url = await freshDatabase(server.url);
    const database = new pg.Client({ connectionString: url });
    const coordinator = worker(url, homeOf("coordinator-1"), "coordinator-1", "coordinator");
    const workers = ["worker-1", "worker-2", "worker-3"].map((id) =>
      worker(url, homeOf(id), id, "invocations"),
    );
    try {
      const queued = await run(
        process.execPath,
        [
          BIN,
          "--home",
          home,
          "sweep",
          "--queue",
          "--mode",
          "tiny",
          "--config",
          configDir,
          "--target",
          ...targets,
          "--json",
        ],
        { env: { ...process.env, QAAS_QUEUE_URL: url, QAAS_QUEUE_LEASE_SECONDS: "3" } },
      );
      expect(JSON.parse(queued.stdout).runs).toHaveLength(4);
      await database.connect();

      // A worker inside an invocation: SIGKILL it, leaving its job leased.
      const busy = await until("a worker inside an invocation", async () => {
        const { rows } = await database.query(
          "SELECT pid FROM qaas_worker WHERE id LIKE 'worker-%' AND current_job IS NOT NULL LIMIT 1",
        );
        return rows[0] ? Number(rows[0].pid) : undefined;
      });
      const victim = workers.find((child) => child.pid === busy);
      expect(victim).toBeDefined();
      process.kill(busy, "SIGKILL");

      // Then the coordinator, while it still has runs to finish; a second one takes them over.
      await until("a finished invocation", async () => {
        const { rows } = await database.query(
          "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'qaas-invocation' AND state = 'completed'",
        );
        return rows[0].n >= 1 ? true : undefined;
      });
      if (coordinator.pid) process.kill(coordinator.pid, "SIGKILL");
      worker(url, homeOf("coordinator-2"), "coordinator-2", "coordinator");

      await until(
        "every run job completed",
        async () => {
          const { rows } = await database.query(
            "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'qaas-run' AND state = 'completed'",
          );
          return rows[0].n === 4 ? true : undefined;
        },
        120,
      );
    } finally {
      await database.end().catch(() => {});
      stopAll();
      // What each process said, kept beside the store for a failure's post-mortem.
      fs.mkdirSync(home, { recursive: true });
      fs.writeFileSync(path.join(home, "workers.log"), logs.join(""));
    }

    // Read as any machine reads them: from the queue's store.
    await copyQueueRuns(url, home);
    const runIds = fs.readdirSync(path.join(home, "runs")).sort();
    expect(runIds).toHaveLength(4);
    // Each run's evidence reached the shared artifacts folder from whichever worker wrote it.
    expect(runIds.map((runId) => fs.existsSync(path.join(artifacts, runId, "exchange.txt")))).toEqual(
      runIds.map(() => true),
    );
    const embeddedHome = homeOf("embedded");
    const embedded = await startRun({
      home: embeddedHome,
      configDir,
      mode: "tiny",
      target: targets[0]!,
      json: true,
    });
    const embeddedFindings = RunStore.open(embeddedHome, embedded.runId)
      .readEnvelopes()
      .map((envelope) => envelope.dedupe.fingerprint);
    let retried = 0;
    for (const runId of runIds) {
      const store = RunStore.open(home, runId);
      const { entries, warnings } = store.readLedger();
      expect(warnings).toEqual([]);
      expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => index + 1));
      expect(entries.filter((entry) => entry.kind === "run_finished")).toHaveLength(1);
      expect(entries.filter((entry) => entry.kind === "envelope_emitted")).toHaveLength(1);
      expect(store.readEnvelopes().map((envelope) => envelope.dedupe.fingerprint)).toEqual(embeddedFindings);
      retried += entries.filter(
        (entry) => entry.kind === "job_finished" && Number(entry.data.tries) > 1,
      ).length;
    }
    expect(retried).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
