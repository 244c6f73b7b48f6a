import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { DefectEnvelope } from "../../src/envelope/envelope.ts";
import { runScoreCommand } from "../../src/score/score-command.ts";
import { envelope, tempDirectory, writeLedger } from "./fixtures.ts";

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const LEDGER = `ledger_version: 1
target: shop
defects:
  - id: SHOP-01
    title: Orders of other users are readable
    domain: security
    class: missing-authorization
    severity: high
    locations:
      - endpoint: GET /api/orders/{id}
  - id: SHOP-02
    title: Negative quantity accepted
    domain: api
    class: validation-missing
    severity: medium
    locations:
      - endpoint: POST /api/cart/items
  - id: SHOP-03
    title: Duplicate emails
    domain: data
    class: missing-constraint
    severity: medium
    locations:
      - table: customers
  - id: SHOP-04
    title: Old bug
    domain: security
    class: xss
    severity: low
    locations:
      - page: /search
    fixed_in: 9a8b7c6
not_defects:
  - id: SHOP-N1
    title: Health check is public on purpose
    domain: security
    locations:
      - endpoint: GET /healthz
    why: load balancers call it without credentials
`;

function makeRun(home: string, runId: string, envelopes: DefectEnvelope[], ledgerLines: string[]) {
  const directory = path.join(home, "runs", runId);
  fs.mkdirSync(path.join(directory, "envelopes"), { recursive: true });
  for (const item of envelopes) {
    fs.writeFileSync(
      path.join(directory, "envelopes", `${item.id}.json`),
      JSON.stringify({ ...item, run_id: runId }),
    );
  }
  fs.writeFileSync(path.join(directory, "ledger.jsonl"), ledgerLines.join("\n"));
  return directory;
}

const line = (seq: number, kind: string, data: Record<string, unknown>, agent?: string) =>
  JSON.stringify({ seq, at: "2026-11-30T10:00:00Z", kind, ...(agent ? { agent } : {}), data });

function findings(): DefectEnvelope[] {
  return [
    envelope({ id: "F1", value: "GET /api/orders/12", severity: "high" }),
    envelope({ id: "F2", value: "GET /api/orders/:orderId" }),
    envelope({
      id: "F3",
      domain: "api",
      defect_class: "wrong-status",
      value: "post /api/cart/items/",
      severity: "low",
    }),
    envelope({ id: "F4", defect_class: "missing-authentication", value: "GET /healthz" }),
    envelope({ id: "F5", domain: "ui", defect_class: "console-error", kind: "page", value: "/checkout" }),
    envelope({
      id: "F6",
      domain: "data",
      defect_class: "missing-constraint",
      kind: "table",
      value: "customers.email",
      confidence: 0.5,
    }),
    envelope({ id: "F7", defect_class: "xss", kind: "page", value: "/search?q=<script>" }),
  ];
}

describe("qaas score (black box)", () => {
  it("scores a hand-made run from the binary and prints one JSON object", () => {
    const home = tempDirectory("home");
    const ledgerFile = writeLedger(LEDGER);
    makeRun(home, "2026-11-30T10-00-00-aaaa", findings(), [
      line(1, "run_started", { mode: "nightly" }),
      line(2, "agent_finished", { cost_usd: 0.25 }, "PROBER"),
      line(3, "agent_finished", { cost_usd: 0.5 }, "SECURITY"),
      line(4, "agent_finished", { outcome: "ok" }, "MAPPER"),
      '{"seq":5,"at":"2026-11-30T10:0', // cut by a crash
    ]);
    const result = spawnSync(
      process.execPath,
      ["bin/qaas.js", "--home", home, "score", "2026-11-30T10-00-00-aaaa", "--ledger", ledgerFile, "--json"],
      { cwd: repositoryRoot, encoding: "utf8", env: { ...process.env, QAAS_HOME: "" } },
    );
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const card = JSON.parse(result.stdout);
    expect(card).toMatchObject({
      run_id: "2026-11-30T10-00-00-aaaa",
      defects: 3,
      fixed_defects: 1,
      findings: 6,
      not_fileable: 1,
      true_positives: 2,
      recall: 2 / 3,
      precision: 2 / 4,
      duplicates: 1 / 3,
      class_agreement: 0.5,
      severity_agreement: 0.5,
      cost_usd: 0.75,
      cost_per_accepted_usd: 0.375,
      by_domain: {
        api: { recall: 1, precision: 1, defects: 1, true_positives: 1 },
        security: { recall: 1, precision: 0.5, defects: 1, true_positives: 1 },
        data: { recall: 0, precision: null, defects: 1, true_positives: 0 },
        ui: { recall: null, precision: 0, defects: 0, true_positives: 0 },
      },
    });
    expect(card.false_positives).toEqual([
      expect.objectContaining({
        envelope_id: "F4",
        not_defect: "SHOP-N1",
        location: { kind: "endpoint", value: "GET /healthz" },
      }),
    ]);
    expect(card.unlisted.map((finding: { envelope_id: string }) => finding.envelope_id)).toEqual(["F5"]);
    expect(card.ignored.map((finding: { envelope_id: string }) => finding.envelope_id)).toEqual(["F7"]);
    expect(card.missed.map((defect: { id: string }) => defect.id)).toEqual(["SHOP-03"]);
  }, 30_000);

  it("refuses an invalid ledger from the binary with its code, entry and field", () => {
    const home = tempDirectory("home-bad");
    makeRun(home, "run-a", [], [line(1, "run_started", {})]);
    const ledgerFile = writeLedger(LEDGER.replace("severity: medium", "severity: major"));
    const result = spawnSync(
      process.execPath,
      ["bin/qaas.js", "--home", home, "score", "--ledger", ledgerFile],
      {
        cwd: repositoryRoot,
        encoding: "utf8",
      },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `line 15, defects[1] "SHOP-02", field severity: "major" must be critical`,
    );
    expect(result.stderr).toContain("[LEDGER_INVALID]");
  }, 30_000);
});

