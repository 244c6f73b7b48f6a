import fs from "node:fs";
import path from "node:path";
import { QaasError } from "../errors.ts";
import { writeFileAtomic } from "../store/atomic-write.ts";
import type { RunStore } from "../store/run-store.ts";
import { parseReportFormat, renderReports } from "./report-formats.ts";

/** Renders one format of a run and writes it (atomically) to `out`, or into the run's folder; answers the path. */
export function writeReportFile(store: RunStore, format: string, out?: string): string {
  const chosen = parseReportFormat(format);
  const [rendered] = renderReports(store, [chosen]);
  if (!rendered)
    throw new QaasError("REPORT_FAILED", `no ${chosen} report was rendered for run ${store.runId}`);
  const file = path.resolve(out ?? path.join(store.dir, rendered.file));
  if (!fs.existsSync(path.dirname(file))) {
    throw new QaasError("REPORT_OUT_INVALID", `--out ${out}: folder ${path.dirname(file)} does not exist`);
  }
  writeFileAtomic(file, rendered.content);
  return file;
}
