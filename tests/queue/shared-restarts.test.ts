import path from "node:path";
import { describe, expect, it } from "vitest";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { requestTargetRestart, serveTargetRestarts } from "../../src/queue/shared-restarts.ts";
import { runWorker } from "../../src/queue/worker.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { freePort } from "../../src/targets/free-port.ts";
import { REPO_ROOT, tempProject } from "../support/temp-config.ts";
import {
  FAST_QUEUE,
  freshDatabase,
  postgresForFile,
  queueDatabase,
  startQueuedRun,
} from "./queue-support.ts";

// A managed target's server belongs to the run's coordinator; in queue mode the requests that kill it come
// from workers. A worker that finds it dead asks the coordinator, through the queue, to restart it.

const postgres = postgresForFile();
const SERVER = path.join(REPO_ROOT, "tests/http/crashing-server.mjs");

describe("target restarts across machines", () => {
  it("restarts once for the requests waiting together, says why it could not, and gives up on no answer", async () => {
    const { sql } = await queueDatabase(postgres().url);
    let restarts = 0;
    let failing = false;
    const server = serveTargetRestarts(
      sql,
      "run-a",
      async () => {
        restarts += 1;
        await new Promise((resolve) => setTimeout(resolve, 300));
        if (failing) throw new Error("the start command exited with code 1");
      },
      50,
    );
    try {
      await Promise.all(
        ["w1", "w2", "w3"].map((requestedBy) => requestTargetRestart(sql, { runId: "run-a", requestedBy })),
      );
      expect(restarts).toBe(1);
      // Asked after that restart: a new death, a new restart.
      await requestTargetRestart(sql, { runId: "run-a", requestedBy: "w1" });
      expect(restarts).toBe(2);
      failing = true;
      await expect(requestTargetRestart(sql, { runId: "run-a", requestedBy: "w2" })).rejects.toThrow(
        /could not restart the target: the start command exited with code 1/,
      );
    } finally {
      await server.stop();
    }
    // Another run's coordinator does not answer this one's requests.
    await expect(
      requestTargetRestart(sql, { runId: "run-b", requestedBy: "w1", timeoutMs: 500 }),
    ).rejects.toThrow(/did not restart the target in time/);
  }, 30_000);

  it("a worker's request that kills a managed target is confirmed and reported, the coordinator restarting it", async () => {
    const project = tempProject();
    project.addAgent({
      name: "CRASHER",
      yaml: {
        description: "Sends a request that kills the target.",
        layer: "discover",
        phase: "discover",
        tools: ["http_request", "emit_envelope"],
      },
      playbook: `
export default async function (session) {
  const first = await session.call("http_request", { path: "/a" });
  if (!first.ok) throw new Error(first.error);
  await Promise.all([
    session.call("http_request", { path: "/next?to=%2Fhome%0D%0AX-Injected%3A%201" }),
    session.call("http_request", { path: "/slow" }),
  ]);
  const after = await session.call("http_request", { path: "/b" });
  if (!after.ok) throw new Error("the target did not come back: " + after.error);
  return { summary: "crashed it and went on" };
}
`,
    });
    project.addMode("tiny", { roster: ["CRASHER"], budget: { usd: 1 } });
    const port = await freePort();
    const target = project.addTarget("crashing", {
      source: { path: "../.." },
      environment: {
        mode: "managed",
        base_url: `http://127.0.0.1:${port}`,
        health_path: "/health",
        start: { command: `"${process.execPath}" "${SERVER}"`, env: { PORT: String(port) } },
        startup_timeout_seconds: 10,
      },
    });
    const url = await freshDatabase(postgres().url);
    const controller = new AbortController();
    const queue = await JobQueue.open(url, FAST_QUEUE);
    const worker = runWorker({
      queue,
      home: project.home,
      signal: controller.signal,
      workerId: "w1",
      pollMs: 50,
    });
    let runId: string;
    try {
      const outcome = await startQueuedRun({ ...project, target }, url);
      runId = outcome.runId;
      expect(outcome.report.status).not.toBe("failed");
    } finally {
      controller.abort();
      await worker;
      await queue.close();
    }
    const store = RunStore.open(project.home, runId);
    const entries = store.readLedger().entries;
    expect(
      entries.filter((entry) => entry.kind === "agent_finished").map((entry) => entry.data.outcome),
    ).not.toContain("failed");
    // Restarted by the coordinator: once to recover, once more after the replay that confirmed the culprit.
    const restarts = entries.filter((entry) => entry.kind === "environment_started" && entry.data.restarted);
    expect(restarts).toHaveLength(2);
    const [finding] = store.readEnvelopes();
    expect(finding).toMatchObject({
      defect_class: "unhandled-error",
      location: { kind: "endpoint", value: "GET /next" },
    });
    expect(finding?.evidence.map((item) => item.description).join("\n")).toContain(
      "replay-on-restarted-target",
    );
  }, 60_000);
});
