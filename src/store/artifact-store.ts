import { FolderArtifactStore } from "./folder-artifact-store.ts";
import { S3ArtifactStore, type S3ArtifactStoreOptions } from "./s3-artifact-store.ts";

// Where the artifacts of runs (`artifact://<runId>/<name>`) live when workers on several machines must
// share them: a folder they all mount, or an S3-compatible bucket. Every backend validates run ids and
// names itself, because a name comes from an agent and a backend may be constructed without this factory.

export interface ArtifactStore {
  /** What messages may show: `folder /path` or `s3://bucket/prefix at http://endpoint` — never a secret. */
  readonly description: string;
  /** Stores one artifact of a run (overwrites the same name). */
  put(runId: string, name: string, content: Uint8Array): Promise<void>;
  /** The artifact's bytes, or undefined when the store has none by that name. */
  get(runId: string, name: string): Promise<Uint8Array | undefined>;
  /** Every artifact name of a run, sorted; [] for a run it has never seen. */
  list(runId: string): Promise<string[]>;
}

export type ArtifactStoreConfig = { folder: string } | { s3: S3ArtifactStoreOptions };

export function openArtifactStore(config: ArtifactStoreConfig): ArtifactStore {
  return "folder" in config ? new FolderArtifactStore(config.folder) : new S3ArtifactStore(config.s3);
}
