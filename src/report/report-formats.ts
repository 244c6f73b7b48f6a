import { QaasError } from "../errors.ts";
import type { RunStore } from "../store/run-store.ts";
import { renderHtml } from "./render-html.ts";
import { renderJunit } from "./render-junit.ts";
import { renderMarkdown } from "./render-markdown.ts";
import { renderSarif } from "./render-sarif.ts";
import { buildReportModel, type ReportModel } from "./report-model.ts";

// The report formats by name, each with the file it is written to; `qaas report` and the REPORTER's tool
// both go through this table, so the two always produce the same files.

export const REPORT_FORMATS = {
  html: { file: "report.html", render: renderHtml, evidence: true },
  md: { file: "summary.md", render: (model: ReportModel) => renderMarkdown(model), evidence: false },
  sarif: { file: "report.sarif", render: renderSarif, evidence: false },
  junit: { file: "report.junit.xml", render: renderJunit, evidence: false },
} as const;

export type ReportFormat = keyof typeof REPORT_FORMATS;
export const REPORT_FORMAT_NAMES = Object.keys(REPORT_FORMATS) as ReportFormat[];

export function parseReportFormat(value: string): ReportFormat {
  if ((REPORT_FORMAT_NAMES as string[]).includes(value)) return value as ReportFormat;
  throw new QaasError(
    "REPORT_FORMAT_UNKNOWN",
    `unknown report format "${value}"; valid formats: ${REPORT_FORMAT_NAMES.join(", ")}`,
  );
}

/** Renders the named formats from one reading of the run (the model is built once for all of them). */
export function renderReports(
  store: RunStore,
  formats: readonly ReportFormat[],
  now?: Date,
): Array<{ format: ReportFormat; file: string; content: string }> {
  const evidence = formats.some((format) => REPORT_FORMATS[format].evidence);
  const model = buildReportModel(store, { evidence, ...(now ? { now } : {}) });
  return formats.map((format) => ({
    format,
    file: REPORT_FORMATS[format].file,
    content: REPORT_FORMATS[format].render(model),
  }));
}
