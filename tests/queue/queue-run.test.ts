import { describe, expect, it } from "vitest";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { runWorker } from "../../src/queue/worker.ts";
import { startRun } from "../../src/run/start-run.ts";
import { RunStore } from "../../src/store/run-store.ts";
import {
  FAST_QUEUE,
  findingSeats,
  freshDatabase,
  postgresForFile,
  startQueuedRun,
  twoFinderProject,
} from "./queue-support.ts";

// Queue mode against a real PostgreSQL server: the coordinator's router hands each invocation to the
// queue, in-process workers take them, and the run's ledger, envelopes and report come out as an
// embedded run's do. Missing server binaries fail this file with what to install; it is never skipped.

const postgres = postgresForFile();

async function withWorkers<T>(url: string, count: number, work: () => Promise<T>, home: string) {
  const controller = new AbortController();
  const queues = await Promise.all(Array.from({ length: count }, () => JobQueue.open(url, FAST_QUEUE)));
  const workers = queues.map((queue, index) =>
    runWorker({
      queue,
      home,
      signal: controller.signal,
      workerId: `worker-${index + 1}`,
      pollMs: 100,
      seatFactory: findingSeats,
    }),
  );
  try {
    return { value: await work(), finished: [] as number[] };
  } finally {
    controller.abort();
    const finished = await Promise.all(workers);
    await Promise.all(queues.map((queue) => queue.close()));
    void finished;
  }
}

function summary(home: string, runId: string) {
  const store = RunStore.open(home, runId);
  const entries = store.readLedger().entries;
  return {
    agents: entries
      .filter((entry) => entry.kind === "agent_finished")
      .map((entry) => String(entry.data.agent))
      .sort(),
    fingerprints: store.readEnvelopes().map((envelope) => envelope.dedupe.fingerprint),
    seqs: entries.map((entry) => entry.seq),
    entries,
  };
}

/** Envelope ids are random per run; everything else about a finding must match. */
function withoutIds(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/env-[0-9a-f]{8}/g, "env-*"));
}

describe("queue mode", () => {
  it("runs every invocation on workers and ends with the embedded run's report", async () => {
    const project = twoFinderProject();
    const embedded = await startRun({
      home: project.home,
      configDir: project.configDir,
      mode: "tiny",
      target: project.target,
      json: true,
      seatFactory: findingSeats,
    });
    const url = await freshDatabase(postgres().url);
    const queued = await withWorkers(url, 2, () => startQueuedRun(project, url), project.home);
    const { report } = queued.value;
    expect(report.status).toBe(embedded.report.status);
    expect(withoutIds(report.findings)).toEqual(withoutIds(embedded.report.findings));
    const local = summary(project.home, embedded.runId);
    const distributed = summary(project.home, queued.value.runId);
    expect(distributed.agents).toEqual(local.agents);
    expect(distributed.fingerprints).toEqual(local.fingerprints);
    // One writer: the coordinator numbers every entry, workers' included, without a gap or a repeat.
    expect(distributed.seqs).toEqual(distributed.seqs.map((_, index) => index + 1));
    const enqueued = distributed.entries.filter((entry) => entry.kind === "job_enqueued");
    const finished = distributed.entries.filter((entry) => entry.kind === "job_finished");
    expect(enqueued.length).toBe(distributed.agents.length);
    expect(finished.map((entry) => entry.data.tries)).toEqual(enqueued.map(() => 1));
    expect(new Set(finished.map((entry) => String(entry.data.worker)))).not.toContain("undefined");
    expect(finished.every((entry) => String(entry.data.worker).startsWith("worker-"))).toBe(true);
  }, 60_000);

  it("stores a defect two workers found at once only once, as an embedded run does", async () => {
    const project = twoFinderProject();
    const embedded = await startRun({
      home: project.home,
      configDir: project.configDir,
      mode: "twins",
      target: project.target,
      json: true,
      seatFactory: findingSeats,
    });
    const url = await freshDatabase(postgres().url);
    const queued = await withWorkers(
      url,
      2,
      () => startQueuedRun(project, url, { mode: "twins" }),
      project.home,
    );
    const local = summary(project.home, embedded.runId);
    const distributed = summary(project.home, queued.value.runId);
    expect(local.fingerprints).toHaveLength(1);
    expect(distributed.fingerprints).toEqual(local.fingerprints);
    expect(distributed.entries.filter((entry) => entry.kind === "envelope_emitted")).toHaveLength(1);
    expect(queued.value.report.findings.total).toBe(embedded.report.findings.total);
  }, 60_000);
});
