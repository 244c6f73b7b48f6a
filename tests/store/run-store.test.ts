import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { LedgerKind } from "../../src/store/ledger-kinds.ts";
import { newRunId, RunStore } from "../../src/store/run-store.ts";
import { sampleEnvelope } from "./sample-envelope.ts";

const temporaryHome = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-store-"));

describe("RunStore layout and ids", () => {
  it("creates runs/<id>/{ledger.jsonl, envelopes/, artifacts/} with a sortable unique id", () => {
    const home = temporaryHome();
    const store = RunStore.create(home, { mode: "nightly", target: "shop" });
    expect(store.runId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
    expect(store.dir).toBe(path.join(home, "runs", store.runId));
    expect(fs.readFileSync(path.join(store.dir, "ledger.jsonl"), "utf8")).toBe("");
    expect(fs.statSync(path.join(store.dir, "envelopes")).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(store.dir, "artifacts")).isDirectory()).toBe(true);
    const ids = new Set(
      Array.from({ length: 30 }, () => RunStore.create(home, { mode: "m", target: "t" }).runId),
    );
    expect(ids.size).toBe(30);
  });

  it("formats ids from UTC time so they sort by creation", () => {
    expect(newRunId(new Date("2026-11-29T20:45:01.000Z"))).toMatch(/^20261129-204501-[0-9a-f]{4}$/);
    expect(newRunId(new Date("2026-01-02T03:04:05Z")) < newRunId(new Date("2026-11-29T00:00:00Z"))).toBe(
      true,
    );
  });

  it("refuses a chosen id that exists or could escape the runs folder", () => {
    const home = temporaryHome();
    RunStore.create(home, { runId: "fixed", mode: "m", target: "t" });
    expect(() => RunStore.create(home, { runId: "fixed", mode: "m", target: "t" })).toThrow(
      expect.objectContaining({ code: "RUN_EXISTS" }),
    );
    expect(() => RunStore.create(home, { runId: "../out", mode: "m", target: "t" })).toThrow(
      expect.objectContaining({ code: "RUN_ID_INVALID" }),
    );
  });

  it("opening a missing run names the run and how to list runs", () => {
    const home = temporaryHome();
    expect(() => RunStore.open(home, "20990101-000000-0000")).toThrow(
      expect.objectContaining({
        code: "RUN_NOT_FOUND",
        message: expect.stringMatching(/20990101-000000-0000.*qaas runs/),
      }),
    );
    expect(() => RunStore.open(home, "../..")).toThrow(expect.objectContaining({ code: "RUN_NOT_FOUND" }));
  });
});

describe("RunStore ledger", () => {
  it("appends one JSON line per entry and continues seq after reopening", () => {
    const home = temporaryHome();
    const store = RunStore.create(home, { runId: "r1", mode: "nightly", target: "shop" });
    const first = store.append("run_started", { mode: "nightly" });
    const second = store.append("tool_called", { tool: "http_request" }, "API");
    expect(first).toMatchObject({ seq: 1, kind: "run_started", data: { mode: "nightly" } });
    expect(first).not.toHaveProperty("agent");
    expect(second).toMatchObject({ seq: 2, kind: "tool_called", agent: "API" });
    const lines = fs.readFileSync(store.ledgerPath, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1] ?? "")).toEqual(second);

    const reopened = RunStore.open(home, "r1");
    expect(reopened.append("run_resumed", {}).seq).toBe(3);
    // The first instance notices the file grew and does not reuse seq 3.
    expect(store.append("warning", { message: "x" }).seq).toBe(4);
    expect(reopened.readLedger()).toEqual({
      entries: [first, second, expect.objectContaining({ seq: 3 }), expect.objectContaining({ seq: 4 })],
      warnings: [],
    });
  });

  it("refuses a kind outside the closed list and data that is not an object", () => {
    const store = RunStore.create(temporaryHome(), { mode: "m", target: "t" });
    expect(() => store.append("made_up" as LedgerKind, {})).toThrow(
      expect.objectContaining({
        code: "LEDGER_KIND_UNKNOWN",
        message: expect.stringContaining("run_started"),
      }),
    );
    expect(() => store.append("warning", [] as unknown as Record<string, unknown>)).toThrow(
      expect.objectContaining({ code: "LEDGER_DATA_INVALID" }),
    );
    expect(store.readLedger().entries).toEqual([]);
  });
});

