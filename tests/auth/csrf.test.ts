import { afterEach, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { Operation, SystemMap } from "../../src/map/system-map.ts";
import { byForgeryValue, checkCsrf } from "../../src/probes/auth/check-csrf.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, undocumented, undocumentedMap } from "../fixtures/probe-harness.ts";
import type { CsrfApp } from "./csrf-app.ts";
import { startCsrfApp } from "./csrf-app.ts";

const apps: CsrfApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function formAction(path: string): Operation {
  return {
    ...undocumented("POST", path, ["form"]),
    form: { page: "/", enctype: "application/x-www-form-urlencoded" },
  };
}

function mapFor(baseUrl: string): SystemMap {
  const jsonRename: Operation = {
    ...undocumented("POST", "/api/labels/rename"),
    request_body: {
      content_type: "application/json",
      required: true,
      schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
    },
  };
  return undocumentedMap("csrf-fixture", baseUrl, [
    ...["notes", "tags", "labels", "boards", "cards", "lists"].map((name) =>
      undocumented("GET", `/api/${name}`, ["link"]),
    ),
    undocumented("GET", "/profile", ["link"]),
    { ...formAction("/profile"), form: { page: "/profile", enctype: "application/x-www-form-urlencoded" } },
    formAction("/api/notes/rename"),
    formAction("/api/tags/rename"),
    formAction("/api/boards/rename"),
    formAction("/api/lists/rename"),
    jsonRename,
    {
      ...undocumented("POST", "/api/cards/rename"),
      request_body: {
        content_type: "application/json",
        required: true,
        schema: {
          type: "object",
          properties: { title: { type: "string" }, csrf_token: { type: "string" } },
        },
      },
    },
  ]);
}

async function check(app: CsrfApp, applyAs = "cookie:sid") {
  process.env.CSRF_ALICE_PW = "alice-password";
  const profile = profileFor({
    name: "csrf-fixture",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
    auth: {
      login: {
        kind: "form",
        endpoint: "POST /login",
        body: { username: "{username}", password: "{password}" },
        token_from: "cookie:sid",
        apply_as: applyAs,
      },
    },
    users: [{ name: "alice", role: "member", username: "alice", password: "secret_ref:CSRF_ALICE_PW" }],
  });
  const map = mapFor(app.baseUrl);
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_authentication");
  if (typeof run === "string") throw new Error(run);
  const users = await usableUsers(run);
  const outcome = await checkCsrf(run, users, map.operations);
  for (const candidate of outcome.candidates) EnvelopeDraftSchema.parse(candidate);
  return outcome;
}

describe("check_authentication: cross-site request forgery judged by effect", () => {
  it("flags the unguarded cookie-authenticated changes and puts back what they changed", async () => {
    const app = await startCsrfApp();
    apps.push(app);
    const { candidates, stats } = await check(app);
    expect(candidates.map((candidate) => candidate.location.value)).toEqual([
      "POST /profile",
      "POST /api/notes/rename",
      "GET /api/lists/rename",
      "POST /api/cards/rename",
    ]);
    const [finding] = candidates;
    expect(finding).toMatchObject({ domain: "security", defect_class: "csrf" });
    expect(finding?.evidence.some((item) => item.kind === "note" && /put back/.test(item.description))).toBe(
      true,
    );
    expect(stats.forged["POST /api/tags/rename"]).toBe("refused or without effect");
    expect(stats.forged["POST /api/labels/rename"]).toBe("refused or without effect");
    expect(stats.forged["POST /api/boards/rename"]).toBe("changes data anonymously");
    // Its token guards the post; the same fields in a link's query rename it all the same.
    expect(stats.forged["POST /api/lists/rename"]).toBe("get-link: accepted and applied");
    const link = candidates.find((candidate) => candidate.location.value === "GET /api/lists/rename");
    expect(link?.title).toMatch(/cross-site link/);
    // Every record the probe renamed says what it said before.
    expect(app.titles).toEqual({
      notes: ["Groceries"],
      tags: ["Urgent"],
      labels: ["Blue"],
      boards: ["Roadmap"],
      cards: ["Bob's card", "Welcome"],
      lists: ["Chores"],
    });
    // The address the account signs in with was re-sent as it was; the phone number got its value back.
    expect(app.profile).toEqual({ email: "alice@fixture.test", phone: "+44 20 7946 0000" });
  });

  it("forges only links when the session cookie is SameSite=Lax: browsers send it with a top-level GET alone", async () => {
    const app = await startCsrfApp({ sameSite: "Lax" });
    apps.push(app);
    const { candidates, stats } = await check(app);
    expect(candidates.map((candidate) => candidate.location.value)).toEqual(["GET /api/lists/rename"]);
    expect(stats.same_site).toBe("Lax");
    expect(stats.forged["POST /api/notes/rename"]).toBe("refused or without effect");
    expect(app.titles.notes).toEqual(["Groceries"]);
    expect(app.titles.lists).toEqual(["Chores"]);
  });

  it("leaves a session whose cookie is SameSite=Strict alone", async () => {
    const app = await startCsrfApp({ sameSite: "Strict" });
    apps.push(app);
    const { candidates, stats } = await check(app);
    expect(candidates).toEqual([]);
    expect(stats.same_site).toBe("Strict");
  });

  it("tries a forgery again when a busy server fails it, and still leaves the guarded actions alone", async () => {
    const app = await startCsrfApp({ busyWrites: true });
    apps.push(app);
    const { candidates, stats } = await check(app);
    expect(candidates.map((candidate) => candidate.location.value)).toContain("POST /api/notes/rename");
    expect(candidates.map((candidate) => candidate.location.value)).not.toContain("POST /api/tags/rename");
    expect(stats.forged["POST /api/labels/rename"]).toBe("refused or without effect");
    expect(app.titles.notes).toEqual(["Groceries"]);
  });

  it("does not apply to a session carried in a header", async () => {
    const app = await startCsrfApp();
    apps.push(app);
    const { candidates, stats } = await check(app, "header:Authorization");
    expect(candidates).toEqual([]);
    expect(stats.session).toBe("header");
  });
});

describe("the order forgeries are tried in", () => {
  it("puts posts a page's form makes first and searches or sign-ins after the writes of each kind", () => {
    const order = byForgeryValue([
      undocumented("POST", "/api/things/search"),
      undocumented("POST", "/api/things"),
      formAction("/account/session"),
      undocumented("POST", "/api/notes"),
      formAction("/account/nickname"),
    ]).map((operation) => operation.path);
    expect(order).toEqual([
      "/account/nickname",
      "/account/session",
      "/api/things",
      "/api/notes",
      "/api/things/search",
    ]);
  });
});
