import type { Command } from "commander";
import type { TrackerCheckReport } from "../../trackers/tracker.ts";

// `qaas tracker-check`: a preflight of the configured tracker before a run files anything — credentials,
// project or repository, and the permissions filing needs (create, comment, transition). It only reads:
// nothing is created, commented on or moved.

interface TrackerCheckOptions {
  config?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command("tracker-check")
    .description(
      "Check the tracker's credentials, project and permissions (create, comment, transition); creates nothing.",
    )
    .option("--config <dir>", "configuration folder (default: the package's config/)")
    .option("--json", "print the report as JSON")
    .action(async (options: TrackerCheckOptions, command: Command) => {
      const { resolveHome } = await import("../../store/home.ts");
      const home = resolveHome(command.optsWithGlobals<{ home?: string }>().home);
      process.exitCode = await runTrackerCheck(options, home);
    });
}

/** Prints the report and answers the exit code: 0 when every check passed, 1 otherwise. */
export async function runTrackerCheck(
  options: TrackerCheckOptions,
  home: string,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const { DEFAULT_CONFIG_DIR, loadConfig } = await import("../../config/load-config.ts");
  const { createTracker } = await import("../../trackers/create-tracker.ts");
  const { tracker } = loadConfig(options.config ?? DEFAULT_CONFIG_DIR).system;
  let report: TrackerCheckReport;
  try {
    report = await createTracker(tracker, home, env).check();
  } catch (error) {
    // A missing credential is a failed check, reported like the others rather than as a crash.
    const detail = error instanceof Error ? error.message : String(error);
    report = {
      kind: tracker.kind,
      target: tracker.kind,
      ok: false,
      checks: [{ name: "credentials", ok: false, detail }],
    };
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    process.stdout.write(renderReport(report));
  }
  return report.ok ? 0 : 1;
}

export function renderReport(report: TrackerCheckReport): string {
  const width = Math.max(...report.checks.map((item) => item.name.length));
  const lines = [`tracker ${report.kind}: ${report.target}`];
  for (const item of report.checks) {
    lines.push(`  ${item.ok ? "ok  " : "FAIL"} ${item.name.padEnd(width)}  ${item.detail}`);
  }
  const failed = report.checks.filter((item) => !item.ok).map((item) => item.name);
  lines.push(
    report.ok
      ? "tracker ready: nothing was created"
      : `tracker not ready (${failed.join(", ")} failed): nothing was created`,
  );
  return `${lines.join("\n")}\n`;
}
