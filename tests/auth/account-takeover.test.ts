import { afterEach, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { authzMatrix } from "../../src/probes/auditor/authz-matrix.ts";
import { checkAuthentication } from "../../src/probes/auth/check-authentication.ts";
import { stateResetReason } from "../../src/probes/http/state-reset.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { AccountApp, AccountBuild } from "./account-app.ts";
import { SEEDED, startAccountApp } from "./account-app.ts";

const apps: AccountApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function runFor(build: AccountBuild, tool: string) {
  const app = await startAccountApp(build);
  apps.push(app);
  process.env.ACCOUNT_ALICE_PW = SEEDED.alice;
  process.env.ACCOUNT_BOB_PW = SEEDED.bob;
  const profile = profileFor({
    name: "account-fixture",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
    api: { openapi: "/openapi.json" },
    auth: {
      login: {
        kind: "json",
        endpoint: "POST /users/login",
        body: { username: "{username}", password: "{password}" },
        token_from: "body:auth_token",
      },
    },
    users: ["alice", "bob"].map((name) => ({
      name,
      role: "member",
      username: name,
      password: `secret_ref:ACCOUNT_${name.toUpperCase()}_PW`,
    })),
  });
  const map = systemMapFor({ target: "account-fixture", baseUrl: app.baseUrl, document: app.document });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), tool);
  if (typeof run === "string") throw new Error(run);
  return { app, run };
}

async function accountChecks(build: AccountBuild) {
  const { app, run } = await runFor(build, "check_authentication");
  const outcome = await checkAuthentication(run, {
    checks: ["password-takeover", "sign-up-mass-assignment"],
  });
  for (const candidate of outcome.candidates) EnvelopeDraftSchema.parse(candidate);
  return {
    app,
    found: outcome.candidates
      .map((candidate) => `${candidate.defect_class} ${candidate.location.value}`)
      .sort(),
  };
}

describe("accounts the run registers itself", () => {
  it("proves another account's password set and an admin flag taken at sign-up on the flawed build", async () => {
    const { app, found } = await accountChecks("flawed");
    expect(found).toEqual([
      "missing-authorization PUT /users/{username}/password",
      "validation-missing POST /users/signup",
    ]);
    // Only the run's own accounts were changed: every seeded password is what it was.
    for (const [name, password] of Object.entries(SEEDED)) expect(app.passwords.get(name)).toBe(password);
  });

  it("finds nothing when an account may change only its own password and sign-up keeps its fields", async () => {
    const { app, found } = await accountChecks("sound");
    expect(found).toEqual([]);
    for (const [name, password] of Object.entries(SEEDED)) expect(app.passwords.get(name)).toBe(password);
  });

  it("proves an account granting itself the admin flag through its own profile update", async () => {
    const { app, found } = await accountChecks("escalating");
    expect(found).toEqual(["validation-missing PATCH /me"]);
    for (const [name, password] of Object.entries(SEEDED)) expect(app.passwords.get(name)).toBe(password);
  });

  it("proves an account making itself an administrator through a role its document lets it write", async () => {
    // The sound build lists the same role in its document and ignores it: the value never reads back.
    const { found } = await accountChecks("promoting");
    expect(found).toEqual(["validation-missing PATCH /me"]);
  });
});

describe("object authorization by a title key", () => {
  it("reads another user's note by the title it was created under, though a public list names them all", async () => {
    const { run } = await runFor("flawed", "authz_matrix");
    const outcome = await authzMatrix(run, {});
    const found = outcome.candidates.map(
      (candidate) => `${candidate.defect_class} ${candidate.location.value}`,
    );
    expect(found).toContain("missing-authorization GET /notes/{note_title}");
  });

  it("does not flag notes only their owner can read", async () => {
    const { run } = await runFor("sound", "authz_matrix");
    const outcome = await authzMatrix(run, {});
    const found = outcome.candidates.map((candidate) => candidate.location.value);
    expect(found).not.toContain("GET /notes/{note_title}");
  });
});

describe("routes that reset the application's data", () => {
  it("are recognised whatever their spelling, and ordinary routes are not", () => {
    for (const path of [
      "/createdb",
      "/api/init-db",
      "/admin/reset_database",
      "/reseed",
      "/setup-data",
      "/start_over",
      "/admin/rollback",
      "/api/reset-all",
      "/demo/wipe_everything",
    ])
      expect(stateResetReason(`http://app.test${path}`)).toBeDefined();
    for (const path of [
      "/users",
      "/books/create",
      "/databases",
      "/seed-catalogue/items",
      "/reset-password",
      "/password/reset",
      "/start",
      "/all-items",
      "/rollback-plans",
    ])
      expect(stateResetReason(`http://app.test${path}`)).toBeUndefined();
  });
});
