import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp, type UserName } from "./helpers.ts";
import { documentedStatuses, openapi, operation, responseSchema, validate } from "./openapi.ts";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.stop();
});

describe("seeded API defects", () => {
  it("DEMO-01 GET /api/projects/{id} returns hours_remaining as a string though the document says number", async () => {
    const detail = await app.request("GET", "/api/projects/1", { as: "alice" });
    expect(detail.status).toBe(200);
    expect(openapi.components.schemas.Project.properties.hours_remaining.type).toBe("number");
    expect(typeof detail.json.hours_remaining).toBe("string");
    expect(validate(responseSchema("GET", "/api/projects/{id}", 200), detail.json)).toContain(
      `$.hours_remaining: expected number, got ${JSON.stringify(detail.json.hours_remaining)}`,
    );
    const list = await app.request("GET", "/api/projects", { as: "alice" });
    expect(typeof list.json.items[0].hours_remaining).toBe("number");
  });

  it("DEMO-02 GET /api/tasks/{id}/comments answers 500 for an unknown or non-numeric task id", async () => {
    expect(documentedStatuses("GET", "/api/tasks/{id}/comments")).toContain("404");
    for (const id of ["999999", "abc", "0"]) {
      const response = await app.request("GET", `/api/tasks/${id}/comments`, { as: "alice" });
      expect(response.status, id).toBe(500);
    }
    const other = await app.request("GET", "/api/tasks/1/comments", { as: "bob" });
    expect(other.status).toBe(404);
  });

  it("DEMO-03 POST /api/tasks/{id}/comments answers 500 when body is missing, null or not a string", async () => {
    for (const body of [{}, { body: null }, { body: 42 }, "null"]) {
      const response = await app.request("POST", "/api/tasks/1/comments", { as: "alice", body });
      expect(response.status, JSON.stringify(body)).toBe(500);
    }
    const empty = await app.request("POST", "/api/tasks/1/comments", { as: "alice", body: { body: "  " } });
    expect(empty.status).toBe(400);
  });

  it("DEMO-04 POST /api/projects/{id}/tasks accepts a priority outside the enum and a negative estimate", async () => {
    const schema = openapi.components.schemas.TaskCreate.properties;
    expect(schema.priority.enum).toEqual(["low", "medium", "high"]);
    expect(schema.estimate_hours.minimum).toBe(0);
    const created = await app.request("POST", "/api/projects/1/tasks", {
      as: "alice",
      body: { title: "Invalid on purpose", priority: "urgent!!", estimate_hours: -40 },
    });
    expect(created.status).toBe(201);
    expect(created.json.priority).toBe("urgent!!");
    expect(created.json.estimate_hours).toBe(-40);
    const update = await app.request("PATCH", `/api/tasks/${created.json.id}`, {
      as: "alice",
      body: { priority: "urgent!!" },
    });
    expect(update.status).toBe(400);
  });

  it("DEMO-05 POST /api/projects answers 200 where the document promises 201", async () => {
    expect(documentedStatuses("POST", "/api/projects")).not.toContain("200");
    expect(documentedStatuses("POST", "/api/projects")).toContain("201");
    const response = await app.request("POST", "/api/projects", {
      as: "alice",
      body: { key: "STAT", name: "Status check" },
    });
    expect(response.status).toBe(200);
    expect(response.json.key).toBe("STAT");
  });

  it("DEMO-06 GET /api/comments/{id} answers 200 with null for a comment that does not exist", async () => {
    expect(documentedStatuses("GET", "/api/comments/{id}")).toContain("404");
    const response = await app.request("GET", "/api/comments/999999", { as: "alice" });
    expect(response.status).toBe(200);
    expect(response.text).toBe("null");
    const bad = await app.request("GET", "/api/comments/abc", { as: "alice" });
    expect(bad.status).toBe(404);
  });

  it("DEMO-43 POST /api/projects/{id}/time-entries answers 500 for a malformed spent_on date", async () => {
    const broken = await app.request("POST", "/api/projects/2/time-entries", {
      as: "alice",
      body: { hours: 1, note: "date on purpose", spent_on: "not-a-date" },
    });
    expect(broken.status).toBe(500);
    const fine = await app.request("POST", "/api/projects/2/time-entries", {
      as: "alice",
      body: { hours: 1, note: "a real date", spent_on: "2026-01-15" },
    });
    expect(fine.status).toBe(201);
  });

  it("DEMO-44 PATCH /api/tasks/{id} answers 500 for a malformed due_date", async () => {
    const broken = await app.request("PATCH", "/api/tasks/1", {
      as: "alice",
      body: { due_date: "not-a-date" },
    });
    expect(broken.status).toBe(500);
    const fine = await app.request("PATCH", "/api/tasks/1", {
      as: "alice",
      body: { due_date: "2026-02-01" },
    });
    expect(fine.status).toBe(200);
  });

  it("DEMO-07 POST /api/tasks/{id}/duplicate and GET /debug/config are served but not documented", async () => {
    expect(operation("POST", "/api/tasks/{id}/duplicate")).toBeUndefined();
    expect(openapi.paths["/debug/config"]).toBeUndefined();
    const duplicate = await app.request("POST", "/api/tasks/2/duplicate", { as: "alice" });
    expect(duplicate.status).toBe(201);
    expect(duplicate.json.title).toMatch(/\(copy\)$/);
    const debug = await app.request("GET", "/debug/config");
    expect(debug.status).toBe(200);
  });
});

