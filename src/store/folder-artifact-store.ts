import fs from "node:fs";
import path from "node:path";
import type { ArtifactStore } from "./artifact-store.ts";
import { artifactKeySegments, artifactUri, assertRunId, assertWritableInside } from "./artifacts.ts";
import { isTemporaryFile, writeFileAtomic } from "./atomic-write.ts";

// Artifacts as files `<root>/<runId>/<name>`, in a folder of this machine or one every worker mounts.
// Whatever a name says and whatever links were planted below the root, reads and writes stay inside it.

export class FolderArtifactStore implements ArtifactStore {
  readonly description: string;
  readonly #root: string;

  constructor(root: string) {
    this.#root = path.resolve(root);
    this.description = `folder ${this.#root}`;
  }

  async put(runId: string, name: string, content: Uint8Array): Promise<void> {
    const segments = artifactKeySegments(runId, name);
    const uri = artifactUri(runId, name);
    const file = path.join(this.#root, ...segments);
    fs.mkdirSync(this.#root, { recursive: true });
    // One level at a time, each parent checked before its child is made: a folder linked out of the root
    // is refused before anything is created beyond it.
    let folder = this.#root;
    for (const segment of segments.slice(0, -1)) {
      const child = path.join(folder, segment);
      assertWritableInside(this.#root, child, uri);
      fs.mkdirSync(child, { recursive: true });
      folder = child;
    }
    assertWritableInside(this.#root, file, uri);
    writeFileAtomic(file, content);
  }

  async get(runId: string, name: string): Promise<Uint8Array | undefined> {
    const file = path.join(this.#root, ...artifactKeySegments(runId, name));
    const realFile = this.#realPathInside(file, artifactUri(runId, name));
    if (realFile === undefined || !fs.statSync(realFile).isFile()) return undefined;
    const content = fs.readFileSync(realFile);
    return new Uint8Array(content.buffer, content.byteOffset, content.byteLength);
  }

  async list(runId: string): Promise<string[]> {
    assertRunId(runId);
    const realRunFolder = this.#realPathInside(path.join(this.#root, runId), artifactUri(runId, ""));
    if (realRunFolder === undefined) return [];
    return filesBelow(realRunFolder, "").sort();
  }

  /** The real path of something that exists, refused (ARTIFACT_ESCAPES) when a link takes it out of the root. */
  #realPathInside(target: string, uri: string): string | undefined {
    let realTarget: string;
    try {
      realTarget = fs.realpathSync(target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    // Its folder being inside the root, with every link already resolved, is what puts it inside.
    assertWritableInside(this.#root, realTarget, uri);
    return realTarget;
  }
}

function filesBelow(folder: string, namePrefix: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const name = `${namePrefix}${entry.name}`;
    // Links are neither followed nor listed: `put` never makes one, and following one could leave the root.
    if (entry.isDirectory()) return filesBelow(path.join(folder, entry.name), `${name}/`);
    return entry.isFile() && !isTemporaryFile(entry.name) ? [name] : [];
  });
}
