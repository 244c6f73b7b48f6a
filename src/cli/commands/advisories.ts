import type { Command } from "commander";

// `qaas advisories refresh --from <dir-or-zip>`: rebuild the shipped advisory snapshot from OSV files.
// With a network, download OSV's per-ecosystem archives first:
//   curl -LO https://osv-vulnerabilities.storage.googleapis.com/npm/all.zip   (save as npm.zip)
//   curl -LO https://osv-vulnerabilities.storage.googleapis.com/PyPI/all.zip  (save as pypi.zip)
// then: qaas advisories refresh --from npm.zip --from pypi.zip

export interface AdvisoriesRefreshOptions {
  from: string[];
  out?: string;
  ecosystems?: string;
  packages?: string;
  date?: string;
}

/** The command's logic, separate from its registration (testable without commander). */
export async function doAdvisoriesRefresh(
  options: AdvisoriesRefreshOptions,
): Promise<{ out: string; advisories: number; read: number; skipped: number; snapshot_date: string }> {
  const fs = await import("node:fs");
  const path = await import("node:path");
  const { QaasError } = await import("../../errors.ts");
  const { buildSnapshot } = await import("../../probes/deps/osv-import.ts");
  const { SNAPSHOT_FILE } = await import("../../probes/deps/advisory-snapshot.ts");
  if (options.from.length === 0)
    throw new QaasError(
      "ADVISORIES_NO_SOURCE",
      "qaas advisories refresh needs --from <folder-of-osv-json | all.zip> (repeatable)",
    );
  if (options.date && !/^\d{4}-\d{2}-\d{2}$/.test(options.date))
    throw new QaasError("ADVISORIES_BAD_DATE", `--date must be YYYY-MM-DD, got ${options.date}`);
  const { snapshot, read, skipped } = buildSnapshot({
    sources: options.from,
    ecosystems: options.ecosystems
      ?.split(",")
      .map((value) => value.trim())
      .filter(Boolean),
    packages: options.packages
      ?.split(",")
      .map((value) => value.trim())
      .filter(Boolean),
    date: options.date,
  });
  if (snapshot.advisories.length === 0) {
    throw new QaasError(
      "ADVISORIES_EMPTY",
      `no advisory for the chosen ecosystems was found in ${options.from.join(", ")} (${read} files read); the snapshot was left unchanged`,
    );
  }
  const out = path.resolve(options.out ?? SNAPSHOT_FILE);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const temporary = `${out}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(snapshot, null, 1)}\n`);
  fs.renameSync(temporary, out);
  return {
    out,
    advisories: snapshot.advisories.length,
    read,
    skipped,
    snapshot_date: snapshot.snapshot_date,
  };
}

export function register(program: Command): void {
  const advisories = program
    .command("advisories")
    .description("manage the vulnerability advisory snapshot used by audit_dependencies");
  advisories
    .command("refresh")
    .description(
      "rebuild data/advisories/osv-snapshot.json from OSV files (a folder of *.json or OSV's all.zip)",
    )
    .requiredOption(
      "--from <path>",
      "folder of OSV JSON files or an OSV all.zip (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
      [] as string[],
    )
    .option(
      "--out <file>",
      "where to write the snapshot (default: the shipped data/advisories/osv-snapshot.json)",
    )
    .option("--ecosystems <list>", "comma-separated OSV ecosystems to keep", "npm,PyPI")
    .option("--packages <list>", "comma-separated package names to keep (default: all)")
    .option("--date <YYYY-MM-DD>", "snapshot_date to record (default: today)")
    .action(async (options: AdvisoriesRefreshOptions) => {
      const result = await doAdvisoriesRefresh(options);
      process.stdout.write(
        `wrote ${result.advisories} advisories (snapshot_date ${result.snapshot_date}) to ${result.out}; ${result.read} files read, ${result.skipped} skipped\n`,
      );
    });
}
