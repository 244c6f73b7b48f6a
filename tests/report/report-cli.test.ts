import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { loadReportModel } from "../../src/report/report-model.ts";
import { type TwoRuns, twoRuns } from "./report-fixtures.ts";

// Black-box `qaas report` on runs written by the real store, and the comparison of two runs of a target.

const execute = promisify(execFile);
const repository = path.resolve(import.meta.dirname, "../..");
let runs: TwoRuns;

async function qaas(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const environment = { ...process.env };
  delete environment.QAAS_HOME;
  try {
    const { stdout, stderr } = await execute(
      process.execPath,
      ["bin/qaas.js", "--home", runs.home, ...args],
      {
        cwd: repository,
        env: environment,
        timeout: 30_000,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

beforeAll(() => {
  runs = twoRuns();
});

describe("qaas report", () => {
  it("writes the HTML report into the run's folder by default and prints its path", async () => {
    const result = await qaas("report", "latest");
    expect(result.code).toBe(0);
    const written = result.stdout.trim();
    expect(written).toBe(path.join(runs.home, "runs", runs.secondRun, "report.html"));
    expect(fs.readFileSync(written, "utf8")).toContain("&lt;script&gt;alert(");
  });

  it("writes each format to --out", async () => {
    const folder = fs.mkdtempSync(path.join(runs.home, "out-"));
    for (const [format, name] of [
      ["md", "summary.md"],
      ["sarif", "report.sarif"],
      ["junit", "report.junit.xml"],
    ] as const) {
      const out = path.join(folder, name);
      const result = await qaas("report", runs.secondRun, "--format", format, "--out", out);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe(out);
      expect(fs.statSync(out).size).toBeGreaterThan(100);
    }
    expect(JSON.parse(fs.readFileSync(path.join(folder, "report.sarif"), "utf8")).version).toBe("2.1.0");
  });

  it("names a bad format and a bad run in one line each, exit code 1", async () => {
    const format = await qaas("report", runs.secondRun, "--format", "pdf");
    expect(format.code).toBe(1);
    expect(format.stderr.trim()).toBe(
      'qaas: unknown report format "pdf"; valid formats: html, md, sarif, junit [REPORT_FORMAT_UNKNOWN]',
    );
    const run = await qaas("report", "20990101-000000-dead");
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(/^qaas: no run "20990101-000000-dead" in .*\[RUN_NOT_FOUND\]$/);
  });
});

describe("changes since the previous run of the target", () => {
  it("marks findings new or recurring by fingerprint and lists what was not found again", () => {
    const model = loadReportModel(runs.home, runs.secondRun, { evidence: false });
    expect(model.previousRunId).toBe(runs.firstRun);
    expect(model.findings.map((finding) => [finding.envelope.id, finding.change])).toEqual([
      ["env-xss", "new"],
      ["env-a", "recurring"],
      ["env-cycle", "new"],
    ]);
    expect(model.fixed.map((finding) => finding.title)).toEqual(["Listing orders answers 500"]);
    expect(model.trend.map((point) => [point.runId, point.counts])).toEqual([
      [runs.firstRun, { critical: 0, high: 1, medium: 1, low: 0 }],
      [runs.secondRun, { critical: 0, high: 1, medium: 1, low: 1 }],
    ]);
  });

  it("treats the first run of a target as all new, and ignores runs of other targets", () => {
    const first = loadReportModel(runs.home, runs.firstRun, { evidence: false });
    expect(first.previousRunId).toBeNull();
    expect(first.findings.every((finding) => finding.change === "new")).toBe(true);
    expect(first.fixed).toEqual([]);
  });

  it("lists what the run could not reach", () => {
    const model = loadReportModel(runs.home, runs.secondRun, { evidence: false });
    expect(model.blindSpots).toEqual(
      expect.arrayContaining([
        { kind: "skipped-agent", agent: "SOCKET", detail: "the profile names no WebSocket path", count: 1 },
        { kind: "failed-agent", agent: "AUDITOR", detail: "probe crashed <b>hard</b>", count: 1 },
        {
          kind: "unavailable-tool",
          agent: "API",
          detail: "tools not available in this version: run_single",
          count: 1,
        },
        { kind: "tool-error", agent: "API", detail: "http_request: connection refused", count: 1 },
      ]),
    );
  });
});
