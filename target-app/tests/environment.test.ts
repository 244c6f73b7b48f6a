import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_ROOT, startTestApp, type TestApp } from "./helpers.ts";

const run = promisify(execFile);
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.stop();
});

describe("managed environment commands", () => {
  it("the reset command re-seeds the database in place, under a running server", async () => {
    const created = await app.request("POST", "/api/projects", {
      as: "alice",
      body: { key: "TEMP", name: "Temp" },
    });
    expect(created.status).toBe(200);
    const { stdout } = await run(process.execPath, ["--import", "tsx", "src/db/reset.ts"], {
      cwd: APP_ROOT,
      env: { ...process.env, DATA_DIR: app.dataDir },
    });
    expect(stdout).toMatch(/3 tenants, 9 users, 7 projects, 99 tasks/);
    const projects = await app.request("GET", "/api/projects?limit=100", { as: "alice" });
    expect(projects.json.items.map((project: { key: string }) => project.key)).not.toContain("TEMP");
    expect(projects.json.total).toBe(4);
    const again = await app.request("POST", "/api/projects", {
      as: "alice",
      body: { key: "AFTER", name: "After" },
    });
    expect(again.status).toBe(200);
    const row = app.ctx.db.prepare("SELECT COUNT(*) AS n FROM projects WHERE key = 'AFTER'").get() as {
      n: number;
    };
    expect(row.n).toBe(1);
  });

  it("the statement log records every statement a request runs", async () => {
    const before = app.sqlLines().length;
    await app.request("GET", "/api/projects/1", { as: "alice" });
    const lines = app.sqlLines().slice(before);
    expect(lines.some((line) => line.startsWith("SELECT * FROM projects WHERE id = 1"))).toBe(true);
    expect(lines.every((line) => !line.includes("\n"))).toBe(true);
  });

  it("tokens expire after the configured time", async () => {
    const shortLived = await startTestApp({ TOKEN_TTL_SECONDS: "1" });
    try {
      const token = await shortLived.login("alice");
      expect((await shortLived.request("GET", "/api/me", { token })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      expect((await shortLived.request("GET", "/api/me", { token })).status).toBe(401);
    } finally {
      await shortLived.stop();
    }
  });
});
