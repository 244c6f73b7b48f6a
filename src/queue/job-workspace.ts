import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { DefectMemory, type RecordInput } from "../memory/defect-memory.ts";
import type { ArtifactStore } from "../store/artifact-store.ts";
import { RunStore } from "../store/run-store.ts";
import { SystemMapStore } from "../store/system-map-store.ts";
import type { DefectMemoryPort } from "../tools/context.ts";
import { type RunFile, WORKER_RUN_FILES } from "./invocation-job.ts";
import { fetchArtifacts, localArtifacts, publishArtifacts } from "./shared-artifacts.ts";
import { copySharedMaps, publishMaps } from "./shared-maps.ts";
import { copySharedMemory } from "./shared-memory.ts";
import { materializeRun, type SqlRunner } from "./shared-runs.ts";

// What one job needs of the queue's shared store on a worker, which may sit on a machine that never saw
// the coordinator's folder: the run as last published (copied into the worker's home when its copy is
// behind), the target's system maps, the run's artifacts (with an artifact store), and a private copy of
// the defect memory. What the agent writes goes back with the result (the pinned map, the fingerprints it
// recorded) or is published at once (map versions, which never change once saved, and artifacts).

export interface JobWorkspace {
  store: RunStore;
  maps: SystemMapStore;
  memory: DefectMemoryPort;
  /**
   * Publishes the maps and artifacts the agent saved; answers the run files it changed and the fingerprints
   * it recorded.
   */
  finish(): Promise<{ files: RunFile[]; memory: RecordInput[] }>;
  close(): void;
}

export async function openJobWorkspace(
  sql: SqlRunner,
  job: { home: string; runId: string; target: string; memoryDir: string; artifacts?: ArtifactStore },
): Promise<JobWorkspace> {
  await materializeRun(sql, job.home, job.runId);
  const store = RunStore.open(job.home, job.runId);
  if (job.artifacts) await fetchArtifacts(job.artifacts, store);
  const artifactsBefore = localArtifacts(store);
  const maps = new SystemMapStore(job.home);
  await copySharedMaps(sql, maps, job.target);
  const shared = DefectMemory.open(job.memoryDir);
  try {
    await copySharedMemory(sql, shared);
  } catch (error) {
    shared.close();
    throw error;
  }
  const recorded: RecordInput[] = [];
  const before = new Map(WORKER_RUN_FILES.map((name) => [name, digestOf(path.join(store.dir, name))]));
  return {
    store,
    maps,
    memory: {
      record(input) {
        recorded.push(input);
        return shared.record(input);
      },
      searchSimilar: (query) => shared.searchSimilar(query),
      occurrences: (fingerprint) => shared.occurrences(fingerprint),
    },
    async finish() {
      await publishMaps(sql, maps, job.target);
      if (job.artifacts) await publishArtifacts(job.artifacts, store, artifactsBefore);
      const files = WORKER_RUN_FILES.filter(
        (name) => digestOf(path.join(store.dir, name)) !== before.get(name),
      ).map((name) => ({ name, content: fs.readFileSync(path.join(store.dir, name), "utf8") }));
      return { files, memory: recorded };
    },
    close: () => shared.close(),
  };
}

function digestOf(file: string): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}
