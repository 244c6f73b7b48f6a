import { afterEach, describe, expect, it } from "vitest";
import { isSafeWrite, updatesCaller } from "../../src/probes/api/operation-index.ts";
import { mayProbe } from "../../src/probes/injection/probe-points.ts";
import { fuzzOperationTool } from "../../src/tools/servers/contract-server.ts";
import { probeInjectionTool, probeXssTool } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { FormSessionApp } from "./form-session-app.ts";
import { FORM_SEEDED, startFormSessionApp } from "./form-session-app.ts";

// A seeded account's update of itself (a profile form posting to its page, `PATCH /api/me`) overwrites an
// account the run did not create, and can change what later checks compare; probes never send one, even on
// a managed target where every other POST is allowed. An account the run registers itself sends them.

const operation = (method: string, path: string) => undocumented(method, path, ["crawl"]);

describe("updates of the signed-in account itself", () => {
  it("are told from creations under the account and from records addressed by id", () => {
    for (const [method, path] of [
      ["POST", "/profile.php"],
      ["PATCH", "/api/me"],
      ["POST", "/account/settings"],
      ["PUT", "/users/me"],
      ["POST", "/my-account"],
    ] as const) {
      expect(updatesCaller(operation(method, path)), `${method} ${path}`).toBe(true);
      expect(isSafeWrite(operation(method, path)), `${method} ${path}`).toBe(false);
    }
    expect(updatesCaller(operation("POST", "/api/me/notes"))).toBe(false);
    expect(updatesCaller(operation("PATCH", "/api/profiles/{id}"))).toBe(false);
    expect(updatesCaller(operation("GET", "/api/me"))).toBe(false);
    expect(isSafeWrite(operation("POST", "/api/me/notes"))).toBe(true);
    const managed = { writesAllowed: true, mode: "managed" } as Parameters<typeof mayProbe>[0];
    expect(mayProbe(managed, operation("POST", "/profile.php"))).toBe(false);
    expect(mayProbe(managed, operation("POST", "/profile.php"), { byOwnAccount: true })).toBe(true);
    expect(mayProbe(managed, operation("POST", "/new-ticket.php"))).toBe(true);
  });
});

const apps: FormSessionApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe("probes on a managed target with a profile form", () => {
  it("post the profile form as an account the run registered, never as the seeded account", async () => {
    const app = await startFormSessionApp("sound");
    apps.push(app);
    process.env.FORM_ALICE_PW = FORM_SEEDED.alice;
    const profile = profileFor({
      name: "self-update-fixture",
      source: {},
      environment: { mode: "managed", base_url: app.baseUrl },
      api: { openapi: "/openapi.json" },
      auth: { login: { kind: "form", endpoint: "POST /accounts/login/", page: "/accounts/login/" } },
      users: [{ name: "alice", role: "member", username: "alice", password: "secret_ref:FORM_ALICE_PW" }],
    });
    const map = systemMapFor({
      target: "self-update-fixture",
      baseUrl: app.baseUrl,
      document: app.document,
      extraOperations: app.operations,
      pages: app.pages,
    });
    const context = probeContext({ profile, map, agent: "AUDITOR" });
    for (const [tool, input] of [
      [probeXssTool, {}],
      [probeInjectionTool, {}],
      [fuzzOperationTool, {}],
      [probeXssTool, {}],
    ] as const) {
      const result = await callTool(tool, input, context);
      expect(result.ok, `${tool.name}: ${JSON.stringify(result)}`).toBe(true);
    }
    expect(app.seededSelfUpdates).toBe(0);
    expect(app.registeredSelfUpdates).toBeGreaterThan(0);
    // Every tool call of the run shares its one account.
    expect(app.passwords.size - Object.keys(FORM_SEEDED).length).toBe(1);
    expect(app.emailOf("alice")).toBe("alice@fixture.test");
  });
});
