import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExploreRunFile } from "../../src/explore/run-file.ts";
import { type ExploreSite, startExploreSite } from "./explore-site.ts";

// Black-box: the real binary explores a local site through a temp profile. The exit code carries the
// verdict (0 passed, 1 failed, 3 blocked), --json prints the run file, and bad input is named.

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const execute = promisify(execFile);

let site: ExploreSite;
let home: string;
let profile: string;

function writeProfile(name: string, baseUrl: string): string {
  const file = path.join(home, `${name}.yaml`);
  fs.writeFileSync(
    file,
    `name: ${name}\nsource:\n  path: .\nenvironment:\n  mode: external\n  base_url: ${baseUrl}\n  health_path: /health\n`,
  );
  return file;
}

beforeAll(async () => {
  site = await startExploreSite();
  home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-explore-cli-"));
  profile = writeProfile("site", site.baseUrl);
});

afterAll(async () => {
  await site.close();
});

async function qaas(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execute(process.execPath, [path.join(REPO, "bin", "qaas.js"), ...args], {
      cwd: REPO,
      env: { ...process.env, QAAS_HOME: home, NO_COLOR: "1" },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("qaas explore", () => {
  it("passes a charter the site meets, prints progress per step and keeps the run file in the run folder", async () => {
    const result = await qaas(
      "explore",
      "--charter",
      'open the entry page and find a way to Settings; it shows "Notifications"',
      "--target",
      profile,
      "--budget",
      "steps=40",
    );
    expect(result.stderr).toMatch(/budget steps: asked 40, using 12/);
    expect(result.stderr).toMatch(/step 2 passed: find a way to Settings/);
    expect(result.stdout).toMatch(/^verdict: passed/);
    expect(result.code).toBe(0);
    const runId = /run (\S+): passed/.exec(result.stdout)![1]!;
    const run = JSON.parse(
      fs.readFileSync(path.join(home, "runs", runId, "run.json"), "utf8"),
    ) as ExploreRunFile;
    expect(run).toMatchObject({
      platform: "web",
      budget: { steps: 12 },
      clamped: [{ field: "steps", asked: 40, used: 12 }],
    });
    expect(run.steps).toHaveLength(3);
    const listed = await qaas("runs");
    expect(listed.stdout).toMatch(new RegExp(`${runId}.*passed`));
  }, 120_000);

  it("fails (exit 1) on a missing text and prints the run file with --json", async () => {
    const result = await qaas(
      "explore",
      "--charter",
      'go to /about and check it shows "Team directory"',
      "--target",
      profile,
      "--json",
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("");
    const run = JSON.parse(result.stdout) as ExploreRunFile;
    expect(run.findings).toMatchObject([
      { kind: "issue", screen: "/about", evidence: [{ kind: "screenshot" }] },
    ]);
    expect(run.ended?.reason).toBe("plan-complete");
  }, 120_000);

  it("is blocked (exit 3) when the target does not answer", async () => {
    const down = writeProfile("down", "http://127.0.0.1:9");
    const result = await qaas("explore", "--charter", "find a way to Settings", "--target", down);
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^verdict: blocked/);
    expect(result.stdout).toMatch(/environment:\n.*\[ENVIRONMENT_UNAVAILABLE\]/);
  }, 60_000);

  it("names a missing charter, an unknown target and a bad budget", async () => {
    const [noCharter, noTarget, badBudget] = await Promise.all([
      qaas("explore", "--target", profile),
      qaas("explore", "--charter", "look around", "--target", "no-such-target"),
      qaas("explore", "--charter", "look around", "--target", profile, "--budget", "turns=3"),
    ]);
    expect(noCharter).toMatchObject({ code: 1, stderr: expect.stringMatching(/--charter.*\[NO_CHARTER\]/) });
    expect(noTarget).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/no-such-target.*\[TARGET_NOT_FOUND\]/),
    });
    expect(badBudget).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/unknown budget key "turns".*\[BAD_BUDGET\]/),
    });
  }, 60_000);
});
