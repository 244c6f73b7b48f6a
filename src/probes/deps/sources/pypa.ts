import { parse as parseYaml } from "yaml";
import type { SnapshotAdvisory } from "../advisory-snapshot.ts";
import { advisoriesFromOsvRecord, count, mergeSkipped, type RecordFilter } from "./osv-record.ts";
import type { SourceRepository } from "./repository.ts";
import type { SourceReading } from "./types.ts";

export const PYPA_ADVISORY_DATABASE = {
  name: "pypa-advisory-database",
  repository: "https://github.com/pypa/advisory-database",
  licence: "CC-BY-4.0 (Python Packaging Authority; attribution required)",
  folder: "vulns",
} as const;

/** The PyPA advisory database: OSV records written in YAML under `vulns/<package>/PYSEC-*.yaml`. */
export function readPypa(repository: SourceRepository, filter: RecordFilter = {}): SourceReading {
  const skipped: Record<string, number> = {};
  const advisories: SnapshotAdvisory[] = [];
  const files = repository.list(PYPA_ADVISORY_DATABASE.folder, [".yaml", ".yml"]);
  for (const [, text] of repository.readAll(files)) {
    let record: Record<string, unknown>;
    try {
      // Every scalar as written: YAML's numbers would turn a version like 2.10 into 2.1.
      record = parseYaml(text, { schema: "failsafe" }) as Record<string, unknown>;
    } catch {
      count(skipped, "unreadable_file");
      continue;
    }
    const reading = advisoriesFromOsvRecord(record, PYPA_ADVISORY_DATABASE.name, filter);
    advisories.push(...reading.advisories);
    mergeSkipped(skipped, reading.skipped);
  }
  return {
    source: {
      name: PYPA_ADVISORY_DATABASE.name,
      repository: PYPA_ADVISORY_DATABASE.repository,
      licence: PYPA_ADVISORY_DATABASE.licence,
      ...(repository.commit ? { commit: repository.commit, commit_date: repository.commitDate } : {}),
      ...(repository.commit ? {} : { digest: repository.digest(files) }),
      skipped,
    },
    advisories,
  };
}
