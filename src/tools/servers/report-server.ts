import { z } from "zod";
import { REPORT_FORMAT_NAMES, type ReportFormat, renderReports } from "../../report/report-formats.ts";
import { RunStore } from "../../store/run-store.ts";
import { err, ok } from "../result.ts";
import { defineTool } from "../tool.ts";

// The REPORTER's one heavy tool: renders the run so far (ledger, envelopes, artifacts, earlier runs of the
// target) into the report files and stores each as an artifact of the run. It reads the run store and
// writes only through the run's artifact writer, the same path put_artifact takes.

const writeRunReports = defineTool({
  name: "write_run_reports",
  server: "report",
  description:
    "Render this run's report files and store them as run artifacts: report.html (self-contained: summary by severity and domain, new/recurring/fixed since the previous run of the target, every finding with its evidence, what could not be reached, spend, trend chart), report.sarif (SARIF 2.1.0), report.junit.xml and summary.md (a short pull-request comment). Give `formats` to write only some of them.",
  input: z.strictObject({
    formats: z
      .array(z.enum(REPORT_FORMAT_NAMES as [ReportFormat, ...ReportFormat[]]))
      .min(1)
      .optional(),
  }),
  async run(input, context) {
    let store: RunStore;
    try {
      store = RunStore.open(context.home, context.runId);
    } catch (error) {
      return err(
        `cannot read run ${context.runId}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const formats = input.formats ?? REPORT_FORMAT_NAMES;
    const rendered = renderReports(store, [...new Set(formats)]);
    const artifacts = rendered.map((report) => ({
      format: report.format,
      uri: context.putArtifact(report.file, report.content),
      bytes: Buffer.byteLength(report.content, "utf8"),
    }));
    return ok({ artifacts });
  },
});

export const reportTools = [writeRunReports];