describe("correct behaviour that looks suspicious", () => {
  it("DEMO-N16 DELETE /api/projects/{id} answers 204 with an empty body, as documented", async () => {
    const created = await app.request("POST", "/api/projects", {
      as: "adam",
      body: { key: "GONE", name: "Gone" },
    });
    const response = await app.request("DELETE", `/api/projects/${created.json.id}`, { as: "adam" });
    expect(documentedStatuses("DELETE", "/api/projects/{id}")).toContain("204");
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    const member = await app.request("DELETE", "/api/projects/3", { as: "alice" });
    expect(member.status).toBe(403);
    const other = await app.request("DELETE", "/api/projects/1", { as: "gina" });
    expect(other.status).toBe(404);
  });
});

describe("routes outside the API document", () => {
  it("DEMO-N18 pages, form posts and static files are not API operations and answer HTML, redirects or files", async () => {
    const pages = [
      "/",
      "/login",
      "/dashboard",
      "/projects",
      "/projects/new",
      "/projects/1",
      "/projects/1/edit",
    ];
    pages.push(
      "/projects/1/tasks/new",
      "/tasks/1",
      "/tasks/1/edit",
      "/tasks/1/history",
      "/search",
      "/settings",
    );
    pages.push("/admin", "/time", "/help");
    for (const page of pages) {
      const response = await app.request("GET", page, { as: page === "/login" ? undefined : "adam" });
      expect([200, 303], page).toContain(response.status);
      if (response.status === 200) expect(response.headers.get("content-type"), page).toMatch(/^text\/html/);
    }
    expect((await app.request("GET", "/platform", { as: "root" })).headers.get("content-type")).toMatch(
      /^text\/html/,
    );
    const css = await app.request("GET", "/static/app.css");
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect((await app.request("GET", "/favicon.ico")).status).toBe(301);
    const logout = await app.request("POST", "/logout", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(logout.status).toBe(303);
    for (const path of Object.keys(openapi.paths)) {
      const documentedOutsideApi = ["/health", "/openapi.json", "/openapi.yaml", "/__test/reset"].includes(
        path,
      );
      expect(path.startsWith("/api/") || documentedOutsideApi, path).toBe(true);
    }
  });
});

describe("the rest of the API matches its document", () => {
  const calls: [string, string, string, UserName | null, unknown?][] = [
    ["GET", "/health", "/health", null],
    ["POST", "/api/login", "/api/login", null, { email: "carol@acme.test", password: "wrong password" }],
    ["POST", "/api/login", "/api/login", null, { email: "carol@acme.test", password: "Copper-Meadow-17" }],
    ["POST", "/api/login", "/api/login", null, { email: "carol@acme.test" }],
    ["GET", "/api/me", "/api/me", "alice"],
    ["GET", "/api/me/tasks", "/api/me/tasks", "alice"],
    ["GET", "/api/users/3", "/api/users/{id}", "alice"],
    ["GET", "/api/users/7", "/api/users/{id}", "alice"],
    ["GET", "/api/projects?limit=3&sort=updated_at&order=desc", "/api/projects", "alice"],
    ["GET", "/api/projects?limit=0", "/api/projects", "alice"],
    ["GET", "/api/projects/by-key/mob", "/api/projects/by-key/{key}", "alice"],
    ["GET", "/api/projects/5", "/api/projects/{id}", "alice"],
    ["PATCH", "/api/projects/2", "/api/projects/{id}", "alice", { description: "Offline first." }],
    ["GET", "/api/projects/2/tasks?limit=5&status=todo", "/api/projects/{id}/tasks", "alice"],
    [
      "POST",
      "/api/projects/2/tasks",
      "/api/projects/{id}/tasks",
      "alice",
      { title: "Valid task", priority: "low" },
    ],
    ["POST", "/api/projects/2/tasks", "/api/projects/{id}/tasks", "alice", { title: "" }],
    ["GET", "/api/projects/2/time-entries?limit=3", "/api/projects/{id}/time-entries", "alice"],
    ["GET", "/api/projects/2/time-entries?limit=500", "/api/projects/{id}/time-entries", "alice"],
    ["PATCH", "/api/tasks/21", "/api/tasks/{id}", "alice", { due_date: "2026-02-30" }],
    [
      "POST",
      "/api/projects/2/time-entries",
      "/api/projects/{id}/time-entries",
      "alice",
      { hours: 1.5, note: "Review" },
    ],
    ["POST", "/api/projects/2/time-entries", "/api/projects/{id}/time-entries", "alice", { hours: -1 }],
    ["GET", "/api/projects/2/export?format=json", "/api/projects/{id}/export", "alice"],
    ["GET", "/api/tasks?page=2&per_page=10", "/api/tasks", "alice"],
    ["GET", "/api/tasks/20", "/api/tasks/{id}", "alice"],
    ["PATCH", "/api/tasks/20", "/api/tasks/{id}", "alice", { status: "in_progress", estimate_hours: 3 }],
    ["PATCH", "/api/tasks/20", "/api/tasks/{id}", "alice", { assignee_id: 7 }],
    ["GET", "/api/tasks/20/comments", "/api/tasks/{id}/comments", "alice"],
    ["POST", "/api/tasks/20/comments", "/api/tasks/{id}/comments", "alice", { body: "Looks good." }],
    ["GET", "/api/comments/1", "/api/comments/{id}", "alice"],
    ["GET", "/api/search?q=the", "/api/search", "alice"],
    ["GET", "/api/search?q=", "/api/search", "alice"],
    ["GET", "/api/admin/users", "/api/admin/users", "adam"],
    [
      "POST",
      "/api/admin/users",
      "/api/admin/users",
      "adam",
      { email: "new@acme.test", name: "New", password: "x" },
    ],
    ["PATCH", "/api/admin/users/4", "/api/admin/users/{id}", "adam", { role: "admin" }],
    ["GET", "/api/admin/settings", "/api/admin/settings", "adam"],
    ["PUT", "/api/admin/settings", "/api/admin/settings", "adam", { week_starts_on: "sunday" }],
    ["PUT", "/api/admin/settings", "/api/admin/settings", "adam", { webhook_url: "ftp://example.com" }],
    ["GET", "/api/platform/tenants", "/api/platform/tenants", "root"],
    ["GET", "/api/reports/forecast?project_id=4", "/api/reports/forecast", "alice"],
    ["GET", "/api/reports/forecast?project_id=5", "/api/reports/forecast", "alice"],
    ["DELETE", "/api/comments/2", "/api/comments/{id}", "alice"],
    ["DELETE", "/api/tasks/25", "/api/tasks/{id}", "alice"],
    ["GET", "/openapi.yaml", "/openapi.yaml", null],
  ];

  it("answers with a documented status and a body that fits the documented schema", async () => {
    for (const [method, url, template, user, body] of calls) {
      const response = await app.request(method, url, { as: user ?? undefined, body });
      const label = `${method} ${url} -> ${response.status}`;
      expect(documentedStatuses(method, template), label).toContain(String(response.status));
      const schema = responseSchema(method, template, response.status);
      if (schema) expect(validate(schema, response.json), label).toEqual([]);
    }
  });

  it("answers 401 without a token on every operation that is not public", async () => {
    for (const [templatePath, methods] of Object.entries(
      openapi.paths as Record<string, Record<string, unknown>>,
    )) {
      for (const [method, op] of Object.entries(methods)) {
        const security = (op as { security?: unknown[] }).security;
        if (security && security.length === 0) continue;
        if (templatePath === "/api/projects/{id}/export") continue;
        const url = templatePath.replace("{id}", "1").replace("{key}", "WEB");
        const response = await app.request(method.toUpperCase(), url, {
          body: method === "get" || method === "delete" ? undefined : {},
        });
        expect(response.status, `${method} ${url}`).toBe(401);
      }
    }
  });
});