describe("RunStore envelopes and report", () => {
  it("writes envelopes atomically and reads them sorted by discovery time then id", () => {
    const store = RunStore.create(temporaryHome(), { mode: "m", target: "t" });
    store.writeEnvelope(sampleEnvelope({ id: "env-b", discovered_at: "2026-11-29T20:00:02.000Z" }));
    store.writeEnvelope(sampleEnvelope({ id: "env-c", discovered_at: "2026-11-29T20:00:01.000Z" }));
    const file = store.writeEnvelope(
      sampleEnvelope({ id: "env-a", discovered_at: "2026-11-29T20:00:02.000Z" }),
    );
    expect(file).toBe(path.join(store.dir, "envelopes", "env-a.json"));
    // A temp file left by a killed write is not an envelope.
    fs.writeFileSync(path.join(store.envelopesDir, "env-z.json.123.abcd.tmp"), "{");
    expect(store.readEnvelopes().map((envelope) => envelope.id)).toEqual(["env-c", "env-a", "env-b"]);
    expect(store.readEnvelope("env-a")?.title).toBe(sampleEnvelope().title);
  });

  it("refuses an invalid envelope with field paths, and an id that is not a file name", () => {
    const store = RunStore.create(temporaryHome(), { mode: "m", target: "t" });
    expect(() => store.writeEnvelope({ ...sampleEnvelope(), confidence: 3 })).toThrow(
      expect.objectContaining({ code: "ENVELOPE_INVALID", message: expect.stringContaining("confidence") }),
    );
    expect(() => store.writeEnvelope(sampleEnvelope({ id: "../escape" }))).toThrow(
      expect.objectContaining({ code: "ENVELOPE_ID_INVALID" }),
    );
  });

  it("writes and reads the report", () => {
    const store = RunStore.create(temporaryHome(), { mode: "m", target: "t" });
    expect(store.readReport()).toBeUndefined();
    store.writeReport({ mode: "m", findings: [] });
    expect(store.readReport()).toEqual({ mode: "m", findings: [] });
    fs.writeFileSync(path.join(store.dir, "report.json"), "{ cut");
    expect(() => store.readReport()).toThrow(expect.objectContaining({ code: "REPORT_INVALID" }));
  });
});

describe("RunStore.list and summaries", () => {
  it("lists newest first with status, findings and cost from the ledger", async () => {
    const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
    const home = temporaryHome();
    const older = RunStore.create(home, { runId: "older", mode: "nightly", target: "shop" });
    older.append("run_started", { mode: "nightly", target: "shop" });
    older.append(
      "agent_finished",
      { agent: "API", outcome: "completed", cost_usd: 0.25, tokens: 100 },
      "API",
    );
    older.append("agent_failed", {
      agent: "UI",
      error: "boom",
      cost_usd: 0.5,
      tokens: { input: 10, output: 5 },
    });
    older.append("envelope_emitted", { envelope_id: "e1" });
    older.append("envelope_emitted", { envelope_id: "e2" });
    // Make the owner look gone: a process that has already exited.
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    const meta = JSON.parse(fs.readFileSync(path.join(older.dir, "run.json"), "utf8"));
    fs.writeFileSync(path.join(older.dir, "run.json"), JSON.stringify({ ...meta, pid: gone }));

    await tick();
    const newer = RunStore.create(home, { runId: "newer", mode: "pr-check", target: "blog" });
    newer.append("run_started", { mode: "pr-check", target: "blog" });
    newer.append("run_finished", { status: "completed", findings: 3, cost_usd: 1.5, tokens: 900 });
    fs.writeFileSync(path.join(home, "runs", "not-a-run.txt"), "");

    await tick();
    const live = RunStore.create(home, { runId: "live", mode: "explore", target: "blog" });
    live.append("run_started", { mode: "explore", target: "blog" });

    const listed = RunStore.list(home);
    expect(listed.map((run) => run.id)).toEqual(["live", "newer", "older"]);
    expect(listed[1]).toEqual({
      id: "newer",
      mode: "pr-check",
      target: "blog",
      started: expect.any(String),
      status: "completed",
      findings: 3,
      cost_usd: 1.5,
      tokens: 900,
    });
    expect(listed[2]).toMatchObject({ status: "incomplete", findings: 2, cost_usd: 0.75, tokens: 115 });
    expect(listed[0]).toMatchObject({ status: "running", findings: 0 });
  });

  it("says running again once a process records that it resumed a killed run", () => {
    const home = temporaryHome();
    const store = RunStore.create(home, { runId: "killed", mode: "nightly", target: "shop" });
    store.append("run_started", { mode: "nightly", target: "shop" });
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    const meta = JSON.parse(fs.readFileSync(path.join(store.dir, "run.json"), "utf8"));
    fs.writeFileSync(path.join(store.dir, "run.json"), JSON.stringify({ ...meta, pid: gone }));
    expect(store.summary().status).toBe("incomplete");
    RunStore.open(home, "killed").append("run_resumed", {});
    expect(store.summary()).toMatchObject({ status: "running", mode: "nightly", target: "shop" });
  });

  it("lists a run with a corrupt ledger as corrupt instead of failing the listing", () => {
    const home = temporaryHome();
    const store = RunStore.create(home, { runId: "broken", mode: "nightly", target: "shop" });
    fs.writeFileSync(store.ledgerPath, "not json\n{}\n");
    expect(RunStore.list(home)).toEqual([expect.objectContaining({ id: "broken", status: "corrupt" })]);
  });

  it("lists nothing for a home that has no runs yet", () => {
    expect(RunStore.list(path.join(temporaryHome(), "missing"))).toEqual([]);
  });
});
