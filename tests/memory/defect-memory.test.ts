import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { DefectMemory, MEMORY_SCHEMA_VERSION, type RecordInput } from "../../src/memory/defect-memory.ts";

const run = promisify(execFile);
const temporaryHome = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-memory-"));

const finding = (overrides: Partial<RecordInput> = {}): RecordInput => ({
  fingerprint: "fp_invoice_authz",
  runId: "run-1",
  envelopeId: "env-1",
  title: "Any signed-in user can read another tenant's invoice",
  domain: "security",
  defectClass: "missing-authorization",
  location: { kind: "endpoint", value: "GET /api/invoices/{id}" },
  ...overrides,
});

describe("DefectMemory", () => {
  it("counts a fingerprint once per run and tells when it was first seen", () => {
    const memory = DefectMemory.open(temporaryHome());
    expect(memory.record(finding())).toEqual({ firstSeen: true, occurrences: 1 });
    // The same (fingerprint, run) again — e.g. a retried agent — counts once and is still "new in this run".
    expect(memory.record(finding({ envelopeId: "env-1-retry" }))).toEqual({
      firstSeen: true,
      occurrences: 1,
    });
    expect(memory.record(finding({ runId: "run-2", envelopeId: "env-9" }))).toEqual({
      firstSeen: false,
      occurrences: 2,
    });
    expect(memory.get("fp_invoice_authz")).toMatchObject({
      fingerprint: "fp_invoice_authz",
      domain: "security",
      defectClass: "missing-authorization",
      location: { kind: "endpoint", value: "GET /api/invoices/{id}" },
      firstRun: "run-1",
      lastRun: "run-2",
      occurrences: 2,
    });
    expect(memory.occurrences("fp_invoice_authz").map((item) => [item.runId, item.envelopeId])).toEqual([
      ["run-1", "env-1"],
      ["run-2", "env-9"],
    ]);
    expect(memory.get("fp_unknown")).toBeUndefined();
    memory.close();
  });

  it("remembers tickets per tracker and answers the latest", () => {
    const memory = DefectMemory.open(temporaryHome());
    memory.record(finding());
    expect(memory.ticketFor("fp_invoice_authz")).toBeUndefined();
    memory.recordTicket("fp_invoice_authz", { tracker: "local", key: "QA-1", url: null, state: "open" });
    memory.recordTicket("fp_invoice_authz", {
      tracker: "local",
      key: "QA-1",
      url: "file:///qa-1",
      state: "closed",
    });
    expect(memory.ticketFor("fp_invoice_authz")).toEqual({
      tracker: "local",
      key: "QA-1",
      url: "file:///qa-1",
      state: "closed",
    });
    expect(memory.ticketFor("fp_invoice_authz", "jira")).toBeUndefined();
    memory.close();
  });

  it("ranks a near-duplicate high and an unrelated finding low", () => {
    const memory = DefectMemory.open(temporaryHome());
    memory.record(finding());
    memory.record(
      finding({
        fingerprint: "fp_cycle",
        title: "Import cycle between the order and payment services",
        domain: "architecture",
        defectClass: "circular-dependency",
        location: { kind: "file", value: "src/services/orders.ts" },
      }),
    );
    const similar = memory.searchSimilar({
      title: "Invoices of other tenants are readable by any user",
      location: { kind: "endpoint", value: "get /api/invoices/42" },
      domain: "security",
    });
    expect(similar[0]).toMatchObject({ fingerprint: "fp_invoice_authz" });
    expect(similar[0]?.score).toBeGreaterThan(0.6);
    const unrelated = similar.find((item) => item.fingerprint === "fp_cycle");
    expect(unrelated?.score ?? 0).toBeLessThan(0.15);
    expect(memory.searchSimilar({ title: "tenant invoice", limit: 1 })).toHaveLength(1);
    memory.close();
  });

  it("creates the schema once, with a version, in WAL mode, and keeps data across reopen", () => {
    const home = temporaryHome();
    DefectMemory.open(home).close();
    const first = DefectMemory.open(home);
    first.record(finding());
    first.close();
    const database = new Database(path.join(home, "memory.db"));
    expect(database.pragma("user_version", { simple: true })).toBe(MEMORY_SCHEMA_VERSION);
    expect(database.pragma("journal_mode", { simple: true })).toBe("wal");
    database.close();
    const again = DefectMemory.open(home);
    expect(again.get("fp_invoice_authz")?.occurrences).toBe(1);
    again.close();
  });

  it("refuses a database written by a newer schema", () => {
    const home = temporaryHome();
    const database = new Database(path.join(home, "memory.db"));
    database.pragma(`user_version = ${MEMORY_SCHEMA_VERSION + 1}`);
    database.close();
    expect(() => DefectMemory.open(home)).toThrow(expect.objectContaining({ code: "MEMORY_SCHEMA_NEWER" }));
  });

  it("keeps counts exact when two processes record into the same database at once", async () => {
    const home = temporaryHome();
    const script = path.join(import.meta.dirname, "fixtures", "record-many.ts");
    const runs = 21;
    const fingerprints = 50;
    const writers = ["alpha", "beta"].map((writer) =>
      run(
        process.execPath,
        ["--import", "tsx", script, home, writer, String(runs), String(fingerprints), "2"],
        { timeout: 30_000 },
      ),
    );
    const spans = (await Promise.all(writers)).map((result) => result.stdout.trim().split(" ").map(Number));
    // Both wrote at the same time: each started before the other finished.
    expect(Math.max(...spans.map((span) => span[0] ?? 0))).toBeLessThan(
      Math.min(...spans.map((span) => span[1] ?? 0)),
    );

    const memory = DefectMemory.open(home);
    // Per fingerprint: the shared run once, plus (runs - 1) own runs of each writer.
    const expected = 1 + 2 * (runs - 1);
    for (let index = 0; index < fingerprints; index += 1) {
      expect(memory.get(`fp_${index}`)?.occurrences).toBe(expected);
      expect(memory.occurrences(`fp_${index}`)).toHaveLength(expected);
    }
    memory.close();
    const database = new Database(path.join(home, "memory.db"));
    expect(database.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(database.prepare("SELECT COUNT(*) AS count FROM occurrences").get()).toEqual({
      count: fingerprints * expected,
    });
    expect(database.prepare("SELECT COUNT(*) AS count FROM fingerprints").get()).toEqual({
      count: fingerprints,
    });
    database.close();
  });
});
