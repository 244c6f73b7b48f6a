import { afterEach, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { checkAuthentication } from "../../src/probes/auth/check-authentication.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FormSessionApp, FormSessionBuild } from "./form-session-app.ts";
import { FORM_SEEDED, startFormSessionApp } from "./form-session-app.ts";

// The run's own accounts on an application whose sign-up and sign-in are CSRF-protected forms and whose
// API wants the CSRF cookie echoed: they register through the form, sign in as the profile's users do,
// and send their API requests with the session's cookies and CSRF header.

const apps: FormSessionApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function accountChecks(build: FormSessionBuild) {
  const app = await startFormSessionApp(build);
  apps.push(app);
  process.env.FORM_ALICE_PW = FORM_SEEDED.alice;
  const profile = profileFor({
    name: "form-session-fixture",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
    api: { openapi: "/openapi.json" },
    auth: { login: { kind: "form", endpoint: "POST /accounts/login/", page: "/accounts/login/" } },
    users: [{ name: "alice", role: "member", username: "alice", password: "secret_ref:FORM_ALICE_PW" }],
  });
  const map = systemMapFor({
    target: "form-session-fixture",
    baseUrl: app.baseUrl,
    document: app.document,
    extraOperations: app.operations,
    pages: app.pages,
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_authentication");
  if (typeof run === "string") throw new Error(run);
  const outcome = await checkAuthentication(run, {
    checks: ["password-takeover", "sign-up-mass-assignment"],
  });
  for (const candidate of outcome.candidates) EnvelopeDraftSchema.parse(candidate);
  return { app, run, candidates: outcome.candidates };
}

describe("the run's own accounts behind CSRF-protected forms", () => {
  it("register and sign in through the forms and act with the session's CSRF header: all three flaws found", async () => {
    const { app, candidates } = await accountChecks("flawed");
    expect(
      candidates.map((candidate) => `${candidate.defect_class} ${candidate.location.value}`).sort(),
    ).toEqual([
      "missing-authorization PUT /api/users/{username}/password",
      "validation-missing PATCH /api/me",
      "validation-missing POST /accounts/signup/",
    ]);
    expect(app.csrfRefusals).toBe(0);
    expect(app.passwords.get("alice")).toBe(FORM_SEEDED.alice);
    const takeover = candidates.find((candidate) => candidate.defect_class === "missing-authorization")!;
    const refused = takeover.evidence.find((item) =>
      item.description.startsWith("victim's own password refused"),
    );
    // The refusal shown is the sign-in form's post, which landed back on the form.
    expect(refused?.description).toMatch(/POST \S+\/accounts\/login\/ as \S+ → 200/);
  });

  it("report nothing on the sound build, and never touch the seeded account", async () => {
    const { app, run, candidates } = await accountChecks("sound");
    expect(candidates).toEqual([]);
    expect(app.csrfRefusals).toBe(0);
    expect(app.passwords.get("alice")).toBe(FORM_SEEDED.alice);
    // The run's accounts are sessions of their own, never offered to other checks as a profile user's peer.
    expect(run.sessions.throwawayUsers()).toEqual([]);
    expect(run.sessions.summaries().filter((summary) => summary.throwaway).length).toBeGreaterThan(0);
  });

  it("submit the profile form in the account's own session, and find the form that copies a privilege field", async () => {
    const { app, candidates } = await accountChecks("form-escalating");
    expect(candidates.map((candidate) => `${candidate.defect_class} ${candidate.location.value}`)).toEqual([
      "validation-missing POST /accounts/profile/",
    ]);
    expect(app.csrfRefusals).toBe(0);
  });
});
