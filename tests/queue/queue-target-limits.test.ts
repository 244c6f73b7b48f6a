import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { runWorker } from "../../src/queue/worker.ts";
import { startRun } from "../../src/run/start-run.ts";
import { tempProject } from "../support/temp-config.ts";
import { freshDatabase, postgresForFile } from "./queue-support.ts";

// Two runs on one small service at once, their agents spread over three workers: what the service sees
// is what counts. Its profile allows two requests at a time, and one run's agent is exclusive (it measures).

const postgres = postgresForFile();

const FAST = { leaseSeconds: 5, maintenanceSeconds: 1, tries: 3 };

/** Sends `count` GETs under `prefix` at once through the agent's tools. */
function sender(prefix: string, count: number): string {
  return `
export default async function (session) {
  const answers = await Promise.all(
    Array.from({ length: ${count} }, (_, index) => session.call("http_request", { path: "/${prefix}/" + index })),
  );
  const refused = answers.find((answer) => !answer.ok);
  if (refused) throw new Error(refused.error);
  return { summary: "sent ${count}" };
}
`;
}

/**
 * A service that answers after a pause and keeps when each probe request arrived and left. It holds the
 * first hammer request until a solo one arrives (or 3 s pass), so that the two runs' agents meet on it
 * whenever nothing keeps them apart.
 */
async function smallService() {
  const served: Array<{ kind: string; start: number; end: number }> = [];
  let inFlight = 0;
  let peak = 0;
  let soloArrived = () => {};
  const soloSeen = new Promise<void>((resolve) => {
    soloArrived = resolve;
  });
  let held = false;
  const app = http.createServer(async (request, response) => {
    const kind = (request.url ?? "/").split("/")[1] ?? "";
    if (kind !== "hammer" && kind !== "solo") {
      response.end("ok");
      return;
    }
    inFlight += 1;
    peak = Math.max(peak, inFlight);
    const start = performance.now();
    if (kind === "solo") soloArrived();
    if (kind === "hammer" && !held) {
      held = true;
      await Promise.race([soloSeen, sleep(3000)]);
    }
    await sleep(20);
    inFlight -= 1;
    served.push({ kind, start, end: performance.now() });
    response.end("ok");
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  return { base, served, peak: () => peak, close: () => new Promise((resolve) => app.close(resolve)) };
}

describe("queue mode's limits, seen from the target", () => {
  it("keeps three workers under the target's cap and runs an exclusive agent alone on it", async () => {
    const service = await smallService();
    const project = tempProject();
    for (const name of ["HAMMER", "ANVIL"]) {
      project.addAgent({
        name,
        yaml: {
          description: "Sends many requests.",
          layer: "discover",
          phase: "discover",
          tools: ["http_request", "emit_envelope"],
        },
        playbook: sender("hammer", 24),
      });
    }
    project.addAgent({
      name: "MEASURE",
      yaml: {
        description: "Measures, alone.",
        layer: "discover",
        phase: "discover",
        exclusive: true,
        tools: ["http_request", "emit_envelope"],
      },
      playbook: sender("solo", 12),
    });
    project.addMode("pair", { roster: ["HAMMER", "ANVIL"], budget: { usd: 1 } });
    project.addMode("measure", { roster: ["MEASURE"], budget: { usd: 1 } });
    const target = project.addTarget("small", {
      source: { path: "../.." },
      environment: { mode: "external", base_url: service.base, health_path: "/health" },
      budgets: { concurrency: 2 },
    });
    const url = await freshDatabase(postgres().url);
    const controller = new AbortController();
    const queues = await Promise.all([1, 2, 3].map(() => JobQueue.open(url, FAST)));
    const workers = queues.map((queue, index) =>
      runWorker({ queue, home: project.home, signal: controller.signal, workerId: `w${index}`, pollMs: 50 }),
    );
    try {
      const common = { home: project.home, configDir: project.configDir, target, json: true, queueUrl: url };
      const runs = await Promise.all(
        ["pair", "measure"].map((mode) => startRun({ ...common, mode, queueSettings: FAST })),
      );
      expect(runs.map((run) => run.report.status)).not.toContain("failed");
    } finally {
      controller.abort();
      await Promise.all(workers);
      await Promise.all(queues.map((queue) => queue.close()));
      await service.close();
    }
    const hammers = service.served.filter((request) => request.kind === "hammer");
    const solos = service.served.filter((request) => request.kind === "solo");
    expect(hammers).toHaveLength(48);
    expect(solos).toHaveLength(12);
    // Two agents on two workers, each allowed two at once on its own: together still two.
    expect(service.peak()).toBe(2);
    const overlapping = solos.filter((solo) =>
      hammers.some((hammer) => hammer.start < solo.end && solo.start < hammer.end),
    );
    expect(overlapping).toEqual([]);
  }, 90_000);
});
