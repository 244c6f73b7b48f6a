import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers.ts";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.stop();
});

interface IndexInfo {
  name: string;
  unique: number;
}

function uniqueColumns(table: string): string[][] {
  const db = app.ctx.db;
  const indexes = db.prepare(`PRAGMA index_list(${table})`).all() as IndexInfo[];
  return indexes
    .filter((index) => index.unique === 1)
    .map((index) =>
      (db.prepare(`PRAGMA index_info(${index.name})`).all() as { name: string }[]).map(
        (column) => column.name,
      ),
    );
}

function tableSql(table: string): string {
  return (
    app.ctx.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as {
      sql: string;
    }
  ).sql;
}

describe("seeded data defects", () => {
  it("DEMO-19 projects.key is looked up as unique but not constrained, so duplicates can be created", async () => {
    expect(uniqueColumns("projects").some((columns) => columns.includes("key"))).toBe(false);
    const first = await app.request("POST", "/api/projects", {
      as: "alice",
      body: { key: "DUP", name: "One" },
    });
    const second = await app.request("POST", "/api/projects", {
      as: "carol",
      body: { key: "dup", name: "Two" },
    });
    expect(first.status).toBeLessThan(300);
    expect(second.status).toBeLessThan(300);
    const count = app.ctx.db
      .prepare("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = 1 AND key = 'DUP'")
      .get() as {
      n: number;
    };
    expect(count.n).toBe(2);
    const byKey = await app.request("GET", "/api/projects/by-key/DUP", { as: "alice" });
    expect(byKey.status).toBe(200);
    expect([first.json.id, second.json.id]).toContain(byKey.json.id);
  });

  it("DEMO-20 comments.task_id has no foreign key, so deleting a task leaves orphaned comments", async () => {
    const db = app.ctx.db;
    const foreignKeys = db.prepare("PRAGMA foreign_key_list(comments)").all() as {
      from: string;
      table: string;
    }[];
    expect(foreignKeys.some((key) => key.from === "task_id")).toBe(false);
    expect(foreignKeys.some((key) => key.from === "author_id" && key.table === "users")).toBe(true);

    const task = await app.request("POST", "/api/projects/3/tasks", {
      as: "alice",
      body: { title: "Short-lived" },
    });
    await app.request("POST", `/api/tasks/${task.json.id}/comments`, {
      as: "alice",
      body: { body: "first" },
    });
    await app.request("POST", `/api/tasks/${task.json.id}/comments`, {
      as: "carol",
      body: { body: "second" },
    });
    expect((await app.request("DELETE", `/api/tasks/${task.json.id}`, { as: "alice" })).status).toBe(204);
    const orphans = db.prepare("SELECT COUNT(*) AS n FROM comments WHERE task_id = ?").get(task.json.id) as {
      n: number;
    };
    expect(orphans.n).toBe(2);
    const dangling = db
      .prepare(
        "SELECT COUNT(*) AS n FROM comments c LEFT JOIN tasks t ON t.id = c.task_id WHERE t.id IS NULL",
      )
      .get() as { n: number };
    expect(dangling.n).toBeGreaterThanOrEqual(2);
  });

  it("DEMO-21 projects.hours_remaining has no CHECK and goes negative through POST time-entries", async () => {
    expect(tableSql("projects")).not.toMatch(/CHECK\s*\(\s*hours_remaining/i);
    const before = app.ctx.db.prepare("SELECT hours_remaining FROM projects WHERE id = 4").get() as {
      hours_remaining: number;
    };
    const statuses: number[] = [];
    for (let i = 0; i < Math.ceil(before.hours_remaining / 24) + 1; i++) {
      const response = await app.request("POST", "/api/projects/4/time-entries", {
        as: "carol",
        body: { hours: 24 },
      });
      statuses.push(response.status);
    }
    expect(statuses.every((status) => status === 201)).toBe(true);
    const list = await app.request("GET", "/api/projects?limit=100", { as: "carol" });
    const doc = list.json.items.find((project: { key: string }) => project.key === "DOC");
    expect(doc.hours_remaining).toBeLessThan(0);
  });

  it("DEMO-22 concurrent task creation hands out the same task number twice", async () => {
    let duplicates: number[] = [];
    for (let round = 0; round < 5 && duplicates.length === 0; round++) {
      const created = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          app.request("POST", "/api/projects/2/tasks", {
            as: "alice",
            body: { title: `Parallel ${round}-${i}` },
          }),
        ),
      );
      expect(created.every((response) => response.status === 201)).toBe(true);
      const numbers = created.map((response) => response.json.number as number);
      duplicates = numbers.filter((number, index) => numbers.indexOf(number) !== index);
    }
    expect(duplicates.length).toBeGreaterThan(0);
    const rows = app.ctx.db
      .prepare("SELECT number, COUNT(*) AS n FROM tasks WHERE project_id = 2 GROUP BY number HAVING n > 1")
      .all();
    expect(rows.length).toBeGreaterThan(0);
  });
});

describe("seeded data defects without a CHECK", () => {
  it("DEMO-42 tasks.priority and tasks.estimate_hours accept values the application never means to store", async () => {
    const sql = tableSql("tasks");
    expect(sql).toMatch(/status TEXT NOT NULL DEFAULT 'todo' CHECK/);
    expect(sql).toMatch(/priority TEXT NOT NULL DEFAULT 'medium',/);
    expect(sql).toMatch(/estimate_hours REAL,/);
    const created = await app.request("POST", "/api/projects/3/tasks", {
      as: "carol",
      body: { title: "Stored as is", priority: "someday", estimate_hours: -2 },
    });
    expect(created.status).toBe(201);
    const row = app.ctx.db
      .prepare("SELECT priority, estimate_hours FROM tasks WHERE id = ?")
      .get(created.json.id);
    expect(row).toEqual({ priority: "someday", estimate_hours: -2 });
    expect(() =>
      app.ctx.db
        .prepare("UPDATE tasks SET priority = 'never', estimate_hours = -100 WHERE id = ?")
        .run(created.json.id),
    ).not.toThrow();
  });
});

describe("correct behaviour that looks suspicious", () => {
  it("DEMO-N4 users.email is unique and a duplicate is answered with 409", async () => {
    expect(uniqueColumns("users")).toContainEqual(["email"]);
    const response = await app.request("POST", "/api/admin/users", {
      as: "adam",
      body: { email: "Alice@acme.test", name: "Another Alice", password: "a long enough password" },
    });
    expect(response.status).toBe(409);
    expect(response.json.error).toBe("conflict");
    const fresh = await app.request("POST", "/api/admin/users", {
      as: "adam",
      body: { email: "frank@acme.test", name: "Frank", password: "a long enough password" },
    });
    expect(fresh.status).toBe(201);
  });
});
