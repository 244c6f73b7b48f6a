import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runOnceShared } from "../../src/queue/shared-once.ts";
import type { SqlRunner } from "../../src/queue/shared-runs.ts";
import { RUN_ONCE_KEY, type RunOnce } from "../../src/tools/run-once.ts";
import { envControlTools } from "../../src/tools/servers/env-control-server.ts";
import { profileFor } from "../fixtures/probe-harness.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { postgresForFile, queueDatabase } from "./queue-support.ts";

// A run's agents spread over workers still reset the target once per phase: a second reset in the middle
// of another worker's test pulls its data away (a test that failed 2 runs of 3 was held as flaky).

const postgres = postgresForFile();
const resetTool = envControlTools.find((tool) => tool.name === "reset")!;
const once = (sql: SqlRunner, claimedBy: string, key = "reset:reproduce", staleAfterMs = 60_000) => ({
  runId: "run-a",
  key,
  claimedBy,
  staleAfterMs,
  pollMs: 20,
});
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("work done once for a run across workers", () => {
  it("runs the work once for callers that ask together, each getting its answer; another key runs again", async () => {
    const { sql } = await queueDatabase(postgres().url);
    let runs = 0;
    const work = async () => {
      runs += 1;
      await pause(200);
      return { ok: true, data: { run: runs } };
    };
    const answers = await Promise.all(
      ["w1", "w2", "w3"].map((worker) => runOnceShared(sql, once(sql, worker), work)),
    );
    expect(runs).toBe(1);
    expect(answers).toEqual([1, 1, 1].map((run) => ({ ok: true, data: { run } })));
    // Asked again later, the same key answers what was done; a new key (the next phase) does the work.
    expect(await runOnceShared(sql, once(sql, "w2"), work)).toEqual({ ok: true, data: { run: 1 } });
    expect(await runOnceShared(sql, once(sql, "w2", "reset:verify"), work)).toEqual({
      ok: true,
      data: { run: 2 },
    });
  });

  it("lets a waiter do the work when its holder failed, or died holding it", async () => {
    const { sql } = await queueDatabase(postgres().url);
    const failing = runOnceShared(sql, once(sql, "w1"), async () => {
      await pause(500);
      throw new Error("reset exited with code 1");
    });
    // w2 asks only once w1 holds the claim: asked together, either may win it.
    await expect
      .poll(() => sql("SELECT claimed_by FROM qaas_run_once WHERE key = 'reset:reproduce'", []))
      .toEqual([{ claimed_by: "w1" }]);
    const waiting = runOnceShared(sql, once(sql, "w2"), async () => "done by w2");
    await expect(failing).rejects.toThrow(/code 1/);
    expect(await waiting).toBe("done by w2");

    // A claim its holder never answered (SIGKILLed mid-reset) goes stale and is taken over.
    await sql(
      "INSERT INTO qaas_run_once (run_id, key, claimed_by, claimed_at) VALUES ('run-a', 'dead', 'w9', clock_timestamp() - interval '1 hour')",
      [],
    );
    expect(await runOnceShared(sql, once(sql, "w1", "dead", 5_000), async () => "taken over")).toBe(
      "taken over",
    );
    // A fresh claim is waited for, not taken.
    await sql("INSERT INTO qaas_run_once (run_id, key, claimed_by) VALUES ('run-a', 'alive', 'w9')", []);
    const waiter = runOnceShared(sql, once(sql, "w1", "alive", 60_000), async () => "not mine");
    await pause(300);
    await sql(
      `UPDATE qaas_run_once SET done_at = clock_timestamp(), answer = '"done by w9"' WHERE key = 'alive'`,
      [],
    );
    expect(await waiter).toBe("done by w9");
  });

  it("resets the target once per phase key when the phase's agents run in different worker processes", async () => {
    const { sql } = await queueDatabase(postgres().url);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-once-"));
    const profile = profileFor({
      name: "shop",
      source: {},
      environment: {
        mode: "managed",
        base_url: "http://127.0.0.1:9",
        reset: { command: "sleep 0.2; echo reset >> resets.log" },
      },
    });
    const workerContext = (worker: string) => {
      const context = fakeRunContext({
        target: { profile, file: "/tmp/shop.yaml", root, goldenLedger: undefined },
      });
      const shared: RunOnce = (key, work, { staleAfterMs }) =>
        runOnceShared(sql, { runId: "run-a", key, claimedBy: worker, staleAfterMs }, work);
      context.shared.set(RUN_ONCE_KEY, shared);
      return context;
    };
    const resets = () => fs.readFileSync(path.join(root, "resets.log"), "utf8").trim().split("\n").length;

    const answers = await Promise.all(
      ["w1", "w2", "w3"].map((worker) => callTool(resetTool, { once: "reproduce" }, workerContext(worker))),
    );
    expect(answers.every((answer) => answer.ok)).toBe(true);
    expect(resets()).toBe(1);
    // One process without a queue shares its reset the same way; a call without `once` always resets.
    const alone = fakeRunContext({
      target: { profile, file: "/tmp/shop.yaml", root, goldenLedger: undefined },
    });
    await Promise.all([1, 2].map(() => callTool(resetTool, { once: "verify" }, alone)));
    expect(resets()).toBe(2);
    await callTool(resetTool, {}, workerContext("w1"));
    expect(resets()).toBe(3);
  });
});
