import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { runTrackerCheck } from "../../src/cli/commands/tracker-check.ts";
import { captureStdout } from "../fixtures/init-apps/capture-stdout.ts";
import { GITHUB_TOKEN, startFakeGithub } from "./fake-github.ts";
import { JIRA_EMAIL, JIRA_TOKEN, startFakeJira } from "./fake-jira.ts";
import type { FakeServer } from "./fake-server.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A copy of the package's config with the tracker block replaced. */
function configWith(tracker: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-tracker-config-"));
  fs.cpSync(path.join(REPO, "config"), dir, { recursive: true });
  const file = path.join(dir, "system.yaml");
  const text = fs.readFileSync(file, "utf8");
  if (!/^tracker:\n {2}kind: local\n/m.test(text))
    throw new Error("config/system.yaml no longer ends with tracker: kind: local");
  fs.writeFileSync(file, text.replace(/^tracker:\n {2}kind: local\n/m, tracker));
  return dir;
}

const jiraConfig = (url: string) =>
  configWith(
    `tracker:\n  kind: jira\n  jira:\n    base_url: ${url}\n    project: QA\n    email: ${JIRA_EMAIL}\n    token: secret_ref:QAAS_TEST_JIRA_TOKEN\n    issue_type: Bug\n`,
  );
const nothingWritten = (server: FakeServer) =>
  server.requests.filter((request) => request.method !== "GET" && !request.path.endsWith("/search/jql"));

describe("qaas tracker-check", () => {
  it("jira: credentials, project, issue type and permissions pass, and nothing is created", async () => {
    const jira = await startFakeJira();
    servers.push(jira);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-home-"));
    const { code, stdout } = await captureStdout(() =>
      runTrackerCheck({ config: jiraConfig(jira.url) }, home, { QAAS_TEST_JIRA_TOKEN: JIRA_TOKEN }),
    );
    expect(stdout).toContain("ok   credentials  signed in as QA Bot");
    expect(stdout).toContain("ok   project      project QA (Quality) takes Bug");
    expect(stdout).toContain("tracker ready: nothing was created");
    expect(code).toBe(0);
    expect(nothingWritten(jira)).toEqual([]);
    expect(jira.issues.size).toBe(0);
  });

  it("jira: a missing permission is named and the command exits non-zero (the real binary)", async () => {
    const jira = await startFakeJira();
    servers.push(jira);
    jira.permissions.TRANSITION_ISSUES = false;
    const config = jiraConfig(jira.url);
    const result = await run(
      process.execPath,
      [path.join(REPO, "bin", "qaas.js"), "tracker-check", "--config", config],
      { cwd: REPO, env: { ...process.env, QAAS_TEST_JIRA_TOKEN: JIRA_TOKEN, NO_COLOR: "1" } },
    ).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? "" }),
    );
    expect(result.stdout).toContain("FAIL transition   missing: TRANSITION_ISSUES in project QA");
    expect(result.stdout).toContain("tracker not ready (transition failed): nothing was created");
    expect(result.code).toBe(1);
    expect(nothingWritten(jira)).toEqual([]);
  });

  it("github: a role without triage cannot close or reopen; an unset token is a failed check naming the variable", async () => {
    const github = await startFakeGithub();
    servers.push(github);
    github.permissions.triage = false;
    const config = configWith(
      `tracker:\n  kind: github\n  github:\n    owner: acme\n    repo: shop\n    token: secret_ref:QAAS_TEST_GITHUB_TOKEN\n    base_url: ${github.url}\n`,
    );
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-home-"));
    const missing = await captureStdout(() =>
      runTrackerCheck({ config, json: true }, home, { QAAS_TEST_GITHUB_TOKEN: GITHUB_TOKEN }),
    );
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).checks).toEqual([
      { name: "credentials", ok: true, detail: "signed in as qaas-bot" },
      { name: "project", ok: true, detail: "acme/shop has issues enabled" },
      { name: "create", ok: true, detail: "granted (read)" },
      { name: "comment", ok: true, detail: "granted (read)" },
      { name: "transition", ok: false, detail: "missing: needs the triage role on acme/shop" },
      { name: "labels", ok: false, detail: "missing: needs the triage role on acme/shop" },
    ]);
    const unset = await captureStdout(() => runTrackerCheck({ config }, home, {}));
    expect(unset.code).toBe(1);
    expect(unset.stdout).toContain(
      "environment variable QAAS_TEST_GITHUB_TOKEN is not set (needed for tracker.github.token in config/system.yaml)",
    );
    expect(github.issues.size).toBe(0);
  });

  it("refuses a tracker config that names a kind without its settings, or writes a token", async () => {
    const { ConfigError } = await import("../../src/config/config-errors.ts");
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-home-"));
    await expect(runTrackerCheck({ config: configWith("tracker:\n  kind: jira\n") }, home)).rejects.toThrow(
      /tracker\.kind is jira, so tracker\.jira is required/,
    );
    const literal = configWith(
      "tracker:\n  kind: github\n  github:\n    owner: acme\n    repo: shop\n    token: ghp_literal\n",
    );
    await expect(runTrackerCheck({ config: literal }, home)).rejects.toBeInstanceOf(ConfigError);
    await expect(runTrackerCheck({ config: literal }, home)).rejects.toThrow(/must be secret_ref:ENV_NAME/);
  });
});
