import fs from "node:fs";
import path from "node:path";
import type { SystemConfig } from "../config/system-schema.ts";
import { type ArtifactStore, openArtifactStore } from "../store/artifact-store.ts";
import { isTemporaryFile } from "../store/atomic-write.ts";
import type { RunStore } from "../store/run-store.ts";
import { resolveSecret } from "../targets/secrets.ts";

// Artifacts between machines whose store folders are their own: each job fetches the run's artifacts it
// lacks from the configured artifact store (system.yaml `queue.artifacts`) and publishes those its agent
// wrote; the coordinator fetches them all before it writes the report. Without that setting the store
// folder is the shared place, as it always was.

/** The artifact store system.yaml names, credentials read from the environment; undefined when none. */
export function artifactStoreOf(
  system: SystemConfig,
  configDir: string,
  env: Record<string, string | undefined> = process.env,
): ArtifactStore | undefined {
  const setting = system.queue.artifacts;
  if (!setting) return undefined;
  if ("folder" in setting) return openArtifactStore({ folder: path.resolve(configDir, setting.folder) });
  const { s3 } = setting;
  return openArtifactStore({
    s3: {
      endpoint: s3.endpoint,
      bucket: s3.bucket,
      ...(s3.region !== undefined ? { region: s3.region } : {}),
      ...(s3.prefix !== undefined ? { prefix: s3.prefix } : {}),
      accessKeyId: resolveSecret(s3.access_key_id, env, "queue.artifacts.s3.access_key_id"),
      secretAccessKey: resolveSecret(s3.secret_access_key, env, "queue.artifacts.s3.secret_access_key"),
    },
  });
}

/** What the run's artifacts folder holds now: name → size and modification time. */
export function localArtifacts(store: RunStore): Map<string, string> {
  const held = new Map<string, string>();
  if (!fs.existsSync(store.artifactsDir)) return held;
  for (const entry of fs.readdirSync(store.artifactsDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || isTemporaryFile(entry.name)) continue;
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const stat = fs.statSync(file);
    held.set(
      path.relative(store.artifactsDir, file).split(path.sep).join("/"),
      `${stat.size}:${stat.mtimeMs}`,
    );
  }
  return held;
}

/** Copies the run's artifacts this machine lacks; answers how many. */
export async function fetchArtifacts(artifacts: ArtifactStore, store: RunStore): Promise<number> {
  const held = localArtifacts(store);
  let fetched = 0;
  for (const name of await artifacts.list(store.runId)) {
    if (held.has(name)) continue;
    const content = await artifacts.get(store.runId, name);
    if (content === undefined) continue;
    store.putArtifact(name, content);
    fetched += 1;
  }
  return fetched;
}

/** Publishes the run's artifacts that are new or changed since `before`; answers how many. */
export async function publishArtifacts(
  artifacts: ArtifactStore,
  store: RunStore,
  before: ReadonlyMap<string, string>,
): Promise<number> {
  let published = 0;
  for (const [name, stamp] of localArtifacts(store)) {
    if (before.get(name) === stamp) continue;
    await artifacts.put(
      store.runId,
      name,
      fs.readFileSync(path.join(store.artifactsDir, ...name.split("/"))),
    );
    published += 1;
  }
  return published;
}
