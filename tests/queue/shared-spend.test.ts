import { describe, expect, it } from "vitest";
import { RequestBudget } from "../../src/probes/http/http-client.ts";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { shareAgentSpend } from "../../src/queue/shared-spend.ts";
import { runWorker } from "../../src/queue/worker.ts";
import {
  FAST_QUEUE,
  findingSeats,
  postgresForFile,
  queueDatabase,
  startQueuedRun,
  twoFinderProject,
} from "./queue-support.ts";

// An agent's request budget holds for the whole run however many workers run its invocations.

const postgres = postgresForFile();

function spend(budget: RequestBudget, requests: number): number {
  let sent = 0;
  while (sent < requests && budget.take()) sent += 1;
  return sent;
}

describe("an agent's request budget over several workers", () => {
  it("starts a job from what the agent spent elsewhere in the run and learns what the others spend", async () => {
    const { sql } = await queueDatabase(postgres().url);
    const key = { runId: "20261206-000000-aaaa", agent: "AUDITOR" };
    const first = new RequestBudget(10);
    const firstSpend = await shareAgentSpend(sql, key, first);
    expect(spend(first, 6)).toBe(6);
    await firstSpend.flush();

    // A second job of the agent (another worker, or the retry of a killed one) has 4 left, not 10.
    const second = new RequestBudget(10);
    const secondSpend = await shareAgentSpend(sql, key, second);
    expect(second.remaining()).toBe(4);
    // Both send at once; after a flush each counts what the other sent.
    expect(spend(first, 1)).toBe(1);
    expect(spend(second, 2)).toBe(2);
    await firstSpend.flush();
    await secondSpend.flush();
    await firstSpend.flush();
    expect(first.remaining()).toBe(1);
    expect(second.remaining()).toBe(1);
    // Another agent, or the same agent in another run, has its own count.
    const other = new RequestBudget(10);
    await shareAgentSpend(sql, { ...key, agent: "API" }, other);
    expect(other.remaining()).toBe(10);
  }, 30_000);

  it("is counted by the workers of a queue run for each agent they ran", async () => {
    const project = twoFinderProject();
    const { url, sql } = await queueDatabase(postgres().url);
    const controller = new AbortController();
    const queue = await JobQueue.open(url, FAST_QUEUE);
    const working = runWorker({
      queue,
      home: project.home,
      signal: controller.signal,
      pollMs: 100,
      seatFactory: findingSeats,
    });
    let runId: string;
    try {
      ({ runId } = await startQueuedRun(project, url));
    } finally {
      controller.abort();
      await working;
      await queue.close();
    }
    const rows = await sql<{ run_id: string; agent: string; used: number }>(
      "SELECT run_id, agent, used FROM qaas_request_spend ORDER BY agent",
      [],
    );
    // The tiny mode's agents send no request: each is counted, at zero.
    expect(rows.map((row) => row.run_id)).toEqual(rows.map(() => runId));
    expect(rows.map((row) => row.agent)).toContain("FINDER");
    expect(rows.every((row) => row.used === 0)).toBe(true);
  }, 60_000);
});
