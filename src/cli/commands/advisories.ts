import type { Command } from "commander";

// `qaas advisories refresh`: rebuild the shipped advisory snapshot. The same builder backs
// scripts/advisories/build.ts; data/advisories/README.md says where each source comes from.
//   qaas advisories refresh --from npm.zip --from pypi.zip            (OSV exports)
//   qaas advisories refresh --pypa <dir> --nodejs-security-wg <dir>   (git checkouts or bare git dirs)

export interface AdvisoriesRefreshOptions {
  /** OSV files: a folder of `*.json`, an OSV `all.zip`, or one JSON file (`--from` and `--osv` alike). */
  from?: string[];
  osv?: string[];
  pypa?: string[];
  retirejs?: string[];
  nodejsSecurityWg?: string[];
  out?: string;
  ecosystems?: string;
  packages?: string;
  date?: string;
}

export interface AdvisoriesRefreshResult {
  out: string;
  advisories: number;
  snapshot_date: string;
  bytes: number;
  sources: Array<{ name: string; commit?: string; advisories: number; skipped: Record<string, number> }>;
}

function list(value: string | undefined): string[] | undefined {
  const items = value
    ?.split(",")
    .map((item) => item.trim())
    .filter(Boolean);
  return items?.length ? items : undefined;
}

/** The command's logic, separate from its registration (testable without commander). */
export async function doAdvisoriesRefresh(
  options: AdvisoriesRefreshOptions,
): Promise<AdvisoriesRefreshResult> {
  const fs = await import("node:fs");
  const path = await import("node:path");
  const { QaasError } = await import("../../errors.ts");
  const { buildAdvisorySnapshot } = await import("../../probes/deps/snapshot-build.ts");
  const { SNAPSHOT_FILE, serializeSnapshot, writeSnapshot } = await import(
    "../../probes/deps/advisory-snapshot.ts"
  );
  const osv = [...(options.from ?? []), ...(options.osv ?? [])];
  const snapshot = buildAdvisorySnapshot({
    osv,
    pypa: options.pypa,
    retirejs: options.retirejs,
    nodejsSecurityWg: options.nodejsSecurityWg,
    date: options.date,
    ecosystems: list(options.ecosystems),
    packages: list(options.packages),
  });
  if (snapshot.advisories.length === 0) {
    throw new QaasError(
      "ADVISORIES_EMPTY",
      `no advisory for the chosen ecosystems was found in ${snapshot.sources.map((source) => source.name).join(", ")}; the snapshot was left unchanged`,
    );
  }
  const out = path.resolve(options.out ?? SNAPSHOT_FILE);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  writeSnapshot(out, snapshot);
  return {
    out,
    advisories: snapshot.advisories.length,
    snapshot_date: snapshot.snapshot_date,
    bytes: Buffer.byteLength(serializeSnapshot(snapshot)),
    sources: snapshot.sources.map((source) => ({
      name: source.name,
      ...(source.commit ? { commit: source.commit } : {}),
      advisories: source.advisories,
      skipped: source.skipped,
    })),
  };
}

export function describeRefresh(result: AdvisoriesRefreshResult): string {
  const lines = result.sources.map((source) => {
    const skipped = Object.entries(source.skipped)
      .map(([reason, number]) => `${reason} ${number}`)
      .join(", ");
    return `  ${source.name}${source.commit ? `@${source.commit.slice(0, 12)}` : ""}: ${source.advisories} advisories kept${skipped ? `; left out: ${skipped}` : ""}`;
  });
  return `wrote ${result.advisories} advisories (snapshot_date ${result.snapshot_date}, ${(result.bytes / 1024).toFixed(0)} KiB) to ${result.out}\n${lines.join("\n")}\n`;
}

const repeatable = (value: string, previous: string[] = []) => [...previous, value];

/** The source options shared by `qaas advisories refresh` and scripts/advisories/build.ts. */
export function addSourceOptions(command: Command): Command {
  return command
    .option(
      "--from <path>",
      "OSV files: a folder of *.json, an OSV all.zip or one JSON file (repeatable)",
      repeatable,
    )
    .option("--osv <path>", "same as --from (repeatable)", repeatable)
    .option(
      "--pypa <dir>",
      "pypa/advisory-database: a checkout, a bare git dir or an unpacked copy",
      repeatable,
    )
    .option(
      "--retirejs <dir>",
      "RetireJS/retire.js: a checkout, a bare git dir or an unpacked copy",
      repeatable,
    )
    .option(
      "--nodejs-security-wg <dir>",
      "nodejs/security-wg: a checkout, a bare git dir or an unpacked copy",
      repeatable,
    )
    .option(
      "--out <file>",
      "where to write the snapshot (default: the shipped data/advisories/snapshot.jsonl)",
    )
    .option("--ecosystems <list>", "comma-separated OSV ecosystems to keep", "npm,PyPI")
    .option("--packages <list>", "comma-separated package names to keep (default: all)")
    .option("--date <YYYY-MM-DD>", "snapshot_date to record (default: today, UTC)");
}

export function register(program: Command): void {
  const advisories = program
    .command("advisories")
    .description("manage the vulnerability advisory snapshot used by audit_dependencies");
  addSourceOptions(
    advisories
      .command("refresh")
      .description(
        "rebuild data/advisories/snapshot.jsonl from advisory sources (OSV files and/or git repositories)",
      ),
  ).action(async (options: AdvisoriesRefreshOptions) => {
    process.stdout.write(describeRefresh(await doAdvisoriesRefresh(options)));
  });
}
