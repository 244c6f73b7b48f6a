// Builds the advisory snapshot audit_dependencies matches lockfiles against (data/advisories/snapshot.jsonl)
// from public advisory databases fetched as git repositories. See data/advisories/README.md.
//
//   npx tsx scripts/advisories/build.ts \
//     --osv data/advisories/curated-ghsa.json \
//     --pypa <pypa/advisory-database checkout or bare git dir> \
//     --retirejs <RetireJS/retire.js checkout or bare git dir> \
//     --nodejs-security-wg <nodejs/security-wg checkout or bare git dir> \
//     --date YYYY-MM-DD
//
// Each repository is read at its HEAD commit, which the snapshot records; the same inputs and date give
// the same bytes.
import { pathToFileURL } from "node:url";
import { Command } from "commander";
import type { AdvisoriesRefreshOptions } from "../../src/cli/commands/advisories.ts";
import { addSourceOptions, describeRefresh, doAdvisoriesRefresh } from "../../src/cli/commands/advisories.ts";

/** Runs the build with `argv` (without node and the script) and answers what it printed. */
export async function main(argv: readonly string[]): Promise<string> {
  let report = "";
  const program = addSourceOptions(
    new Command("build")
      .description("build data/advisories/snapshot.jsonl from advisory repositories")
      .exitOverride(),
  ).action(async (options: AdvisoriesRefreshOptions) => {
    if (!options.date)
      throw new Error("--date YYYY-MM-DD is required: the snapshot records the day it was built");
    report = describeRefresh(await doAdvisoriesRefresh(options));
  });
  await program.parseAsync([...argv], { from: "user" });
  return report;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (report) => process.stdout.write(report),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
