import fs from "node:fs";
import { writeFileExclusive } from "../store/atomic-write.ts";
import type { SystemMapStore } from "../store/system-map-store.ts";
import type { SqlRunner } from "./shared-runs.ts";

// Queue mode keeps every saved system map version in the queue's PostgreSQL, so a worker on any machine
// compares a new map with the target's latest one, whoever saved it. Versions are immutable: a worker
// copies the versions it lacks before a job and publishes the ones it saved after it. Two machines that
// saved the same version number at once keep their own; the store keeps the first.

export const SHARED_MAPS_SCHEMA = `
CREATE TABLE IF NOT EXISTS qaas_system_map (
  target text NOT NULL,
  version integer NOT NULL,
  content text NOT NULL,
  PRIMARY KEY (target, version)
);`;

/** Copies the target's versions this machine lacks from the queue's store. */
export async function copySharedMaps(sql: SqlRunner, maps: SystemMapStore, target: string): Promise<void> {
  const have = new Set(maps.versions(target));
  const rows = await sql<{ version: number; content: string }>(
    "SELECT version, content FROM qaas_system_map WHERE target = $1 AND NOT (version = ANY($2::integer[]))",
    [target, [...have]],
  );
  for (const row of rows) {
    try {
      writeFileExclusive(maps.versionFile(target, row.version), row.content);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

/** Publishes every version of the target this machine holds that the store lacks. */
export async function publishMaps(sql: SqlRunner, maps: SystemMapStore, target: string): Promise<void> {
  const published = await sql<{ version: number }>("SELECT version FROM qaas_system_map WHERE target = $1", [
    target,
  ]);
  const known = new Set(published.map((row) => row.version));
  for (const version of maps.versions(target).filter((held) => !known.has(held))) {
    await sql(
      "INSERT INTO qaas_system_map (target, version, content) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [target, version, fs.readFileSync(maps.versionFile(target, version), "utf8")],
    );
  }
}
