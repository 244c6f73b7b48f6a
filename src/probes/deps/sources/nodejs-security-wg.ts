import path from "node:path";
import type { SnapshotAdvisory } from "../advisory-snapshot.ts";
import { npmRange } from "../versions.ts";
import { count, day, type RecordFilter, shortTitle, sortedUnique } from "./osv-record.ts";
import { ratingFromScore, scoreFromVector } from "./rating.ts";
import type { SourceRepository } from "./repository.ts";
import type { SourceReading } from "./types.ts";

export const NODEJS_SECURITY_WG = {
  name: "nodejs-security-wg",
  repository: "https://github.com/nodejs/security-wg",
  licence: "MIT (Node.js Foundation; the repository's LICENSE.md)",
  folder: "vuln/npm",
} as const;

/**
 * The Node.js security working group's ecosystem advisories (`vuln/npm/<n>.json`, referred to as
 * NSWG-ECO-<n>). Their ranges are npm range strings and stay so: `semver` reads them at match time.
 */
export function readNodejsSecurityWg(repository: SourceRepository, filter: RecordFilter = {}): SourceReading {
  const skipped: Record<string, number> = {};
  const advisories: SnapshotAdvisory[] = [];
  const files = repository
    .list(NODEJS_SECURITY_WG.folder, [".json"])
    .filter((file) => /^\d+\.json$/.test(path.posix.basename(file)));
  if (!filter.ecosystems || filter.ecosystems.has("npm")) {
    for (const [file, text] of repository.readAll(files)) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(text) as Record<string, unknown>;
      } catch {
        count(skipped, "unreadable_file");
        continue;
      }
      const name = record.module_name;
      const vulnerable = record.vulnerable_versions;
      if (typeof name !== "string" || !name.trim()) {
        count(skipped, "no_package");
        continue;
      }
      if (filter.packages && !filter.packages.has(name.toLowerCase())) {
        count(skipped, "package_not_wanted");
        continue;
      }
      if (typeof vulnerable !== "string" || !npmRange(vulnerable)) {
        count(skipped, "unreadable_range");
        continue;
      }
      const patched =
        typeof record.patched_versions === "string" && npmRange(record.patched_versions)
          ? record.patched_versions
          : undefined;
      const vector =
        typeof record.cvss_vector === "string" && record.cvss_vector ? record.cvss_vector : undefined;
      const score =
        typeof record.cvss_score === "number" && record.cvss_score > 0
          ? record.cvss_score
          : vector
            ? scoreFromVector(vector)
            : undefined;
      const severity = score !== undefined ? ratingFromScore(score) : undefined;
      const title = shortTitle(record.title, record.overview);
      const modified = day(record.updated_at) ?? day(record.publish_date);
      advisories.push({
        id: `NSWG-ECO-${path.posix.basename(file, ".json")}`,
        aliases: sortedUnique(Array.isArray(record.cves) ? (record.cves as string[]) : []),
        ecosystem: "npm",
        package: name.trim(),
        source: NODEJS_SECURITY_WG.name,
        ...(title ? { title } : {}),
        ...(severity ? { severity } : {}),
        ...(score !== undefined ? { cvss: { score, ...(vector ? { vector } : {}) } } : {}),
        ...(modified ? { modified } : {}),
        vulnerable,
        ...(patched ? { patched } : {}),
      });
    }
  } else count(skipped, "other_ecosystem", files.length);
  return {
    source: {
      name: NODEJS_SECURITY_WG.name,
      repository: NODEJS_SECURITY_WG.repository,
      licence: NODEJS_SECURITY_WG.licence,
      ...(repository.commit ? { commit: repository.commit, commit_date: repository.commitDate } : {}),
      ...(repository.commit ? {} : { digest: repository.digest(files) }),
      skipped,
    },
    advisories,
  };
}
