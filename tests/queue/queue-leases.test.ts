import { describe, expect, it } from "vitest";
import { QaasError } from "../../src/errors.ts";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { resolveQueueUrl } from "../../src/queue/queue-url.ts";
import { runWorker } from "../../src/queue/worker.ts";
import { RunStore } from "../../src/store/run-store.ts";
import {
  findingSeats,
  freshDatabase,
  postgresForFile,
  startQueuedRun,
  twoFinderProject,
} from "./queue-support.ts";

// Crash-only on the queue: a worker that took a job and died (here: a fetch whose job is never
// finished, which is all a SIGKILLed worker leaves behind) holds its lease until it runs out; then
// another worker runs the invocation as a new try, and after the last allowed try the invocation is
// dead-lettered and the run goes on without it. And the errors a person meets before any of that.

const postgres = postgresForFile();

async function runWithAbandonedTries(abandon: number, tries: number) {
  const project = twoFinderProject();
  const url = await freshDatabase(postgres().url);
  const settings = { leaseSeconds: 1, maintenanceSeconds: 1, tries };
  const dead = await JobQueue.open(url, settings);
  const live = await JobQueue.open(url, settings);
  const controller = new AbortController();
  let abandoned = 0;
  // The dead worker: takes the first `abandon` tries and never finishes them.
  const deadWorker = (async () => {
    while (abandoned < abandon && !controller.signal.aborted) {
      const job = await dead.fetchInvocation();
      if (job) abandoned += 1;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  let liveWorker: Promise<number> | undefined;
  try {
    const run = startQueuedRun(project, url, { queueSettings: settings });
    await deadWorker;
    liveWorker = runWorker({
      queue: live,
      home: project.home,
      signal: controller.signal,
      workerId: "survivor",
      pollMs: 100,
      seatFactory: findingSeats,
    });
    const outcome = await run;
    const entries = RunStore.open(project.home, outcome.runId).readLedger().entries;
    return { outcome, entries, store: RunStore.open(project.home, outcome.runId) };
  } finally {
    controller.abort();
    await liveWorker;
    await dead.close();
    await live.close();
  }
}

describe("queue leases", () => {
  it("gives a dead worker's invocation to another worker once its lease runs out, counted as a try", async () => {
    const { outcome, entries, store } = await runWithAbandonedTries(1, 3);
    const finder = entries.find((entry) => entry.kind === "job_finished" && entry.data.agent === "FINDER");
    expect(finder?.data).toMatchObject({ worker: "survivor", tries: 2 });
    expect(outcome.report.status).toBe("completed");
    // The killed try recorded nothing; the finished one filed the finding once.
    expect(store.readEnvelopes()).toHaveLength(1);
    expect(
      entries.filter((entry) => entry.kind === "agent_started" && entry.agent === "FINDER"),
    ).toHaveLength(1);
  }, 90_000);

  it("dead-letters an invocation after its last allowed try and the run ends without it", async () => {
    const { entries, store } = await runWithAbandonedTries(2, 2);
    const finder = entries.find((entry) => entry.kind === "job_finished" && entry.data.agent === "FINDER");
    expect(finder?.data).toMatchObject({ dead_lettered: true, tries: 2 });
    expect(String(finder?.data.error)).toMatch(/timeout/);
    expect(store.readEnvelopes()).toHaveLength(0);
    expect(entries.some((entry) => entry.kind === "run_finished")).toBe(true);
  }, 90_000);
});

describe("queue errors", () => {
  it("says what is wrong with a queue URL and where to put it", () => {
    expect(() => resolveQueueUrl(undefined, {})).toThrow(/pass --queue .*QAAS_QUEUE_URL/);
    expect(() => resolveQueueUrl("redis://cache:6379", {})).toThrow(/uses redis; the queue is PostgreSQL/);
    expect(() => resolveQueueUrl("secret_ref:QUEUE_DSN", {})).toThrow(/QUEUE_DSN is not set/);
    expect(resolveQueueUrl("secret_ref:QUEUE_DSN", { QUEUE_DSN: "postgresql://q@db/queue" })).toBe(
      "postgresql://q@db/queue",
    );
    expect(resolveQueueUrl(undefined, { QAAS_QUEUE_URL: "postgres://q@db/queue" })).toBe(
      "postgres://q@db/queue",
    );
  });

  it("names the unreachable server without its password, and a database that does not exist", async () => {
    const closed = `postgresql://qaas:hunter2@127.0.0.1:${postgres().port + 1}/queue`;
    const refused = await JobQueue.open(closed).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QaasError);
    expect((refused as QaasError).message).toMatch(
      new RegExp(`unreachable at postgresql://qaas:\\*\\*\\*@127.0.0.1:${postgres().port + 1}/queue`),
    );
    expect((refused as QaasError).message).not.toContain("hunter2");
    const missing = new URL(postgres().url);
    missing.pathname = "/no_such_database";
    const absent = await JobQueue.open(missing.toString()).catch((error: unknown) => error);
    expect((absent as QaasError).message).toMatch(/database does not exist at .*no_such_database/);
  }, 30_000);
});
