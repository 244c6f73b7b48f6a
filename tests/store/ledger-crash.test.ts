import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RunStore } from "../../src/store/run-store.ts";

const temporaryHome = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-ledger-"));

function storeWithEntries(count: number): RunStore {
  const store = RunStore.create(temporaryHome(), { runId: "crash", mode: "nightly", target: "shop" });
  for (let index = 0; index < count; index += 1) store.append("tool_called", { index });
  return store;
}

describe("ledger after a crash", () => {
  it("drops a last line cut by a crash, with a warning naming the file and line", () => {
    const store = storeWithEntries(3);
    fs.appendFileSync(store.ledgerPath, '{"seq":4,"at":"2026-11-29T20:0');
    const { entries, warnings } = store.readLedger();
    expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(warnings).toEqual([
      `${store.ledgerPath}: line 4 was cut by a crash (30 bytes, no newline); dropped it`,
    ]);
  });

  it("cuts the partial line off before the next append, records that, and continues seq", () => {
    const store = storeWithEntries(2);
    fs.appendFileSync(store.ledgerPath, '{"seq":3,"at":"2026');
    const resumed = RunStore.open(store.home, store.runId);
    const entry = resumed.append("run_resumed", { reason: "after crash" });
    expect(entry.seq).toBe(4);
    const { entries, warnings } = resumed.readLedger();
    expect(warnings).toEqual([]);
    expect(entries.map((item) => [item.seq, item.kind])).toEqual([
      [1, "tool_called"],
      [2, "tool_called"],
      [3, "warning"],
      [4, "run_resumed"],
    ]);
    expect(entries[2]?.data).toMatchObject({ line: 3, bytes: 19, file: store.ledgerPath });
    expect(fs.readFileSync(store.ledgerPath, "utf8").endsWith("}\n")).toBe(true);
  });

  it("keeps a complete last entry that only lost its newline, and terminates it on append", () => {
    const store = storeWithEntries(1);
    fs.appendFileSync(
      store.ledgerPath,
      JSON.stringify({ seq: 2, at: "2026-11-29T20:00:00Z", kind: "warning", data: {} }),
    );
    expect(store.readLedger()).toEqual({
      entries: [expect.objectContaining({ seq: 1 }), expect.objectContaining({ seq: 2 })],
      warnings: [],
    });
    expect(RunStore.open(store.home, store.runId).append("warning", {}).seq).toBe(3);
    expect(store.readLedger().entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
  });

  it("treats a bad line in the middle as corruption, naming the line", () => {
    const store = storeWithEntries(3);
    const lines = fs.readFileSync(store.ledgerPath, "utf8").split("\n");
    lines[1] = "{ garbage";
    fs.writeFileSync(store.ledgerPath, lines.join("\n"));
    expect(() => store.readLedger()).toThrow(
      expect.objectContaining({
        code: "LEDGER_CORRUPT",
        message: expect.stringContaining(`${store.ledgerPath}: line 2`),
      }),
    );
    expect(() => RunStore.open(store.home, store.runId).append("warning", {})).toThrow(
      expect.objectContaining({ code: "LEDGER_CORRUPT" }),
    );
  });

  it("reads a growing ledger from where it left off, leaving a cut last line for later", () => {
    const store = storeWithEntries(2);
    const first = store.readLedgerFrom(0);
    expect(first.entries.map((entry) => entry.seq)).toEqual([1, 2]);
    expect(first.offset).toBe(fs.statSync(store.ledgerPath).size);
    store.append("warning", {});
    fs.appendFileSync(store.ledgerPath, '{"seq":4,"at":"2026');
    const second = store.readLedgerFrom(first.offset);
    expect(second.entries.map((entry) => entry.seq)).toEqual([3]);
    // The writer mends the cut line on its next append; the reader then gets what follows it.
    RunStore.open(store.home, store.runId).append("run_resumed", {});
    expect(store.readLedgerFrom(second.offset).entries.map((entry) => [entry.seq, entry.kind])).toEqual([
      [4, "warning"],
      [5, "run_resumed"],
    ]);
    // A ledger written anew, shorter than where the reader was, is read from its start.
    fs.writeFileSync(store.ledgerPath, `${fs.readFileSync(store.ledgerPath, "utf8").split("\n")[0]}\n`);
    expect(store.readLedgerFrom(second.offset + 1000).entries.map((entry) => entry.seq)).toEqual([1]);
  });

  it("names a bad line by its number in the whole file when reading from an offset", () => {
    const store = storeWithEntries(3);
    const { offset } = store.readLedgerFrom(0);
    fs.appendFileSync(store.ledgerPath, "{ garbage\n");
    expect(() => store.readLedgerFrom(offset)).toThrow(
      expect.objectContaining({ message: expect.stringContaining(`${store.ledgerPath}: line 4`) }),
    );
  });

  it("treats an entry of an unknown kind as corruption", () => {
    const store = storeWithEntries(1);
    fs.appendFileSync(
      store.ledgerPath,
      `${JSON.stringify({ seq: 2, at: "x", kind: "invented", data: {} })}\n`,
    );
    expect(() => store.readLedger()).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/line 2.*invented/) }),
    );
  });

  it("loses no acknowledged entry when the writing process is SIGKILLed", async () => {
    const store = storeWithEntries(0);
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        path.join(import.meta.dirname, "fixtures", "append-forever.ts"),
        store.home,
        store.runId,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_code, signal) => resolve(signal)),
    );
    let acknowledged = 0;
    try {
      acknowledged = await new Promise<number>((resolve, reject) => {
        let buffer = "";
        let stderr = "";
        let highest = 0;
        const timer = setTimeout(
          () => reject(new Error(`only ${highest} entries acknowledged: ${stderr}`)),
          20_000,
        );
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.on("exit", () => reject(new Error(`writer exited before it was killed: ${stderr}`)));
        child.stdout.on("data", (chunk: Buffer) => {
          buffer += chunk.toString();
          const lines = buffer.split("\n");
          buffer = lines.pop() ?? "";
          for (const line of lines) highest = Math.max(highest, Number(line));
          if (highest >= 200) {
            clearTimeout(timer);
            // Killed mid-stream: it is usually in the middle of its next append.
            child.kill("SIGKILL");
            resolve(highest);
          }
        });
      });
    } finally {
      child.kill("SIGKILL");
    }
    expect(await exited).toBe("SIGKILL");
    const { entries } = store.readLedger();
    const seqs = entries.map((entry) => entry.seq);
    expect(seqs.length).toBeGreaterThanOrEqual(acknowledged);
    expect(seqs.slice(0, acknowledged)).toEqual(
      Array.from({ length: acknowledged }, (_, index) => index + 1),
    );
    // And the run can carry on from its files.
    expect(RunStore.open(store.home, store.runId).append("run_resumed", {}).seq).toBeGreaterThan(
      acknowledged,
    );
  });
});