describe("runScoreCommand", () => {
  it("takes the newest run, the ledger it recorded, the report's cost and the configured threshold", () => {
    const home = tempDirectory("home-defaults");
    const cwd = tempDirectory("cwd");
    const ledgerFile = writeLedger(LEDGER);
    makeRun(home, "2026-11-29T08-00-00-old", [], [line(1, "run_started", {})]);
    const newest = makeRun(home, "2026-11-30T08-00-00-new", findings(), [
      line(1, "run_started", { golden_ledger: ledgerFile }),
      line(2, "agent_finished", { cost_usd: 9 }),
    ]);
    fs.writeFileSync(path.join(newest, "report.json"), JSON.stringify({ budget: { used_usd: 1 } }));
    fs.mkdirSync(path.join(cwd, "config"));
    fs.writeFileSync(
      path.join(cwd, "config", "system.yaml"),
      "version: 1\nthresholds:\n  file_confidence: 0.4\n",
    );

    const result = runScoreCommand({ home, cwd, json: true });
    const card = JSON.parse(result.output);
    expect(card.run_id).toBe("2026-11-30T08-00-00-new");
    expect(card.ledger).toBe(ledgerFile);
    expect(card.threshold).toBe(0.4);
    expect(card.findings).toBe(7);
    expect(card.true_positives).toBe(3);
    expect(card.cost_per_accepted_usd).toBeCloseTo(1 / 3);

    const explicit = runScoreCommand({ home, cwd, threshold: "0.95" });
    expect(explicit.scorecard.findings).toBe(0);
    expect(explicit.output).toContain("Scorecard  run 2026-11-30T08-00-00-new");
    expect(explicit.output).toMatch(
      /Missed defects \(3\)\n\s+SHOP-01\s+security\/missing-authorization\s+high\s+endpoint GET \/api\/orders\/\{id\}/,
    );
  });

  it("renders the human scorecard with the lists a person acts on", () => {
    const home = tempDirectory("home-human");
    const ledgerFile = writeLedger(LEDGER);
    makeRun(home, "run-1", findings(), [line(1, "run_started", {})]);
    const { output } = runScoreCommand({ home, ledger: ledgerFile, cwd: tempDirectory("cwd-human") });
    expect(output).toMatch(/recall\s+0\.67\s+2 of 3 defects found; 1 fixed, not scored/);
    expect(output).toMatch(/precision\s+0\.50\s+2 true, 1 false positive, 1 unlisted/);
    expect(output).toMatch(/security\s+1\s+1\s+1\s+0\s+1\.00\s+0\.50/);
    expect(output).toMatch(/F4\s+matches SHOP-N1\s+endpoint GET \/healthz/);
    expect(output).toMatch(/Unlisted findings \(1\).*\n\s+F5\s+ui\/console-error\s+page \/checkout/);
  });

  it("asks for --ledger when the run recorded none", () => {
    const home = tempDirectory("home-noledger");
    makeRun(home, "run-1", [], [line(1, "run_started", {})]);
    expect(() => runScoreCommand({ home })).toThrow(/names no golden ledger .*; pass --ledger/);
  });

  it("refuses a bad threshold, an unknown run and a damaged ledger line before the last", () => {
    const home = tempDirectory("home-errors");
    const ledgerFile = writeLedger(LEDGER);
    makeRun(home, "run-1", [], ["not json", line(2, "run_started", {})]);
    expect(() => runScoreCommand({ home, ledger: ledgerFile, threshold: "high" })).toThrow(
      /--threshold must be a number/,
    );
    expect(() => runScoreCommand({ home, run: "run-9", ledger: ledgerFile })).toThrow(
      /no run "run-9" .*newest runs: run-1/,
    );
    expect(() => runScoreCommand({ home, ledger: ledgerFile })).toThrow(/line 1 is not JSON/);
  });

  it("skips an envelope that fails the schema and warns about it", () => {
    const home = tempDirectory("home-skip");
    const ledgerFile = writeLedger(LEDGER);
    const directory = makeRun(home, "run-1", findings().slice(0, 1), [line(1, "run_started", {})]);
    fs.writeFileSync(path.join(directory, "envelopes", "broken.json"), JSON.stringify({ id: "x" }));
    const result = runScoreCommand({ home, ledger: ledgerFile, json: true, cwd: tempDirectory("cwd-skip") });
    expect(result.scorecard.true_positives).toBe(1);
    expect(result.warnings).toEqual([
      expect.stringMatching(/skipped .*broken\.json, not a valid envelope: /),
    ]);
  });
});
