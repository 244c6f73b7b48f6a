import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderSweep, sweep } from "../../src/run/sweep.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { wrongStatusDraft } from "../support/sample-draft.ts";
import { tempProject } from "../support/temp-config.ts";

// `qaas sweep` over one tiny target with a golden ledger of two defects, of which the scripted agent finds
// one: recall 0.5, precision 1. The gate passes at a reachable recall and fails above it.

const finding = wrongStatusDraft(0.9);

const ledger = `ledger_version: 1
target: tiny
defects:
  - id: TINY-01
    title: Creating an item answers 200
    domain: api
    class: wrong-status
    severity: low
    locations:
      - endpoint: POST /items
  - id: TINY-02
    title: Deleting an item answers 500
    domain: api
    class: unhandled-error
    severity: medium
    locations:
      - endpoint: DELETE /items/{id}
`;

function tinyProject() {
  const project = tempProject();
  project.addAgent({
    name: "FINDER",
    yaml: {
      description: "Finds one of two defects.",
      layer: "discover",
      phase: "discover",
      tools: ["emit_envelope"],
    },
  });
  project.addMode("tiny", { roster: ["FINDER"], budget: { usd: 1 } });
  const ledgerFile = path.join(project.dir, "defects.yaml");
  fs.writeFileSync(ledgerFile, ledger);
  project.addTarget("tiny", {
    source: { path: "../.." },
    environment: { mode: "none" },
    golden_ledger: ledgerFile,
  });
  return project;
}

const seatFactory = () =>
  new MockSeat({ run: { script: [{ tool: "emit_envelope", input: finding }, { finish: "one found" }] } });

describe("qaas sweep", () => {
  it("passes at a reachable threshold and fails when one is raised above what the runs reach", async () => {
    const project = tinyProject();
    const lines: string[] = [];
    const passing = await sweep({
      home: project.home,
      configDir: project.configDir,
      modes: ["tiny"],
      minRecall: 0.5,
      minPrecision: 1,
      seatFactory,
      log: (line) => lines.push(line),
    });
    expect(passing.rows).toEqual([
      expect.objectContaining({ mode: "tiny", status: "completed", recall: 0.5, precision: 1, failures: [] }),
    ]);
    expect(passing.passed).toBe(true);
    expect(lines.some((line) => line.includes("tiny"))).toBe(true);
    expect(renderSweep(passing)).toContain("pass");

    const failing = await sweep({
      home: project.home,
      configDir: project.configDir,
      modes: ["tiny"],
      minRecall: 0.9,
      seatFactory,
    });
    expect(failing.passed).toBe(false);
    expect(failing.rows[0]?.failures).toEqual(["recall 0.50 < 0.90"]);
    expect(renderSweep(failing)).toContain("FAIL");
  }, 60_000);
});
