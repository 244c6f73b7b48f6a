import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { FleetHold } from "../../src/queue/fleet-limits.ts";
import type { InvocationJob } from "../../src/queue/invocation-job.ts";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { REPO_ROOT } from "../support/temp-config.ts";
import { freshDatabase, postgresForFile, twoFinderProject } from "./queue-support.ts";

// `qaas queue status` run as a user runs it, against a queue with a job running on one target and two
// waiting on two targets: the counts, the live worker, the oldest waiting job and the per-target load.

const run = promisify(execFile);
const postgres = postgresForFile();

function job(target: string, id: string): InvocationJob {
  return {
    run_id: `run-${target}`,
    mode: "nightly",
    target,
    target_file: `/profiles/${target}.yaml`,
    config_dir: "/config",
    seat: null,
    invocation: { id, agent: "API", phase: "discover", input: {}, attempt: 1 },
  };
}

describe("qaas queue status", () => {
  it("shows jobs by state, live workers, the oldest waiting job and per-target load", async () => {
    const url = await freshDatabase(postgres().url);
    const queue = await JobQueue.open(url);
    try {
      await queue.sendInvocation(job("shop", "API-1"));
      const taken = await queue.fetchInvocation();
      await queue.touchWorker("worker-a", taken?.id ?? null);
      await queue.sendInvocation(job("shop", "API-2"));
      await queue.sendInvocation(job("blog", "API-3"));
      // A second send of the same invocation is the same job, not a new one.
      await queue.sendInvocation(job("blog", "API-3"));
    } finally {
      await queue.close();
    }
    const bin = path.join(REPO_ROOT, "bin/qaas.js");
    const json = await run(process.execPath, [bin, "queue", "status", "--json"], {
      env: { ...process.env, QAAS_QUEUE_URL: url },
    });
    const status = JSON.parse(json.stdout);
    expect(status.jobs).toMatchObject({ created: 2, active: 1, completed: 0, failed: 0 });
    expect(status.workers.map((worker: { id: string; current_job: string }) => worker.id)).toEqual([
      "worker-a",
    ]);
    expect(status.oldest_waiting).toMatchObject({ run_id: "run-shop", agent: "API" });
    expect(status.targets).toEqual([
      { target: "blog", active: 0, waiting: 1 },
      { target: "shop", active: 1, waiting: 1 },
    ]);
    const text = await run(process.execPath, [bin, "queue", "status", "--queue", url]);
    expect(text.stdout).toContain("jobs: created 2, retry 0, active 1, completed 0");
    expect(text.stdout).toMatch(/workers alive \(seen in the last 90s\): 1\nworker .*\nworker-a /);
    expect(text.stdout).toMatch(/shop\s+1\s+1/);
  }, 60_000);

  it("shows which services workers hold now: invocations, one alone or not, requests in flight", async () => {
    const url = await freshDatabase(postgres().url);
    await (await JobQueue.open(url)).close();
    const signal = new AbortController().signal;
    const shop = await FleetHold.enter({
      url,
      target: "http://shop.test",
      exclusive: false,
      targetCap: 3,
      signal,
    });
    const blog = await FleetHold.enter({
      url,
      target: "http://blog.test",
      exclusive: true,
      targetCap: 2,
      signal,
    });
    const gone = await FleetHold.enter({
      url,
      target: "http://gone.test",
      exclusive: false,
      targetCap: 2,
      signal,
    });
    const bin = path.join(REPO_ROOT, "bin/qaas.js");
    try {
      const slots = [
        await shop.limiter.acquire(),
        await shop.limiter.acquire(),
        await blog.limiter.acquire(),
      ];
      // A worker that is gone no longer counts, though its row is still there.
      await gone.leave();
      const json = await run(process.execPath, [bin, "queue", "status", "--json"], {
        env: { ...process.env, QAAS_QUEUE_URL: url },
      });
      expect(JSON.parse(json.stdout).holds).toEqual([
        { target: "http://blog.test", invocations: 1, exclusive: true, in_flight: 1, cap: 2 },
        { target: "http://shop.test", invocations: 1, exclusive: false, in_flight: 2, cap: 3 },
      ]);
      for (const release of slots) release();
      const text = await run(process.execPath, [bin, "queue", "status", "--queue", url]);
      expect(text.stdout).toMatch(/services held now:\nservice .*\nhttp:\/\/blog\.test\s+1\s+yes\s+0\/2/);
    } finally {
      await shop.leave();
      await blog.leave();
    }
  }, 60_000);

  it("fails with the reason and the masked address when the queue is unreachable", async () => {
    const bin = path.join(REPO_ROOT, "bin/qaas.js");
    const failed = await run(process.execPath, [
      bin,
      "queue",
      "status",
      "--queue",
      `postgresql://ops:secret@127.0.0.1:${postgres().port + 1}/queue`,
    ]).catch((error: { code: number; stderr: string }) => error);
    expect((failed as { code: number }).code).toBe(1);
    expect((failed as { stderr: string }).stderr).toMatch(
      /database server is unreachable at postgresql:\/\/ops:\*\*\*@127\.0\.0\.1:\d+\/queue.*\[QUEUE_UNREACHABLE\]/,
    );
  }, 30_000);

  it("keeps a nightly sweep as a cron schedule in the queue, and refuses --cron without --queue", async () => {
    const url = await freshDatabase(postgres().url);
    const project = twoFinderProject();
    const bin = path.join(REPO_ROOT, "bin/qaas.js");
    const args = [bin, "--home", project.home, "sweep", "--mode", "tiny", "--config", project.configDir];
    const scheduled = await run(process.execPath, [...args, "--queue", url, "--cron", "0 2 * * *", "--json"]);
    expect(JSON.parse(scheduled.stdout)).toMatchObject({ runs: [], schedule: { cron: "0 2 * * *" } });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT name, cron, data FROM pgboss.schedule");
      expect(rows).toEqual([
        {
          name: "qaas-sweep",
          cron: "0 2 * * *",
          data: { targets: [project.target], modes: ["tiny"], config_dir: project.configDir },
        },
      ]);
    } finally {
      await client.end();
    }
    const refused = await run(process.execPath, [...args, "--cron", "0 2 * * *"]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect((refused as { stderr: string }).stderr).toMatch(
      /--cron keeps a schedule in the job queue: pass --queue too/,
    );
  }, 60_000);
});
