import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { candidateEnvelope } from "../../src/explore/bug-bash/candidate-test.ts";
import type { Candidate } from "../../src/explore/bug-bash/candidates.ts";
import { roleOfTest, roleSessionEnv } from "../../src/probes/browser/role-session-env.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { findTool } from "../../src/tools/tool-registry.ts";
import { type FixtureSite, MEMBER_TOKEN, startFixtureSite } from "../browser/fixture-site.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool, type FakeRunContext } from "../support/fake-run-context.ts";

// A signed-in persona's bug-bash candidate is confirmed with that persona's session: verify_candidate
// gives the generated repro test the role's session from the run's sign-in layer (QAAS_COOKIE for a
// cookie, QAAS_HEADERS for a bearer token). Without it the test stops in its set-up and a real defect
// was rejected as `environment`.

let site: FixtureSite;
const contexts: FakeRunContext[] = [];

beforeAll(async () => {
  site = await startFixtureSite();
  process.env.QAAS_TEST_BASH_MEMBER = MEMBER_TOKEN;
});
afterAll(async () => {
  for (const created of contexts) await closeRunServices(created);
  await site.close();
  delete process.env.QAAS_TEST_BASH_MEMBER;
});

function memberContext(applyAs: string): FakeRunContext {
  const profile = profileFor({
    name: "site",
    source: {},
    environment: { mode: "external", base_url: site.baseUrl },
    auth: { login: { kind: "api_key", apply_as: applyAs, scheme: "Bearer" } },
    users: [{ name: "mia", role: "member", token: "secret_ref:QAAS_TEST_BASH_MEMBER" }],
  });
  const map = systemMapFor({
    target: "site",
    baseUrl: site.baseUrl,
    document: { openapi: "3.0.0", paths: {} },
    pages: [{ path: "/members", status: 200, links: [], forms: [], roles: ["member"] }],
  });
  const created = probeContext({ profile, map, agent: "REPRODUCER" });
  // Artifacts where the run store reads them back (the stored test is read by its URI).
  const artifacts = path.join(created.home, "runs", created.runId, "artifacts");
  created.putArtifact = (name, content) => {
    const file = path.join(artifacts, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    return `artifact://${created.runId}/${name}`;
  };
  contexts.push(created);
  return created;
}

/** A member's candidate: the members' page does not show a text it never shows (a real, stable defect). */
function memberCandidate(): Candidate {
  return {
    id: "BB-1",
    charter: "open the members' page",
    persona: "member",
    key: "text-shown|/members|Your projects",
    status: "pending",
    finding: {
      kind: "issue",
      severity: 3,
      title: "The members' page does not list the member's projects",
      screen: "/members",
      expected: 'the page shows "Your projects"',
      observed: "it does not",
      repro: ["Open /members as a member"],
      evidence: [],
      step: 1,
      check: { kind: "text-shown", page: "/members", text: "Your projects" },
    },
  };
}

async function verifyAsMember(context: FakeRunContext) {
  const built = candidateEnvelope(memberCandidate(), site.baseUrl, (name, content) =>
    context.putArtifact(name, content),
  );
  if (!built) throw new Error("no candidate envelope");
  const emit = findTool("emit_envelope");
  const verify = findTool("verify_candidate");
  if (!emit || !verify) throw new Error("the bug-bash tools are not registered");
  const emitted = await callTool(emit, built.draft, context);
  if (!emitted.ok) throw new Error(emitted.error);
  const id = context.readEnvelopes()[0]?.id ?? "";
  return callTool(verify, { finding_id: id, times: 1 }, context);
}

describe("verify_candidate for a signed-in persona", () => {
  it("runs the repro test with the role's session cookie and confirms the defect", async () => {
    const answer = await verifyAsMember(memberContext("cookie:sid"));
    if (!answer.ok) throw new Error(answer.error);
    expect(answer.data).toMatchObject({
      status: "confirmed",
      failedAt: "the page does not show the expected text",
    });
  }, 120_000);

  it("runs it with the role's bearer header when the session is not a cookie", async () => {
    const answer = await verifyAsMember(memberContext("header:Authorization"));
    if (!answer.ok) throw new Error(answer.error);
    expect(answer.data).toMatchObject({ status: "confirmed" });
  }, 120_000);

  it("gives REPRODUCER's run of a signed-in finding's test the role's session too", async () => {
    const context = memberContext("cookie:sid");
    await verifyAsMember(context);
    const single = findTool("run_single");
    if (!single) throw new Error("run_single is not registered");
    const answer = await callTool(single, { finding_id: context.readEnvelopes()[0]?.id ?? "" }, context);
    if (!answer.ok) throw new Error(answer.error);
    // It reached its assertion as the member: the defect shows, not the missing session.
    expect(answer.data).toMatchObject({ passed: false, own_assertion: true });
    expect(String((answer.data as { failure?: string }).failure)).toMatch(/does not show the expected text/);
  }, 120_000);

  it("reads the test's role and turns a role's headers into the test's environment", async () => {
    const built = candidateEnvelope(memberCandidate(), site.baseUrl, () => "artifact://run/x");
    expect(built).toBeDefined();
    const roles = [
      { role: "member", headers: async () => ({ Cookie: "sid=abc", authorization: "Bearer t" }) },
      {
        role: "broken",
        headers: async (): Promise<Record<string, string>> => Promise.reject(new Error("no")),
      },
    ];
    expect(roleOfTest('needsCookie("member");')).toBe("member");
    expect(roleOfTest('const ROLE = "admin";\nfunction needsCookie(role) {}')).toBe("admin");
    expect(roleOfTest("function needsCookie(role) {}")).toBeUndefined();
    expect(await roleSessionEnv(roles, "member")).toEqual({
      QAAS_COOKIE: "sid=abc",
      QAAS_HEADERS: JSON.stringify({ authorization: "Bearer t" }),
    });
    expect(await roleSessionEnv(roles, "anonymous")).toEqual({});
    expect(await roleSessionEnv(roles, "broken")).toEqual({});
    expect(await roleSessionEnv(roles, "admin")).toEqual({});
  });
});
