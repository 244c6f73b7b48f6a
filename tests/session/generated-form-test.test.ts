import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import type { ReproScript } from "../../src/probes/evidence/failing-test.ts";
import { renderFailingTest } from "../../src/probes/evidence/failing-test.ts";
import { stepFromPrepared } from "../../src/probes/evidence/repro-steps.ts";
import { profileFor } from "../fixtures/probe-harness.ts";
import { runNodeTest } from "../support/node-test.ts";
import type { BrowserApp } from "./browser-app.ts";
import { startBrowserApp } from "./browser-app.ts";
import { ALICE, setPasswords } from "./session-support.ts";

// A generated failing test must replay a finding on an application that signs in with a CSRF-protected
// form, rotates its session cookie on every page and wants a fresh token in each form it accepts.

let app: BrowserApp;
let folder: string;

beforeAll(async () => {
  app = await startBrowserApp();
  setPasswords();
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-generated-form-"));
});
afterAll(async () => {
  await app.close();
  fs.rmSync(folder, { recursive: true, force: true });
});

const noteForm: Operation = {
  method: "POST",
  path: "/notes",
  security: "unknown",
  parameters: [],
  responses: {},
  seen_in: ["form"],
  documented: false,
  request_body: { content_type: "application/x-www-form-urlencoded", required: true },
  form: {
    page: "/notes/new",
    enctype: "application/x-www-form-urlencoded",
    csrf_field: "authenticity_token",
  },
};

async function runGenerated(
  script: ReproScript,
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  const profile = profileFor({
    name: "browser",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
    auth: { login: { kind: "form", endpoint: "POST /session" } },
    users: [ALICE],
  });
  const file = path.join(folder, `${script.title.replace(/\W+/g, "-")}.test.mjs`);
  fs.writeFileSync(file, renderFailingTest(script, profile, app.baseUrl));
  return runNodeTest(file, { QAAS_BASE_URL: app.baseUrl, ...env });
}

describe("generated tests on a form-and-cookie application", () => {
  it("sign in through the CSRF-protected form and submit a guarded form with the page's fresh token", async () => {
    const step = stepFromPrepared(
      "saved",
      {
        operation: noteForm,
        seed: "s33d",
        pathValues: {},
        query: {},
        headers: {},
        body: { "note[title]": "replayed-s33d" },
        contentType: "application/x-www-form-urlencoded",
      },
      "alice",
    );
    expect(step.formPage).toBe("/notes/new");
    const before = app.notes.length;
    const accepted = await runGenerated({
      title: "form accepted",
      steps: [step, { name: "dashboard", as: "alice", method: "GET", path: "/dashboard" }],
      assertions: [
        { kind: "status_in", step: "saved", values: [303], message: "the note form is accepted" },
        { kind: "status_in", step: "dashboard", values: [200], message: "the rotated session still works" },
      ],
    });
    expect(accepted.output).not.toMatch(/sign-in as alice failed/);
    expect(accepted.code).toBe(0);
    expect(app.notes.slice(before).map((note) => note.user)).toEqual(["alice"]);
    expect(app.notes.at(-1)?.title).toMatch(/^replayed-[a-z0-9]+\|plain\|blue$/);

    // Without the page, the token is missing and the application refuses: the replay depends on it.
    const { formPage: _dropped, ...bare } = step;
    const refused = await runGenerated({
      title: "form without its page",
      steps: [bare],
      assertions: [{ kind: "status_in", step: "saved", values: [303], message: "the note form is accepted" }],
    });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/got 422/);
  });

  it("stops on a refused sign-in instead of testing as nobody", async () => {
    // Signed out, the dashboard redirects: an assertion that a redirect proves would pass for the wrong reason.
    const script: ReproScript = {
      title: "dashboard refused",
      steps: [{ name: "dashboard", as: "alice", method: "GET", path: "/dashboard" }],
      assertions: [
        { kind: "status_in", step: "dashboard", values: [302], message: "the dashboard is refused" },
      ],
    };
    const refused = await runGenerated(script, { BROWSER_ALICE_PW: "not-the-password" });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/sign-in as alice was refused \(302 back to the sign-in page\)/);

    const signedIn = await runGenerated(script);
    expect(signedIn.output).not.toMatch(/was refused/);
    expect(signedIn.output).toMatch(/the dashboard is refused/);
  });
});
