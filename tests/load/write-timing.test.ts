import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { slowOperationsFor } from "../../src/probes/http/slow-operations.ts";
import { loadTools } from "../../src/tools/servers/load-server.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { fixtureMap, fixtureTarget, type RunningApp, startApp } from "./fixtures/fixture-target.ts";

// time_endpoints with `writes`: only writes the run's other probes saw answer slowly are timed, each on a
// record of the probe's own; the fixture's publish action sleeps 350 ms (budget 200), counting a view is
// quick however slow another probe once saw it.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("typescript");
});
afterAll(async () => {
  await app?.stop();
});

interface WritesAnswer {
  candidates: EnvelopeDraft[];
  stats: { writes: Array<Record<string, unknown>>; notes: string[] };
}

/** What earlier probes of the run leave behind: `count` answers of `key`, each taking `ms`. */
async function seenBefore(context: FakeRunContext, key: string, ms: number, count = 2): Promise<void> {
  const pacing = slowOperationsFor(context);
  for (let index = 0; index < count; index += 1) {
    expect(await pacing.enter(key)).toBe(true);
    pacing.answered(key, ms);
    pacing.leave(key, ms);
  }
}

async function timeWrites(context: FakeRunContext): Promise<WritesAnswer> {
  const tool = loadTools.find((candidate) => candidate.name === "time_endpoints")!;
  const result = await callTool(tool, { writes: true }, context);
  if (!result.ok) throw new Error(result.error);
  return result.data as WritesAnswer;
}

async function postCount(): Promise<number> {
  return ((await (await fetch(`${app.baseUrl}/api/stats`)).json()) as { posts: number }).posts;
}

describe("time_endpoints { writes: true }", () => {
  it("reports a write seen slow and slow again when timed alone, on a record of its own, and removes that record", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    // One slow answer is reason enough to time a write; the timing itself is the confirmation.
    await seenBefore(context, "POST /api/posts/{id}/publish", 400, 1);
    await seenBefore(context, "POST /api/posts/{id}/view", 400);
    const before = await postCount();
    const answer = await timeWrites(context);
    expect(answer.candidates.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "slow-endpoint POST /api/posts/{id}/publish",
    ]);
    // Only the writes seen slow were sent; the quick one is cleared by its own timing.
    expect(answer.stats.writes.map((entry) => [entry.operation, entry.result])).toEqual([
      ["POST /api/posts/{id}/view", "slow for other probes, not when timed alone"],
      ["POST /api/posts/{id}/publish", "slow-endpoint"],
    ]);
    expect(await postCount()).toBe(before);
    const [draft] = answer.candidates;
    expect(draft!.summary).toMatch(/other probes saw POST \/api\/posts\/\{id\}\/publish answer in 400 ms/);
    expect(draft!.summary).toMatch(/on a record of the probe's own/);
    // The generated test makes its own post, publishes it, and fails on the time it took.
    const test = draft!.evidence.find((item) => item.kind === "failing_test")!;
    const file = path.join(context.artifactsDir, test.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
    const run = spawnSync(process.execPath, ["--test", file], {
      encoding: "utf8",
      env: { ...process.env, QAAS_BASE_URL: app.baseUrl },
      timeout: 15_000,
    });
    expect(run.status, run.stdout).not.toBe(0);
    expect(run.stdout).toMatch(/POST \/api\/posts\/\{id\}\/publish must answer within 200 ms/);
    const source = fs.readFileSync(file, "utf8");
    expect(source).toContain('"name":"created","as":"alice","method":"POST","path":"/api/posts"');
    expect(source).toContain('"path":"/api/posts/{{created.id}}/publish"');
  }, 30_000);

  it("sends no write the run has not seen slow, and none at all where the target forbids writes", async () => {
    const quiet = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    expect((await timeWrites(quiet)).stats.writes).toEqual([]);
    const readOnly = fakeRunContext({
      target: fixtureTarget(app, { mode: "external", allow_writes: false }),
      systemMap: fixtureMap(app),
    });
    await seenBefore(readOnly, "POST /api/posts/{id}/publish", 400);
    const before = await postCount();
    const answer = await timeWrites(readOnly);
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.notes.join("\n")).toMatch(/does not allow writes: none is timed/);
    expect(await postCount()).toBe(before);
  }, 30_000);
});
