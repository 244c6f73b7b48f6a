import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browsePages } from "../../src/probes/browser/browse-pages.ts";
import { roleOfTest } from "../../src/probes/browser/role-session-env.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import type { FixtureSite } from "./fixture-site.ts";
import { MEMBER_TOKEN, startFixtureSite } from "./fixture-site.ts";

// A page only a signed-in role reaches is browsed with that role's session cookie, and the generated test
// needs the same cookie (QAAS_COOKIE) to see the defect: without it the page refuses and the test passes.

let site: FixtureSite;
let context: FakeRunContext;
const contexts: FakeRunContext[] = [];

function memberContext(applyAs: string): FakeRunContext {
  const profile = profileFor({
    name: "site",
    source: {},
    environment: { mode: "external", base_url: site.baseUrl },
    auth: { login: { kind: "api_key", apply_as: applyAs, scheme: "Bearer" } },
    users: [{ name: "mia", role: "member", token: "secret_ref:QAAS_TEST_BROWSER_MEMBER" }],
  });
  const map = systemMapFor({
    target: "site",
    baseUrl: site.baseUrl,
    document: { openapi: "3.0.0", paths: {} },
    pages: [
      { path: "/members", status: 200, links: [], forms: [], roles: ["member"] },
      { path: "/about", status: 200, links: [], forms: [], roles: ["anonymous", "member"] },
    ],
  });
  const created = probeContext({ profile, map, agent: "BROWSER" });
  contexts.push(created);
  return created;
}

beforeAll(async () => {
  site = await startFixtureSite();
  process.env.QAAS_TEST_BROWSER_MEMBER = MEMBER_TOKEN;
  context = memberContext("cookie:sid");
});
afterAll(async () => {
  for (const created of contexts) await closeRunServices(created);
  await site.close();
  delete process.env.QAAS_TEST_BROWSER_MEMBER;
});

function run(file: string, cookie?: string): Promise<number> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, QAAS_BASE_URL: site.baseUrl };
    if (cookie) env.QAAS_COOKIE = cookie;
    else delete env.QAAS_COOKIE;
    execFile(process.execPath, ["--test", file], { env, timeout: 60_000 }, (error) =>
      resolve(error ? (typeof error.code === "number" ? error.code : -1) : 0),
    );
  });
}

describe("browse_pages as a signed-in role", () => {
  it("browses the member's page with the member's cookie and finds what only members see", async () => {
    const answer = await browsePages(context, { checks: ["console"] });
    if (typeof answer === "string") throw new Error(answer);
    expect(answer.stats.roles.map((role) => [role.role, role.pages])).toEqual([
      ["anonymous", 1],
      ["member", 2],
    ]);
    expect(answer.candidates.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "console-error /members",
    ]);
    const uri = answer.candidates[0]?.evidence.find((item) => item.kind === "failing_test")?.uri ?? "";
    const name = uri.replace(/^artifact:\/\/[^/]+\//, "");
    const source = fs.readFileSync(path.join(context.artifactsDir, name), "utf8");
    expect(source).toContain("QAAS_COOKIE='<the session cookie of a member user>'");
    expect(source).not.toContain(MEMBER_TOKEN);
    // REPRODUCER gives the test this role's session when it runs it (runFindingTest reads the role).
    expect(roleOfTest(source)).toBe("member");
    const folder = path.join(process.cwd(), "node_modules", ".cache", "qaas-browser-tests");
    fs.mkdirSync(folder, { recursive: true });
    const file = path.join(folder, path.basename(name));
    fs.writeFileSync(file, source);
    try {
      expect(await run(file, `sid=${MEMBER_TOKEN}`)).toBe(1);
      expect(await run(file)).toBe(0);
    } finally {
      fs.rmSync(file, { force: true });
    }
  }, 120_000);

  it("sends a bearer token role's header from the browser too", async () => {
    const answer = await browsePages(memberContext("header:Authorization"), { checks: ["console"] });
    if (typeof answer === "string") throw new Error(answer);
    expect(answer.candidates.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "console-error /members",
    ]);
  }, 120_000);
});
