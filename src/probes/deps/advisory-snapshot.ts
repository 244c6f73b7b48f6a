import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { QaasError } from "../../errors.ts";
import type { OsvAdvisory } from "./osv-match.ts";
import { normalizePackageName } from "./osv-match.ts";

/** The snapshot shipped with qaas; `qaas advisories refresh` rebuilds it. */
export const SNAPSHOT_FILE = fileURLToPath(
  new URL("../../../data/advisories/osv-snapshot.json", import.meta.url),
);

export interface AdvisorySnapshot {
  snapshot_version: 1;
  /** The day the snapshot was built (YYYY-MM-DD). */
  snapshot_date: string;
  source: string;
  advisories: OsvAdvisory[];
}

export interface AdvisoryIndex {
  snapshot: AdvisorySnapshot;
  /** `ecosystem:normalized-name` → advisories naming that package. */
  byPackage: Map<string, OsvAdvisory[]>;
}

export function packageKey(ecosystem: string, name: string): string {
  return `${ecosystem.toLowerCase()}:${normalizePackageName(ecosystem, name)}`;
}

export function indexSnapshot(snapshot: AdvisorySnapshot): AdvisoryIndex {
  const byPackage = new Map<string, OsvAdvisory[]>();
  for (const advisory of snapshot.advisories) {
    for (const affected of advisory.affected) {
      const key = packageKey(affected.package.ecosystem, affected.package.name);
      const list = byPackage.get(key) ?? [];
      if (!list.includes(advisory)) list.push(advisory);
      byPackage.set(key, list);
    }
  }
  return { snapshot, byPackage };
}

let cached: { file: string; index: AdvisoryIndex } | undefined;

export function loadSnapshot(file = SNAPSHOT_FILE): AdvisoryIndex {
  if (cached?.file === file) return cached.index;
  let parsed: AdvisorySnapshot;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8")) as AdvisorySnapshot;
  } catch (error) {
    throw new QaasError(
      "ADVISORIES_UNREADABLE",
      `cannot read the advisory snapshot ${file}: ${error instanceof Error ? error.message : String(error)}; rebuild it with qaas advisories refresh --from <dir-or-zip>`,
    );
  }
  if (!Array.isArray(parsed.advisories) || typeof parsed.snapshot_date !== "string") {
    throw new QaasError(
      "ADVISORIES_INVALID",
      `${file} is not an advisory snapshot (needs snapshot_date and advisories[])`,
    );
  }
  const index = indexSnapshot(parsed);
  cached = { file, index };
  return index;
}
