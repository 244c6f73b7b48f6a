import { afterEach, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { Operation, SystemMap } from "../../src/map/system-map.ts";
import { checkAuthentication } from "../../src/probes/auth/check-authentication.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, undocumented, undocumentedMap } from "../fixtures/probe-harness.ts";
import type { CredentialApp } from "./credential-app.ts";
import { ACCOUNTS, startCredentialApp } from "./credential-app.ts";

const apps: CredentialApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function jsonOperation(path: string, properties: Record<string, unknown>): Operation {
  return {
    ...undocumented("POST", path),
    request_body: {
      content_type: "application/json",
      required: true,
      schema: { type: "object", properties, required: Object.keys(properties) },
    },
  };
}

function mapFor(baseUrl: string): SystemMap {
  return undocumentedMap("credential-fixture", baseUrl, [
    jsonOperation("/auth/login", {
      email: { type: "string", format: "email" },
      password: { type: "string" },
    }),
    jsonOperation("/auth/token", {
      email: { type: "string", format: "email" },
      password: { type: "string" },
    }),
    jsonOperation("/auth/password/forgot", { email: { type: "string", format: "email" } }),
  ]);
}

async function check(build: "flawed" | "sound", profileKind: "json" | "api_key" = "json") {
  const app = await startCredentialApp(build);
  apps.push(app);
  process.env.CRED_ALICE_PW = ACCOUNTS["alice@fixture.test"];
  process.env.CRED_BOB_PW = ACCOUNTS["bob@fixture.test"];
  process.env.CRED_API_KEY = "fixture-api-key";
  const profile = profileFor({
    name: "credential-fixture",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
    auth:
      profileKind === "json"
        ? {
            login: {
              kind: "json",
              endpoint: "POST /auth/login",
              body: { email: "{username}", password: "{password}" },
              token_from: "body:token",
            },
          }
        : { login: { kind: "api_key", apply_as: "header:X-API-Key" } },
    users: ["alice", "bob"].map((name) => ({
      name,
      role: "member",
      username: `${name}@fixture.test`,
      ...(profileKind === "json"
        ? { password: `secret_ref:CRED_${name.toUpperCase()}_PW` }
        : { token: "secret_ref:CRED_API_KEY" }),
    })),
  });
  const run = openProbeRun(
    probeContext({ profile, map: mapFor(app.baseUrl), agent: "AUDITOR" }),
    "check_authentication",
  );
  if (typeof run === "string") throw new Error(run);
  const outcome = await checkAuthentication(run, {
    checks: ["user-enumeration", "brute-force", "reset-token-exposure"],
  });
  for (const candidate of outcome.candidates) EnvelopeDraftSchema.parse(candidate);
  const found = outcome.candidates
    .map((candidate) => `${candidate.dedupe?.discriminator} ${candidate.location.value}`)
    .sort();
  return { app, found, candidates: outcome.candidates };
}

describe("check_authentication: the ways sign-in and reset give accounts away", () => {
  it("finds telling answers, unlimited guessing and a reset token handed back on the flawed build", async () => {
    const { app, found, candidates } = await check("flawed");
    expect(found).toEqual([
      "brute-force POST /auth/login",
      "reset-token POST /auth/password/forgot",
      "user-enumeration POST /auth/login",
      "user-enumeration POST /auth/password/forgot",
    ]);
    expect(candidates.every((candidate) => candidate.defect_class === "broken-authentication")).toBe(true);
    // Guessing went to an account nobody has; each real user got at most the two wrong passwords of the
    // enumeration check.
    for (const account of Object.keys(ACCOUNTS))
      expect(app.failures.get(account) ?? 0).toBeLessThanOrEqual(2);
  });

  it("finds nothing on the sound build: alike answers, a limit, no token in the answer", async () => {
    const { found } = await check("sound");
    expect(found).toEqual([]);
  });

  it("judges a sign-in by its refusal when no profile user has a password (an API-key profile)", async () => {
    const flawed = await check("flawed", "api_key");
    expect(flawed.found).toContain("brute-force POST /auth/login");
    // A blanket refusal says nothing about passwords: no burst is judged there.
    expect(flawed.found).not.toContain("brute-force POST /auth/token");
    for (const account of Object.keys(ACCOUNTS))
      expect(flawed.app.failures.get(account) ?? 0).toBeLessThanOrEqual(2);
    const sound = await check("sound", "api_key");
    expect(sound.found).not.toContain("brute-force POST /auth/login");
  });
});
