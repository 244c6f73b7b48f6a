import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queriesDuring, startTestApp, type TestApp } from "./helpers.ts";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  await app.login("alice");
  await app.login("root");
});

afterAll(async () => {
  await app?.stop();
});

function plan(sql: string): string {
  const rows = app.ctx.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[];
  return rows.map((row) => row.detail).join(" | ");
}

describe("seeded performance defects", () => {
  it("DEMO-23 GET /api/projects/{id}/tasks runs two extra queries per returned task", async () => {
    const small = await queriesDuring(app, () =>
      app.request("GET", "/api/projects/2/tasks?limit=2", { as: "alice" }),
    );
    const large = await queriesDuring(app, () =>
      app.request("GET", "/api/projects/2/tasks?limit=16", { as: "alice" }),
    );
    expect(large.length - small.length).toBeGreaterThanOrEqual(2 * 14 - 4);
    expect(
      large.filter((sql) => sql.startsWith("SELECT COUNT(*) AS count FROM comments WHERE task_id =")).length,
    ).toBe(16);
    const page = await queriesDuring(app, () => app.request("GET", "/projects/2", { as: "alice" }));
    expect(
      page.filter((sql) => sql.startsWith("SELECT COUNT(*) AS count FROM comments WHERE task_id =")).length,
    ).toBe(18);
  });

  it("DEMO-24 GET /api/activity ignores limit and returns the whole feed", async () => {
    const response = await app.request("GET", "/api/activity?limit=5", { as: "alice" });
    expect(response.status).toBe(200);
    expect(response.json.limit).toBe(5);
    expect(response.json.items.length).toBeGreaterThan(150);
    await app.request("POST", "/api/tasks/1/comments", { as: "alice", body: { body: "one more" } });
    const grown = await app.request("GET", "/api/activity?limit=5", { as: "alice" });
    expect(grown.json.items.length).toBe(response.json.items.length + 1);
  });

  it("DEMO-25 GET /api/me/tasks filters tasks on assignee_id, which has no index (full scan)", async () => {
    const indexed = (app.ctx.db.prepare("PRAGMA index_list(tasks)").all() as { name: string }[]).flatMap(
      (index) =>
        (app.ctx.db.prepare(`PRAGMA index_info(${index.name})`).all() as { name: string }[]).map(
          (c) => c.name,
        ),
    );
    expect(indexed).not.toContain("assignee_id");
    const queries = await queriesDuring(app, () => app.request("GET", "/api/me/tasks", { as: "alice" }));
    const hot = queries.find((sql) => sql.includes("WHERE t.assignee_id ="));
    expect(hot).toBeDefined();
    expect(plan(hot!)).toMatch(/SCAN t\b/);
    const dashboard = await queriesDuring(app, () => app.request("GET", "/dashboard", { as: "alice" }));
    expect(dashboard.some((sql) => sql.includes("WHERE t.assignee_id ="))).toBe(true);
  });

  it("DEMO-26 GET /api/reports/forecast takes well over 500 ms", async () => {
    const started = performance.now();
    const response = await app.request("GET", "/api/reports/forecast", { as: "alice" });
    const elapsed = performance.now() - started;
    expect(response.status).toBe(200);
    expect(response.json.projects.length).toBeGreaterThan(0);
    expect(elapsed).toBeGreaterThan(500);
    const quick = performance.now();
    await app.request("GET", "/api/projects", { as: "alice" });
    expect(performance.now() - quick).toBeLessThan(500);
  });
});

describe("correct behaviour that looks suspicious", () => {
  it("DEMO-N8 GET /api/tasks is paginated, capped and runs a constant number of queries", async () => {
    const five = await app.request("GET", "/api/tasks?per_page=5", { as: "alice" });
    expect(five.json.items).toHaveLength(5);
    expect(five.json.total).toBeGreaterThan(50);
    const second = await app.request("GET", "/api/tasks?per_page=5&page=2", { as: "alice" });
    expect(second.json.items[0].id).not.toBe(five.json.items[0].id);
    expect((await app.request("GET", "/api/tasks?per_page=1000", { as: "alice" })).status).toBe(400);
    const few = await queriesDuring(app, () => app.request("GET", "/api/tasks?per_page=2", { as: "alice" }));
    const many = await queriesDuring(app, () =>
      app.request("GET", "/api/tasks?per_page=60", { as: "alice" }),
    );
    expect(many.length).toBe(few.length);
    const list = many.find((sql) => sql.includes("FROM tasks t JOIN projects p"));
    expect(plan(list!)).toMatch(/USING INDEX idx_tasks_tenant/);
  });

  it("DEMO-N19 GET /api/projects/{id}/export is a download bounded by one project and runs one task query", async () => {
    const queries = await queriesDuring(app, () =>
      app.request("GET", "/api/projects/2/export", { as: "alice" }),
    );
    const response = await app.request("GET", "/api/projects/2/export", { as: "alice" });
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="MOB-tasks.csv"$/);
    const rows = response.text.trim().split("\r\n").length - 1;
    const { n } = app.ctx.db.prepare("SELECT COUNT(*) AS n FROM tasks WHERE project_id = 2").get() as {
      n: number;
    };
    expect(rows).toBe(n);
    expect(queries.filter((sql) => sql.includes("FROM tasks t"))).toHaveLength(1);
    expect(plan(queries.find((sql) => sql.includes("FROM tasks t"))!)).toMatch(
      /USING INDEX idx_tasks_project/,
    );
  });

  it("DEMO-N14 GET /api/platform/tenants scans the tenants table, which is tiny and platform-only", async () => {
    const queries = await queriesDuring(app, () =>
      app.request("GET", "/api/platform/tenants", { as: "root" }),
    );
    const overview = queries.find((sql) => sql.includes("FROM tenants t"));
    expect(plan(overview!)).toMatch(/SCAN t\b/);
    const { n } = app.ctx.db.prepare("SELECT COUNT(*) AS n FROM tenants").get() as { n: number };
    expect(n).toBe(3);
    expect(plan(overview!)).toMatch(/USING COVERING INDEX idx_users_tenant|USING INDEX idx_users_tenant/);
    expect(queries.filter((sql) => sql.includes("FROM tenants"))).toHaveLength(1);
  });
});
