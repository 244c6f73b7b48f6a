import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import dbaPlaybook from "../../src/agents/playbooks/dba.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { fixtureMap, fixtureTarget, type RunningApp, startApp } from "../load/fixtures/fixture-target.ts";
import { artifactFiles, findingKeys, playbookTools } from "../load/fixtures/playbook-tools.ts";
import { callTool, fakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";

// DBA against the TypeScript fixture: the constraints its code assumes and its schema lacks are found
// and confirmed (through the API where it takes writes, on a scratch copy otherwise), the races are
// shown with concurrent requests, and the look-alikes the schema does enforce are left alone.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("typescript");
});
afterAll(async () => {
  await app?.stop();
});

const tool = (name: string) => dbTools.find((candidate) => candidate.name === name)!;

describe("DBA on a TypeScript application", () => {
  it("infers the assumptions and which of them the schema already enforces", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const result = await callTool(tool("infer_data_assumptions"), {}, context);
    expect(result.ok).toBe(true);
    const assumptions = (
      result as { data: { assumptions: Array<{ id: string; enforced: boolean; checked_in_code?: boolean }> } }
    ).data.assumptions;
    const unenforced = assumptions
      .filter((assumption) => !assumption.enforced)
      .map((assumption) => assumption.id);
    // orders.quantity: bounded only by the API document (minimum 1); the application validates it, so
    // the playbook below tries it and reports nothing.
    expect(unenforced).toEqual([
      "foreign-key:reviews.product_id",
      "non-negative:orders.quantity",
      "non-negative:products.stock",
      "not-null:users.name",
      "unique:coupons.code",
      "unique:users.email",
    ]);
    const enforced = assumptions
      .filter((assumption) => assumption.enforced)
      .map((assumption) => assumption.id);
    // The look-alikes: a unique username and sku, a CHECK on the wallet balance and the order status, a declared key.
    expect(enforced).toEqual(
      expect.arrayContaining([
        "unique:users.username",
        "unique:products.sku",
        "non-negative:wallets.balance",
        "allowed-values:orders.status",
        "foreign-key:comments.post_id",
      ]),
    );
    expect(assumptions.find((assumption) => assumption.id === "unique:coupons.code")?.checked_in_code).toBe(
      true,
    );
  });

  it("the playbook confirms and emits exactly the planted defects", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const { tools, emitted } = playbookTools();
    await runPlaybookDirectly(dbaPlaybook, [...dbTools, ...tools], context);
    expect(findingKeys(emitted)).toEqual([
      "data-integrity coupons.code",
      "data-integrity posts.likes",
      "missing-constraint products.stock",
      "missing-constraint reviews.product_id",
      "missing-constraint users.email",
    ]);
    expect(artifactFiles(emitted, context.artifactsDir)).toEqual([]);
    const at = (value: string) => emitted.find((draft) => draft.location.value === value) as EnvelopeDraft;
    // Through the API and seen in the database: highest confidence, a failing test to reproduce it.
    expect(at("users.email").confidence).toBeGreaterThanOrEqual(0.9);
    expect(at("users.email").evidence.map((item) => item.kind)).toContain("failing_test");
    expect(at("reviews.product_id").confidence).toBeGreaterThanOrEqual(0.9);
    // On a scratch copy only: lower, still fileable.
    expect(at("products.stock").confidence).toBe(0.8);
    expect(at("products.stock").location.source?.file).toBe("src/server.ts");
    expect(at("coupons.code").summary).toMatch(/simultaneous POST \/api\/coupons/);
    expect(at("posts.likes").summary).toMatch(/update\(s\) lost/);
    // The generated test (two creations with one email) fails while the defect is there.
    const test = at("users.email").evidence.find((item) => item.kind === "failing_test")!;
    const run = spawnSync(
      process.execPath,
      ["--test", path.join(context.artifactsDir, test.uri!.replace(/^artifact:\/\/[^/]+\//, ""))],
      {
        encoding: "utf8",
        env: { ...process.env, QAAS_BASE_URL: app.baseUrl },
        timeout: 15_000,
      },
    );
    expect(run.stdout).toMatch(/a duplicate email must be refused/);
    expect(run.status).not.toBe(0);
    // The scratch trial never touched the live file.
    const live = new Database(app.dbFile, { readonly: true });
    expect(live.prepare("SELECT COUNT(*) AS n FROM products WHERE stock < 0").get()).toEqual({ n: 0 });
    live.close();
  }, 30_000);

  it("on an external target without writes: no request writes anything, trials run on a scratch copy only", async () => {
    const context = fakeRunContext({
      target: fixtureTarget(app, { mode: "external", allow_writes: false }),
      systemMap: fixtureMap(app),
    });
    const hash = () => createHash("sha256").update(fs.readFileSync(app.dbFile)).digest("hex");
    const before = hash();
    const confirmed = await callTool(tool("confirm_constraint"), {}, context);
    expect(confirmed.ok).toBe(true);
    const data = (
      confirmed as { data: { candidates: EnvelopeDraft[]; stats: { requests: number; notes: string[] } } }
    ).data;
    expect(data.stats.requests).toBe(0);
    expect(data.stats.notes.join(" ")).toMatch(/does not allow writes/);
    expect(data.candidates.map((draft) => [draft.location.value, draft.confidence])).toEqual([
      ["reviews.product_id", 0.75],
      ["products.stock", 0.8],
      ["coupons.code", 0.75],
      ["users.email", 0.75],
    ]);
    const race = await callTool(tool("probe_race"), {}, context);
    expect(race.ok && (race.data as { stats: { skipped: string } }).stats.skipped).toMatch(
      /does not allow writes/,
    );
    expect(hash()).toBe(before);
  }, 20_000);

  it("explains a query and names the filtered column no index covers", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const unindexed = await callTool(
      tool("explain_query"),
      { sql: "SELECT id FROM posts WHERE category = 'news'" },
      context,
    );
    expect(unindexed).toMatchObject({
      ok: true,
      data: { plan: ["SCAN posts"], scans: [{ table: "posts", unindexedColumns: ["category"] }] },
    });
    const indexed = await callTool(
      tool("explain_query"),
      { sql: "SELECT id FROM users WHERE email = ?" },
      context,
    );
    expect(indexed).toMatchObject({ ok: true, data: { scans: [] } });
    const refused = await callTool(tool("explain_query"), { sql: "DROP TABLE users" }, context);
    expect(refused.ok).toBe(false);
  });

  it("query_log shows the statements one read request runs", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const result = await callTool(
      tool("query_log"),
      { operation: "GET /api/feed", query: { limit: "3" } },
      context,
    );
    expect(result).toMatchObject({
      ok: true,
      data: {
        operation: "GET /api/feed",
        status: 200,
        queries: 2,
        shapes: {
          "SELECT id, title, author_id FROM posts ORDER BY id LIMIT ?": 1,
          "SELECT id, post_id, body FROM comments WHERE post_id IN (?)": 1,
        },
      },
    });
  });
});
