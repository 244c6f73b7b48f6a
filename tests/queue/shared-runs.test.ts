import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { copyQueueRuns } from "../../src/cli/queue-runs.ts";
import { buildShowView } from "../../src/cli/show-view.ts";
import { RUN_QUEUE } from "../../src/queue/invocation-job.ts";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { coordinateRuns } from "../../src/queue/run-coordinator.ts";
import { materializeRun, RunPublisher } from "../../src/queue/shared-runs.ts";
import { runWorker } from "../../src/queue/worker.ts";
import { RunStore } from "../../src/store/run-store.ts";
import {
  FAST_QUEUE,
  findingSeats,
  freshDatabase,
  postgresForFile,
  queueDatabase,
  startQueuedRun,
  twoFinderProject,
} from "./queue-support.ts";

// Queue mode keeps each run in the queue's PostgreSQL too: a machine that never saw the coordinator's
// folder reads it (`--queue` on runs/show/score/report) and a coordinator elsewhere takes it over.

const postgres = postgresForFile();

function emptyHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "qaas-elsewhere-"));
}

/** A run of the tiny project in queue mode, two in-process workers taking its invocations. */
async function queuedRun() {
  const project = twoFinderProject();
  const url = await freshDatabase(postgres().url);
  const controller = new AbortController();
  const queues = await Promise.all([1, 2].map(() => JobQueue.open(url, FAST_QUEUE)));
  const workers = queues.map((queue, index) =>
    runWorker({
      queue,
      home: project.home,
      signal: controller.signal,
      workerId: `worker-${index + 1}`,
      pollMs: 100,
      seatFactory: findingSeats,
    }),
  );
  try {
    const outcome = await startQueuedRun(project, url);
    return { project, url, runId: outcome.runId };
  } finally {
    controller.abort();
    await Promise.all(workers);
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

describe("runs in the queue's store", () => {
  it("reads a queue run on a machine that never saw the coordinator's folder, as the coordinator reads it", async () => {
    const { project, url, runId } = await queuedRun();
    const elsewhere = emptyHome();
    await copyQueueRuns(url, elsewhere);

    expect(RunStore.list(elsewhere)).toEqual(RunStore.list(project.home));
    const local = RunStore.open(project.home, runId);
    const copied = RunStore.open(elsewhere, runId);
    expect(fs.readFileSync(copied.ledgerPath, "utf8")).toBe(fs.readFileSync(local.ledgerPath, "utf8"));
    expect(copied.readEnvelopes()).toEqual(local.readEnvelopes());
    expect(copied.readEnvelopes()).toHaveLength(1);
    expect(copied.readReport()).toEqual(local.readReport());
    expect(buildShowView(copied)).toEqual(buildShowView(local));
    expect(copied.summary().status).toBe("completed");
  }, 60_000);

  it("publishes only what changed, and never overwrites a local copy that is as far along", async () => {
    const project = twoFinderProject();
    const { sql } = await queueDatabase(postgres().url);
    const store = RunStore.create(project.home, { mode: "tiny", target: "tiny" });
    store.append("run_started", { mode: "tiny" });
    const publisher = new RunPublisher(sql, store);
    await publisher.push();
    const counted = async () =>
      (await sql<{ n: number }>("SELECT count(*)::integer AS n FROM qaas_run_entry", []))[0]?.n;
    expect(await counted()).toBe(1);

    store.append("warning", { message: "one more" });
    await publisher.push();
    await publisher.push();
    expect(await counted()).toBe(2);

    const elsewhere = emptyHome();
    expect(await materializeRun(sql, elsewhere, store.runId)).toBe(true);
    // This machine's copy got further than the store: a second read leaves it alone.
    const copy = RunStore.open(elsewhere, store.runId);
    copy.append("warning", { message: "only here" });
    expect(await materializeRun(sql, elsewhere, store.runId)).toBe(false);
    expect(copy.readLedger().entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    // Behind the store: brought up to date.
    store.append("warning", { message: "two more" });
    store.append("warning", { message: "three more" });
    await publisher.push();
    expect(await materializeRun(sql, elsewhere, store.runId)).toBe(true);
    expect(copy.readLedger().entries.map((entry) => entry.data.message)).toEqual([
      undefined,
      "one more",
      "two more",
      "three more",
    ]);
  }, 30_000);

  it("extends a copy that is behind in place, and replaces one that went its own way", async () => {
    const project = twoFinderProject();
    const { sql } = await queueDatabase(postgres().url);
    const store = RunStore.create(project.home, { mode: "tiny", target: "tiny" });
    store.append("run_started", { mode: "tiny" });
    const publisher = new RunPublisher(sql, store);
    await publisher.push();
    const elsewhere = emptyHome();
    await materializeRun(sql, elsewhere, store.runId);
    const copy = RunStore.open(elsewhere, store.runId);
    const inode = fs.statSync(copy.ledgerPath).ino;

    store.append("warning", { message: "one more" });
    fs.writeFileSync(path.join(store.dir, "report.json"), '{ "status": "running" }\n');
    await publisher.push();
    expect(await materializeRun(sql, elsewhere, store.runId)).toBe(true);
    // Only the missing entry was fetched and appended: the file is the one that was there.
    expect(fs.statSync(copy.ledgerPath).ino).toBe(inode);
    expect(fs.readFileSync(copy.ledgerPath, "utf8")).toBe(fs.readFileSync(store.ledgerPath, "utf8"));
    expect(fs.readFileSync(path.join(copy.dir, "report.json"), "utf8")).toBe('{ "status": "running" }\n');

    // A copy whose last line a crash cut still holds every published entry: left as it is.
    fs.appendFileSync(copy.ledgerPath, '{"seq":3,"at":"2026');
    expect(await materializeRun(sql, elsewhere, store.runId)).toBe(false);
    expect(copy.readLedger().entries).toHaveLength(2);
    // Behind the store, it is written anew rather than appended to after the cut line.
    store.append("warning", { message: "after the cut" });
    await publisher.push();
    expect(await materializeRun(sql, elsewhere, store.runId)).toBe(true);
    expect(fs.readFileSync(copy.ledgerPath, "utf8")).toBe(fs.readFileSync(store.ledgerPath, "utf8"));

    // A copy whose last entry the store does not hold (its writer died before publishing it, and another
    // coordinator went on) is replaced by the store's ledger.
    copy.append("warning", { message: "only here" });
    store.append("warning", { message: "published elsewhere" });
    store.append("warning", { message: "and one more" });
    await publisher.push();
    expect(await materializeRun(sql, elsewhere, store.runId)).toBe(true);
    expect(fs.readFileSync(copy.ledgerPath, "utf8")).toBe(fs.readFileSync(store.ledgerPath, "utf8"));
  }, 30_000);

  it("says so when a queue holds no runs, and refuses a file the store names outside a run folder", async () => {
    const bare = await freshDatabase(postgres().url);
    await expect(copyQueueRuns(bare, emptyHome())).rejects.toThrow(
      /no run has been published to postgresql:/,
    );
    const { sql } = await queueDatabase(postgres().url);
    await sql("INSERT INTO qaas_run_file (run_id, name, content, digest) VALUES ($1, $2, $3, $4)", [
      "20261206-000000-abcd",
      "../../escaped.json",
      "{}",
      "x",
    ]);
    await sql("INSERT INTO qaas_run_entry (run_id, seq, line) VALUES ($1, 1, $2)", [
      "20261206-000000-abcd",
      "{}",
    ]);
    const home = emptyHome();
    await expect(materializeRun(sql, home, "20261206-000000-abcd")).rejects.toThrow(
      /holds a file named "..\/..\/escaped.json"/,
    );
    expect(fs.existsSync(path.join(home, "escaped.json"))).toBe(false);
  }, 30_000);

  it("lets a coordinator on another machine take a stopped run over from the queue's store", async () => {
    const project = twoFinderProject();
    const url = await freshDatabase(postgres().url);
    // The first coordinator stops as soon as the run exists, before any agent ran.
    const stop = new AbortController();
    const first = await startQueuedRun(project, url, {
      signal: stop.signal,
      onRunCreated: async () => stop.abort(),
    });
    expect(first.report.findings.total).toBe(0);
    const runId = first.runId;
    const queue = await JobQueue.open(url, FAST_QUEUE);
    const workerQueue = await JobQueue.open(url, FAST_QUEUE);
    const elsewhere = emptyHome();
    const controller = new AbortController();
    try {
      const jobId = await queue.boss.send(RUN_QUEUE, {
        target_file: project.target,
        mode: "tiny",
        config_dir: project.configDir,
        run_id: runId,
      });
      const coordinating = coordinateRuns({
        queue,
        home: elsewhere,
        signal: controller.signal,
        workerId: "coordinator-elsewhere",
        pollMs: 100,
      });
      const working = runWorker({
        queue: workerQueue,
        home: project.home,
        signal: controller.signal,
        workerId: "worker-1",
        pollMs: 100,
        seatFactory: findingSeats,
      });
      let state: string | undefined;
      for (let wait = 0; wait < 300 && state !== "completed" && state !== "failed"; wait += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        state = (await queue.boss.getJobById(RUN_QUEUE, String(jobId)))?.state;
      }
      controller.abort();
      await Promise.all([coordinating, working]);
      expect(state).toBe("completed");
    } finally {
      controller.abort();
      await queue.close();
      await workerQueue.close();
    }
    // Resumed from the store's copy on the other machine, finished there, and published for every reader.
    const taken = RunStore.open(elsewhere, runId);
    expect(taken.summary().status).toBe("completed");
    expect(taken.readLedger().entries.some((entry) => entry.kind === "run_resumed")).toBe(true);
    expect(taken.readEnvelopes()).toHaveLength(1);
    const reader = emptyHome();
    await copyQueueRuns(url, reader);
    expect(RunStore.open(reader, runId).summary()).toEqual(taken.summary());
  }, 60_000);
});
