import fs from "node:fs";
import path from "node:path";
import { formatIssuePath } from "../envelope/envelope.ts";
import { QaasError } from "../errors.ts";
import { type SystemMap, SystemMapSchema } from "../map/system-map.ts";
import { SAFE_NAME } from "./artifacts.ts";
import { writeFileAtomic, writeFileExclusive } from "./atomic-write.ts";
import type { RunStore } from "./run-store.ts";

// System maps are versioned per target as immutable files `<home>/system-map/<target>/v<N>.json`. A run
// pins one version by copying it into its own folder, so what a run reads never changes under it — not
// when MAPPER saves a newer version, not when old versions are pruned.

const PINNED_FILE = "pinned-map.json";
const VERSION_FILE = /^v(\d+)\.json$/;

export interface SavedMap {
  version: number;
  path: string;
}

export interface PinnedMap {
  target: string;
  version: number;
  pinned_at: string;
  map: SystemMap;
}

export class SystemMapStore {
  constructor(readonly home: string) {}

  /** Saves a new version (the next N; an existing version is never overwritten). */
  save(map: SystemMap): SavedMap {
    const parsed = parseMap(map, `system map of target "${String((map as { target?: unknown }).target)}"`);
    const folder = this.#folder(parsed.target);
    const content = `${JSON.stringify(parsed, null, 2)}\n`;
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const version = (this.versions(parsed.target).at(-1) ?? 0) + 1;
      const file = path.join(folder, `v${version}.json`);
      try {
        writeFileExclusive(file, content);
        return { version, path: file };
      } catch (error) {
        // Another process saved the same N first: take the next one.
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    throw new QaasError("MAP_SAVE_FAILED", `could not find a free version number in ${folder}`);
  }

  /** Saved versions of a target, ascending. */
  versions(target: string): number[] {
    const folder = this.#folder(target);
    if (!fs.existsSync(folder)) return [];
    return fs
      .readdirSync(folder)
      .map((name) => VERSION_FILE.exec(name)?.[1])
      .filter((digits): digits is string => digits !== undefined)
      .map(Number)
      .sort((left, right) => left - right);
  }

  load(target: string, version: number): SystemMap {
    const file = path.join(this.#folder(target), `v${version}.json`);
    if (!fs.existsSync(file)) {
      const known = this.versions(target);
      throw new QaasError(
        "MAP_VERSION_NOT_FOUND",
        `no system map v${version} for target "${target}" in ${this.#folder(target)} (saved: ${known.length > 0 ? known.map((n) => `v${n}`).join(", ") : "none; run MAPPER first"})`,
      );
    }
    return parseMap(readJson(file), file);
  }

  latest(target: string): (SavedMap & { map: SystemMap }) | undefined {
    const version = this.versions(target).at(-1);
    if (version === undefined) return undefined;
    return {
      version,
      path: path.join(this.#folder(target), `v${version}.json`),
      map: this.load(target, version),
    };
  }

  /** Pins a saved version for a run: a copy in the run's folder, read by every agent of that run. */
  pin(run: RunStore, target: string, version: number): PinnedMap {
    const pinned: PinnedMap = {
      target,
      version,
      pinned_at: new Date().toISOString(),
      map: this.load(target, version),
    };
    writeFileAtomic(path.join(run.dir, PINNED_FILE), `${JSON.stringify(pinned, null, 2)}\n`);
    return pinned;
  }

  loadPinned(run: RunStore): SystemMap | undefined {
    return readPinnedMap(run)?.map;
  }

  /** Where version N of a target's map lives (it may not exist). */
  versionFile(target: string, version: number): string {
    return path.join(this.#folder(target), `v${version}.json`);
  }

  #folder(target: string): string {
    if (!SAFE_NAME.test(target)) {
      throw new QaasError(
        "MAP_TARGET_INVALID",
        `target name "${target}" must be letters, digits, ".", "_" or "-" (it names a folder under ${path.join(this.home, "system-map")})`,
      );
    }
    return path.join(this.home, "system-map", target);
  }
}

/** Which version a run pinned, and the map itself; undefined before a map was pinned. */
export function readPinnedMap(run: RunStore): PinnedMap | undefined {
  const file = path.join(run.dir, PINNED_FILE);
  if (!fs.existsSync(file)) return undefined;
  const value = readJson(file) as Partial<PinnedMap>;
  if (typeof value.target !== "string" || typeof value.version !== "number") {
    throw new QaasError("MAP_INVALID", `${file}: target and version are missing; pin the map again`);
  }
  return {
    target: value.target,
    version: value.version,
    pinned_at: String(value.pinned_at ?? ""),
    map: parseMap(value.map, `${file} (map)`),
  };
}

function parseMap(value: unknown, where: string): SystemMap {
  const parsed = SystemMapSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`)
    .join("; ");
  throw new QaasError("MAP_INVALID", `${where} is not a valid system map: ${problems}`);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new QaasError(
      "MAP_INVALID",
      `${file} is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}
