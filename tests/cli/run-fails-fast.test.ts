import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { FakeModelServer } from "../seats/fakes/fake-model-server.ts";
import { startOpenAIFakeServer } from "../seats/fakes/openai-fake-server.ts";
import { REPO_ROOT, type TempProject, tempProject } from "../support/temp-config.ts";

// Black-box: `qaas run` with seats that cannot work must fail before the target starts, naming every
// cause; and a run in which no agent ran must not exit 0 with "0 finding(s)".

const execute = promisify(execFile);
const UNSET_KEY = "QAAS_PREFLIGHT_TEST_UNSET_LLM_KEY";
const OTHER_KEY = "QAAS_PREFLIGHT_TEST_OTHER_LLM_KEY";
const SET_KEY = "QAAS_PREFLIGHT_TEST_SET_LLM_KEY";

async function qaas(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await execute(
      process.execPath,
      [path.join(REPO_ROOT, "bin", "qaas.js"), ...args],
      { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: "1", ...env } },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

function modelAgent(project: TempProject, name: string, seat: Record<string, unknown>) {
  project.addAgent({
    name,
    yaml: {
      description: `${name}, an agent on a model seat.`,
      layer: "discover",
      phase: "discover",
      seat,
      tools: ["emit_envelope"],
    },
  });
}

/** A managed target whose start command leaves a marker: the marker proves whether it was started. */
function markedTarget(project: TempProject): { target: string; marker: string } {
  const marker = path.join(project.dir, "target-started");
  const target = project.addTarget("marked", {
    source: { path: "../.." },
    environment: {
      mode: "managed",
      base_url: "http://127.0.0.1:9",
      start: { command: `node -e "require('fs').writeFileSync(process.argv[1], '')" ${marker}` },
    },
  });
  return { target, marker };
}

let server: FakeModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("qaas run fails fast on seats that cannot work", () => {
  it("names every seat problem at once and starts nothing", async () => {
    const project = tempProject();
    modelAgent(project, "KEYLESS", { backend: "anthropic", model: "any-model", api_key_env: UNSET_KEY });
    // (A refused endpoint in a profile is already caught by config validation, before the preflight.)
    modelAgent(project, "OPENAI", {
      backend: "openai-compatible",
      model: "any-model",
      api_key_env: OTHER_KEY,
    });
    modelAgent(project, "SDKLESS", { backend: "claude-code" });
    project.addMode("seats", { roster: ["KEYLESS", "OPENAI", "SDKLESS"], budget: { usd: 1 } });
    const { target, marker } = markedTarget(project);

    const result = await qaas([
      "--home",
      project.home,
      "run",
      "--mode",
      "seats",
      "--target",
      target,
      "--config",
      project.configDir,
    ]);

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("SEAT_PREFLIGHT_FAILED");
    expect(result.stderr).toContain("3 seat problem(s)");
    expect(result.stderr).toMatch(new RegExp(`${UNSET_KEY}, which is not set.*agents: KEYLESS`));
    expect(result.stderr).toMatch(new RegExp(`${OTHER_KEY}, which is not set.*agents: OPENAI`));
    expect(result.stderr).toMatch(/not installed.*agents: SDKLESS/);
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(path.join(project.home, "runs"))).toBe(false);
  }, 60_000);

  it("exits non-zero when every agent failed for seat reasons", async () => {
    server = await startOpenAIFakeServer([{ status: 401, message: "invalid key" }]);
    const project = tempProject();
    modelAgent(project, "REJECTED", {
      backend: "openai-compatible",
      model: "any-model",
      base_url: `${server.url}/v1`,
      is_local: true,
      api_key_env: SET_KEY,
    });
    project.addMode("seats", { roster: ["REJECTED"], budget: { usd: 1 } });
    const target = project.addTarget("static", {
      source: { path: "../.." },
      environment: { mode: "none" },
    });

    const result = await qaas(
      ["--home", project.home, "run", "--mode", "seats", "--target", target, "--config", project.configDir],
      { [SET_KEY]: "wrong-key" },
    );

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("RUN_NOTHING_RAN");
    expect(result.stderr).toMatch(/REJECTED failed: .*HTTP 401/);
  }, 60_000);
});
