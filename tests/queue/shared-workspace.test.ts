import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SystemConfig } from "../../src/config/system-schema.ts";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { openJobWorkspace } from "../../src/queue/job-workspace.ts";
import { artifactStoreOf } from "../../src/queue/shared-artifacts.ts";
import { publishMaps } from "../../src/queue/shared-maps.ts";
import { RunPublisher } from "../../src/queue/shared-runs.ts";
import { runWorker } from "../../src/queue/worker.ts";
import { FolderArtifactStore } from "../../src/store/folder-artifact-store.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { SystemMapStore } from "../../src/store/system-map-store.ts";
import { startS3Server } from "../support/s3-server.ts";
import { sampleSystemMap } from "../support/sample-map.ts";
import {
  FAST_QUEUE,
  findingSeats,
  postgresForFile,
  queueDatabase,
  startQueuedRun,
  twoFinderProject,
} from "./queue-support.ts";

// Workers on machines that never see the coordinator's folder: the run, the target's system maps and the
// defect memory reach them through the queue's PostgreSQL, and what they write comes back through it.

const postgres = postgresForFile();
const SOME_BYTES = new Uint8Array([1, 2, 3, 250]);
const emptyHome = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-worker-home-"));

function sampleMap(commit: string) {
  return sampleSystemMap({ target: "tiny", commit });
}

