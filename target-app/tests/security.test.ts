import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readSource, startTestApp, type TestApp } from "./helpers.ts";
import { openapi, operation } from "./openapi.ts";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.stop();
});

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
}

describe("seeded security defects", () => {
  it("DEMO-08 GET /api/tasks/{id} shows another tenant's task to any signed-in user", async () => {
    const owner = await app.request("GET", "/api/tasks/1", { as: "alice" });
    const outsider = await app.request("GET", "/api/tasks/1", { as: "bob" });
    expect(owner.status).toBe(200);
    expect(outsider.status).toBe(200);
    expect(outsider.json).toEqual(owner.json);
    const update = await app.request("PATCH", "/api/tasks/1", { as: "bob", body: { title: "x" } });
    expect(update.status).toBe(404);
  });

  it("DEMO-09 PATCH /api/projects/{id} lets a user of another tenant change a project", async () => {
    const read = await app.request("GET", "/api/projects/2", { as: "bob" });
    expect(read.status).toBe(404);
    const write = await app.request("PATCH", "/api/projects/2", {
      as: "bob",
      body: { name: "Renamed by Globex" },
    });
    expect(write.status).toBe(200);
    const seenByOwner = await app.request("GET", "/api/projects/2", { as: "alice" });
    expect(seenByOwner.json.name).toBe("Renamed by Globex");
  });

  it("DEMO-10 GET /api/projects/{id}/export returns every task of a project without any token", async () => {
    const csv = await app.request("GET", "/api/projects/1/export");
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/text\/csv/);
    expect(csv.text.split("\r\n")[0]).toBe(
      "key,title,status,priority,assignee,estimate_hours,due_date,created_at",
    );
    expect(csv.text).toContain("WEB-1,");
    const json = await app.request("GET", "/api/projects/5/export?format=json", { token: "garbage" });
    expect(json.status).toBe(200);
    expect(json.json.project.key).toBe("FLT");
    const signedInOutsider = await app.request("GET", "/api/projects/1/export", { as: "bob" });
    expect(signedInOutsider.status).toBe(404);
    expect(operation("GET", "/api/projects/{id}/export").responses["401"]).toBeDefined();
  });

  it("DEMO-11 GET /api/search is injectable through the project parameter (error-based and boolean)", async () => {
    const search = (project: string) =>
      app.request("GET", `/api/search?q=e&limit=50&project=${encodeURIComponent(project)}`, { as: "alice" });
    const error = await search("WEB'");
    expect(error.status).toBe(400);
    expect(error.json.details.code).toBe("SQLITE_ERROR");
    expect(error.json.message).toMatch(/unrecognized token/);

    const baseline = await search("WEB");
    const truthy = await search("WEB' AND '1'='1");
    const falsy = await search("WEB' AND '1'='2");
    expect(baseline.json.items.length).toBeGreaterThan(0);
    expect(truthy.json.items).toEqual(baseline.json.items);
    expect(falsy.json.items).toEqual([]);

    const leak = await search("NONE' OR '1'='1");
    const projectNames = new Set(leak.json.items.map((item: { project_name: string }) => item.project_name));
    expect(projectNames.has("Fleet tracking") || projectNames.has("Warehouse scanners")).toBe(true);
  });

  it("DEMO-12 /help reflects the topic parameter into the page without escaping", async () => {
    const payload = `<script>alert("xss")</script>`;
    const page = await app.request("GET", `/help?topic=${encodeURIComponent(payload)}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(page.text).toContain(payload);
    const attribute = await app.request(
      "GET",
      `/help?topic=${encodeURIComponent(`<img src=x onerror=alert(1)>`)}`,
    );
    expect(attribute.text).toContain("<img src=x onerror=alert(1)>");
  });

  it("DEMO-13 GET /api/users/{id} returns the colleague's password hash", async () => {
    const response = await app.request("GET", "/api/users/3", { as: "alice" });
    expect(response.status).toBe(200);
    expect(response.json.password_hash).toMatch(/^scrypt\$16384\$/);
    expect(openapi.components.schemas.User.properties.password_hash).toBeUndefined();
  });

  it("DEMO-14 GET /api/admin/users is answered for ordinary members too", async () => {
    const admin = await app.request("GET", "/api/admin/users", { as: "adam" });
    const member = await app.request("GET", "/api/admin/users", { as: "alice" });
    expect(admin.status).toBe(200);
    expect(member.status).toBe(200);
    expect(member.json).toEqual(admin.json);
    expect(operation("GET", "/api/admin/users").responses["403"]).toBeDefined();
    const create = await app.request("POST", "/api/admin/users", {
      as: "alice",
      body: { email: "sneaky@acme.test", name: "Sneaky", password: "long enough password" },
    });
    expect(create.status).toBe(403);
  });

  it("DEMO-15 GET /debug/config publishes the token signing secret and the environment to anyone", async () => {
    const response = await app.request("GET", "/debug/config");
    expect(response.status).toBe(200);
    expect(response.json.config.tokenSecret).toBe(app.config.tokenSecret);
    expect(response.json.env).toBeTypeOf("object");
    // The secret is enough to mint a token for anyone, e.g. the workspace admin.
    const head = b64({ alg: "HS256", typ: "JWT" });
    const body = b64({ sub: 1, tid: 1, role: "admin", iat: 0, exp: 4_000_000_000, jti: "forged" });
    const signature = createHmac("sha256", response.json.config.tokenSecret)
      .update(`${head}.${body}`)
      .digest("base64url");
    const me = await app.request("GET", "/api/me", { token: `${head}.${body}.${signature}` });
    expect(me.status).toBe(200);
    expect(me.json.user.email).toBe("adam@acme.test");
  });

  it("DEMO-16 API responses reflect any Origin and allow credentials", async () => {
    const evil = "https://evil.example";
    const simple = await app.request("GET", "/api/me", { as: "alice", headers: { origin: evil } });
    expect(simple.headers.get("access-control-allow-origin")).toBe(evil);
    expect(simple.headers.get("access-control-allow-credentials")).toBe("true");
    const preflight = await app.request("OPTIONS", "/api/tasks", {
      headers: { origin: evil, "access-control-request-method": "DELETE" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(evil);
  });

  it("DEMO-17 the app pins ws@8.16.0, affected by CVE-2024-37890 (fixed in 8.17.1)", () => {
    const manifest = JSON.parse(readSource("package.json"));
    const lock = JSON.parse(readSource("package-lock.json"));
    expect(manifest.dependencies.ws).toBe("8.16.0");
    expect(lock.lockfileVersion).toBe(3);
    expect(lock.packages["node_modules/ws"].version).toBe("8.16.0");
    const [major, minor, patch] = String(lock.packages["node_modules/ws"].version).split(".").map(Number);
    expect(major === 8 && (minor! < 17 || (minor === 17 && patch! < 1))).toBe(true);
  });

  it("DEMO-18 an unsigned token with alg none is accepted", async () => {
    const real = await app.login("alice");
    const claims = claimsOf(real);
    const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
    const me = await app.request("GET", "/api/me", { token: unsigned });
    expect(me.status).toBe(200);
    expect(me.json.user.email).toBe("alice@acme.test");
    const elevated = `${b64({ alg: "none", typ: "JWT" })}.${b64({ ...claims, sub: 1, role: "admin" })}.`;
    const asAdmin = await app.request("GET", "/api/admin/settings", { token: elevated });
    expect(asAdmin.status).toBe(200);
    const tampered = `${real.split(".")[0]}.${b64({ ...claims, sub: 1 })}.${real.split(".")[2]}`;
    expect((await app.request("GET", "/api/me", { token: tampered })).status).toBe(401);
  });
});

describe("correct behaviour that looks suspicious", () => {
  it("DEMO-N20 tasks are shared inside a workspace and closed to other workspaces", async () => {
    const created = await app.request("POST", "/api/projects/3/tasks", {
      as: "alice",
      body: { title: "Alice's task" },
    });
    const colleague = await app.request("PATCH", `/api/tasks/${created.json.id}`, {
      as: "carol",
      body: { status: "in_progress" },
    });
    expect(colleague.status).toBe(200);
    expect(
      (await app.request("PATCH", `/api/tasks/${created.json.id}`, { as: "bob", body: {} })).status,
    ).toBe(404);
    expect((await app.request("DELETE", `/api/tasks/${created.json.id}`, { as: "bob" })).status).toBe(404);
    expect((await app.request("DELETE", `/api/tasks/${created.json.id}`, { as: "carol" })).status).toBe(204);
  });

  it("DEMO-N1 GET /health is public on purpose and documented with security: []", async () => {
    expect(operation("GET", "/health").security).toEqual([]);
    const response = await app.request("GET", "/health");
    expect(response.status).toBe(200);
    expect(Object.keys(response.json).sort()).toEqual(["status", "uptime_seconds", "version"]);
  });

  it("DEMO-N2 GET /api/projects builds ORDER BY from an allowlist only", async () => {
    const source = readSource("src/services/projects.ts");
    expect(source).toMatch(/SORT_COLUMNS\[query\.sort\] \?\? "p\.name"/);
    for (const sort of ["name;DROP TABLE projects", "(select 1)", "name'", "p.name"]) {
      const response = await app.request("GET", `/api/projects?sort=${encodeURIComponent(sort)}`, {
        as: "alice",
      });
      expect(response.status, sort).toBe(400);
    }
    const order = await app.request("GET", `/api/projects?order=${encodeURIComponent("desc, (select 1)")}`, {
      as: "alice",
    });
    expect(order.status).toBe(400);
    const sorted = await app.request("GET", "/api/projects?sort=key&order=desc", { as: "alice" });
    expect(sorted.json.items.map((project: { key: string }) => project.key)).toEqual([
      "WEB",
      "OPS",
      "MOB",
      "DOC",
    ]);
  });

  it("DEMO-N3 GET /api/projects/{id} answers 404 for another tenant's project", async () => {
    const own = await app.request("GET", "/api/projects/5", { as: "bob" });
    const other = await app.request("GET", "/api/projects/5", { as: "alice" });
    expect(own.status).toBe(200);
    expect(other.status).toBe(404);
    expect(other.json.error).toBe("not_found");
  });

  it("DEMO-N5 POST /api/login answers 429 after repeated failures", async () => {
    const attempt = (password: string) =>
      app.request("POST", "/api/login", { body: { email: "carol@acme.test", password } });
    for (let i = 0; i < app.config.loginMaxFailures; i++)
      expect((await attempt(`wrong-${i}`)).status).toBe(401);
    const blocked = await attempt("Copper-Meadow-17");
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    const otherUser = await app.request("POST", "/api/login", {
      body: { email: "adam@acme.test", password: "Granite-Harbor-88" },
    });
    expect(otherUser.status).toBe(200);
  });

  it("DEMO-N6 GET /api/admin/settings is refused to ordinary members", async () => {
    expect((await app.request("GET", "/api/admin/settings", { as: "alice" })).status).toBe(403);
    expect((await app.request("PUT", "/api/admin/settings", { as: "alice", body: {} })).status).toBe(403);
    expect((await app.request("GET", "/api/admin/settings", { as: "adam" })).status).toBe(200);
  });

  it("DEMO-N10 the /search page escapes the query it shows", async () => {
    const payload = `<script>alert("xss")</script>`;
    const page = await app.request("GET", `/search?q=${encodeURIComponent(payload)}`, { as: "alice" });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(payload);
    expect(page.text).toContain("&lt;script&gt;alert(&quot;xss&quot;)&lt;/script&gt;");
  });

  it("DEMO-N11 POST /__test/reset is public but only exists in test mode", async () => {
    expect(operation("POST", "/__test/reset").security).toEqual([]);
    await app.request("PATCH", "/api/tasks/5", { as: "alice", body: { title: "Changed before reset" } });
    const reset = await app.request("POST", "/__test/reset");
    expect(reset.status).toBe(200);
    app.tokens.alice = undefined;
    expect((await app.request("GET", "/api/tasks/5", { as: "alice" })).json.title).not.toBe(
      "Changed before reset",
    );

    const production = await startTestApp({ APP_TEST_RESET: "0" });
    try {
      expect((await production.request("POST", "/__test/reset")).status).toBe(404);
    } finally {
      await production.stop();
    }
  });

  it("DEMO-N12 GET /openapi.json is public on purpose", async () => {
    const response = await app.request("GET", "/openapi.json");
    expect(response.status).toBe(200);
    expect(response.json.openapi).toBe("3.0.3");
    expect(response.json).toEqual(parse(readSource("openapi.yaml")));
    expect(operation("GET", "/openapi.json").security).toEqual([]);
  });

  it("DEMO-N13 GET /api/platform/tenants is refused to workspace admins", async () => {
    expect((await app.request("GET", "/api/platform/tenants", { as: "adam" })).status).toBe(403);
    expect((await app.request("GET", "/api/platform/tenants", { as: "gina" })).status).toBe(403);
    const root = await app.request("GET", "/api/platform/tenants", { as: "root" });
    expect(root.status).toBe(200);
    expect(root.json.items).toHaveLength(3);
  });

  it("DEMO-N15 /login only follows same-site next paths after sign-in", async () => {
    const signIn = (next: string) =>
      app.request("POST", "/login", {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          email: "alice@acme.test",
          password: "Orchid-Lantern-42",
          next,
        }).toString(),
      });
    for (const next of [
      "https://evil.example/",
      "//evil.example/x",
      "/\\evil.example",
      "javascript:alert(1)",
    ]) {
      const response = await signIn(next);
      expect(response.status, next).toBe(303);
      expect(response.headers.get("location"), next).toBe("/dashboard");
    }
    const local = await signIn("/projects/2");
    expect(local.headers.get("location")).toBe("/projects/2");
    expect(local.headers.get("set-cookie")).toMatch(/tl_session=.*HttpOnly; SameSite=Lax/);
  });
});
