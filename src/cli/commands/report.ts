import type { Command } from "commander";
import { QUEUE_READ_OPTION } from "../queue-read-option.ts";

// `qaas report <run>`: one run rendered as HTML, Markdown, SARIF or JUnit XML, written into the run's
// folder (or --out FILE); the path written is printed so a script can pick it up.
export function register(program: Command): void {
  program
    .command("report")
    .description("render a run as a self-contained HTML report, a Markdown summary, SARIF or JUnit XML")
    .argument("<run>", "run id (see `qaas runs`), or `latest`")
    .option("--format <format>", "html, md, sarif or junit", "html")
    .option("--out <file>", "write here instead of into the run's folder")
    .option(...QUEUE_READ_OPTION)
    .option(
      "--config <dir>",
      "with --queue: the configuration whose queue.artifacts store holds the run's evidence (default: the run's own, if on this machine, else the package's config/)",
    )
    .action(
      async (
        run: string,
        options: { format: string; out?: string; queue?: string; config?: string },
        command: Command,
      ) => {
        const { resolveHome } = await import("../../store/home.ts");
        const { openRunArgument } = await import("../open-run.ts");
        const { writeReportFile } = await import("../../report/write-report-file.ts");
        const { parseReportFormat } = await import("../../report/report-formats.ts");
        // A wrong format is named before the run is even looked for.
        parseReportFormat(options.format);
        const { copyQueueRuns } = await import("../queue-runs.ts");
        const home = resolveHome(command.optsWithGlobals<{ home?: string }>().home);
        await copyQueueRuns(options.queue, home, {
          artifactsOf: run,
          ...(options.config !== undefined ? { configDir: options.config } : {}),
        });
        const written = writeReportFile(openRunArgument(home, run), options.format, options.out);
        process.stdout.write(`${written}\n`);
      },
    );
}