describe("a worker with a store folder of its own", () => {
  it("reads the run, maps and memory from the queue's store and hands back what its agent wrote", async () => {
    const { sql } = await queueDatabase(postgres().url);
    const coordinatorHome = emptyHome();
    const store = RunStore.create(coordinatorHome, { mode: "tiny", target: "tiny" });
    store.append("run_started", { mode: "tiny" });
    await new RunPublisher(sql, store).push();
    // Another worker saved version 1 of the target's map and published it.
    const elsewhere = new SystemMapStore(emptyHome());
    elsewhere.save(sampleMap("first"));
    await publishMaps(sql, elsewhere, "tiny");

    const home = emptyHome();
    const workspace = await openJobWorkspace(sql, {
      home,
      runId: store.runId,
      target: "tiny",
      memoryDir: emptyHome(),
    });
    expect(workspace.store.readLedger().entries.map((entry) => entry.kind)).toEqual(["run_started"]);
    expect(workspace.maps.versions("tiny")).toEqual([1]);
    // The agent saves a newer map, pins it and records a finding's fingerprint.
    const saved = workspace.maps.save(sampleMap("second"));
    workspace.maps.pin(workspace.store, "tiny", saved.version);
    const record = {
      fingerprint: "fp-1",
      runId: store.runId,
      envelopeId: "env-00000001",
      title: "Wrong status on POST /items",
      domain: "api",
      defectClass: "wrong-status",
      location: { kind: "endpoint", value: "POST /items" },
    };
    expect(workspace.memory.record(record)).toEqual({ firstSeen: true, occurrences: 1 });
    const written = await workspace.finish();
    workspace.close();
    expect(written.memory).toEqual([record]);
    expect(written.files.map((file) => file.name)).toEqual(["pinned-map.json"]);
    expect(JSON.parse(written.files[0]?.content ?? "{}").version).toBe(2);
    const published = await sql<{ version: number }>(
      "SELECT version FROM qaas_system_map WHERE target = 'tiny' ORDER BY version",
      [],
    );
    expect(published.map((row) => row.version)).toEqual([1, 2]);
    // The worker's memory was private: nothing reaches the shared memory until the coordinator applies it.
    expect(await sql("SELECT * FROM qaas_memory_occurrence", [])).toEqual([]);
  }, 30_000);

  it("shares the artifacts an agent wrote through an S3-compatible bucket named in system.yaml", async () => {
    const { sql } = await queueDatabase(postgres().url);
    const credentials = { accessKeyId: "QAASKEY", secretAccessKey: "qaas-bucket-secret" };
    const server = await startS3Server(credentials);
    server.buckets.set("runs", new Map());
    try {
      const system = {
        queue: {
          artifacts: {
            s3: {
              endpoint: server.endpoint,
              bucket: "runs",
              prefix: "qaas",
              access_key_id: "secret_ref:BUCKET_KEY",
              secret_access_key: "secret_ref:BUCKET_SECRET",
            },
          },
        },
      } as SystemConfig;
      expect(() => artifactStoreOf(system, "/", {})).toThrow(
        /BUCKET_KEY is not set.*queue.artifacts.s3.access_key_id/,
      );
      const env = { BUCKET_KEY: credentials.accessKeyId, BUCKET_SECRET: credentials.secretAccessKey };
      const store = RunStore.create(emptyHome(), { mode: "tiny", target: "tiny" });
      store.append("run_started", { mode: "tiny" });
      await new RunPublisher(sql, store).push();
      const open = (home: string) =>
        openJobWorkspace(sql, {
          home,
          runId: store.runId,
          target: "tiny",
          memoryDir: emptyHome(),
          artifacts: artifactStoreOf(system, "/", env),
        });

      const first = await open(emptyHome());
      const screenshot = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255]);
      first.store.putArtifact("shots/page.png", screenshot);
      await first.finish();
      first.close();
      expect(server.buckets.get("runs")?.get(`qaas/${store.runId}/shots/page.png`)).toEqual(screenshot);

      const secondHome = emptyHome();
      const second = await open(secondHome);
      const copied = fs.readFileSync(
        path.join(RunStore.open(secondHome, store.runId).artifactsDir, "shots/page.png"),
      );
      expect(new Uint8Array(copied)).toEqual(screenshot);
      const puts = server.requests.filter((request) => request.startsWith("PUT")).length;
      await second.finish();
      second.close();
      // What it fetched, it does not publish again.
      expect(server.requests.filter((request) => request.startsWith("PUT")).length).toBe(puts);
    } finally {
      await server.close();
    }
  }, 30_000);

  it("remembers a finding across two queue runs whose workers keep their own folders", async () => {
    const project = twoFinderProject();
    // Artifacts travel through a folder every machine mounts.
    const shared = emptyHome();
    project.patchSystem((system) => {
      system.queue = { artifacts: { folder: shared } };
    });
    const { url } = await queueDatabase(postgres().url);
    const workerHome = emptyHome();
    const controller = new AbortController();
    const queues = await Promise.all([1, 2].map(() => JobQueue.open(url, FAST_QUEUE)));
    const workers = queues.map((queue, index) =>
      runWorker({
        queue,
        home: workerHome,
        signal: controller.signal,
        workerId: `worker-${index + 1}`,
        pollMs: 100,
        seatFactory: findingSeats,
      }),
    );
    const runIds: string[] = [];
    try {
      for (let run = 0; run < 2; run += 1) {
        const outcome = await startQueuedRun(project, url, {
          // What a worker would publish while the run goes on.
          onRunCreated: (runId) => new FolderArtifactStore(shared).put(runId, "evidence/a.txt", SOME_BYTES),
        });
        expect(outcome.report.findings.total).toBe(1);
        runIds.push(outcome.runId);
      }
    } finally {
      controller.abort();
      await Promise.all(workers);
      await Promise.all(queues.map((queue) => queue.close()));
    }
    const occurrences = runIds.map((runId) =>
      RunStore.open(project.home, runId)
        .readLedger()
        .entries.filter((entry) => entry.kind === "envelope_emitted")
        .map((entry) => entry.data.occurrences),
    );
    expect(occurrences).toEqual([[1], [2]]);
    // The coordinator fetched the shared artifacts before it wrote the report.
    const artifact = path.join(RunStore.open(project.home, runIds[0] ?? "").artifactsDir, "evidence/a.txt");
    expect(new Uint8Array(fs.readFileSync(artifact))).toEqual(SOME_BYTES);
    // The workers read each run from the queue's store into their own folder.
    expect(fs.existsSync(RunStore.open(workerHome, runIds[1] ?? "").ledgerPath)).toBe(true);
  }, 60_000);
});
