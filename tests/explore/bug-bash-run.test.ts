import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../../src/run/start-run.ts";
import { resolveArtifactUri } from "../../src/store/artifacts.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { type BugBashSite, startBugBashSite } from "./bug-bash-site.ts";

// `qaas run --mode bug-bash` end to end over a local site, through the real router, real Chromium and the
// builtin playbooks: four charters walked two at a time, each within the mode's step budget; the real
// defect is confirmed by its repro test failing on the assertion that encodes it, the candidate that does
// not show again and the overlapping report of the same defect are rejected with their reasons.

const CONFIG = fileURLToPath(new URL("../../config/", import.meta.url));

let site: BugBashSite;
let home: string;
let configDir: string;
let profile: string;

beforeAll(async () => {
  site = await startBugBashSite();
  home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-bug-bash-"));
  // The mode's bounds, tightened so one session runs out of steps.
  configDir = path.join(home, "config");
  fs.cpSync(CONFIG, configDir, { recursive: true });
  const system = path.join(configDir, "system.yaml");
  const text = fs.readFileSync(system, "utf8");
  const tightened = text.replace(
    /charters: \{[^}]*\}/,
    "charters: { max: 4, parallel: 2, steps: 3, minutes: 3 }",
  );
  expect(tightened).not.toBe(text);
  fs.writeFileSync(system, tightened);
  profile = path.join(home, "site.yaml");
  fs.writeFileSync(
    profile,
    `name: bash-site\nsource:\n  path: .\nenvironment:\n  mode: external\n  base_url: ${site.baseUrl}\n  health_path: /health\n`,
  );
});

afterAll(async () => {
  await site.close();
});

describe("qaas run --mode bug-bash", () => {
  it("walks the charters in parallel sessions, confirms the real defect by its repro test and rejects the rest with a reason", async () => {
    const { runId, report } = await startRun({
      home,
      configDir,
      mode: "bug-bash",
      target: profile,
      json: true,
      charters: [
        "open the entry page and follow the links it offers",
        'open the entry page and find a way to /status; check that it shows "Ready"',
        "open the entry page and follow every link",
        'open the entry page and find a way to /about; check that it shows "Team", "Contact", "History"',
      ],
    });
    const { entries } = RunStore.open(home, runId).readLedger();

    // Every charter ran as its own session, within the mode's step budget.
    const sessions = entries.filter((entry) => entry.kind === "charter_session").map((entry) => entry.data);
    expect(sessions.map((session) => session.charter).sort()).toEqual(["C1", "C2", "C3", "C4"]);
    for (const session of sessions) expect(Number(session.steps)).toBeLessThanOrEqual(3);
    expect(sessions.find((session) => session.charter === "C4")).toMatchObject({
      ended: "step-limit",
      steps: 3,
      budget: { steps: 3, minutes: 3 },
    });

    const section = report.bug_bash!;
    expect(section.sessions).toHaveLength(4);
    // The server error: one confirmed candidate, its repro test failing on the assertion encoding it.
    expect(section.confirmed).toHaveLength(1);
    const confirmed = section.confirmed[0]!;
    expect(confirmed.title).toMatch(/\/figures answers 500/);
    expect(confirmed.failed_at).toBe("the page answers an error status");
    const verdict = entries.find(
      (entry) => entry.kind === "bash_verdict" && entry.data.candidate === confirmed.candidate,
    )!.data;
    expect(verdict).toMatchObject({ status: "confirmed", runs: 3, failed: 3 });
    const test = fs.readFileSync(
      resolveArtifactUri(home, (verdict.test as { artifact: string }).artifact),
      "utf8",
    );
    expect(test).toMatch(/^\/\/ qaas-encodes: the page answers an error status$/m);

    // The same defect seen by the overlapping charter, and the status text that showed on the next visit.
    const reasons = section.rejected.map((row) => row.reason).sort();
    expect(reasons).toEqual(["did-not-reproduce", "duplicate"]);
    const notShown = section.rejected.find((row) => row.reason === "did-not-reproduce")!;
    expect(notShown.title).toMatch(/"Ready" is not shown on \/status/);
    expect(site.hits.get("/status")).toBeGreaterThan(1);
    expect(section.unverified).toEqual([]);

    // The confirmed candidate is a normal finding, reproduced and filed; the rejected one is not filed.
    const finding = report.findings.items.find((item) => item.id === confirmed.finding_id)!;
    expect(finding).toMatchObject({ domain: "ui", discovered_by: "BROWSER" });
    const filed = report.tickets.map((ticket) => ticket.finding_id);
    expect(filed).toEqual([confirmed.finding_id]);
  }, 300_000);
});
