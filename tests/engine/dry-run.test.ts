import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT, tempProject } from "../support/temp-config.ts";

describe("qaas run --dry-run", () => {
  const project = tempProject();
  const target = project.addTarget("static", { source: { path: "../.." }, environment: { mode: "none" } });
  const cli = path.join(REPO_ROOT, "bin/qaas.js");
  const run = (...extra: string[]) =>
    spawnSync(
      process.execPath,
      [cli, "--home", project.home, "run", "--mode", "full-loop", "--target", target, "--dry-run", ...extra],
      {
        encoding: "utf8",
      },
    );

  it("prints every agent of the roster with an allowlist equal to its YAML, and calls nothing", () => {
    const result = run("--json");
    expect(result.status).toBe(0);
    const dry = JSON.parse(result.stdout) as {
      agents: Array<{ agent: string; allowlist: string[]; prompt: string; task: string }>;
    };
    const system = parse(fs.readFileSync(path.join(REPO_ROOT, "config/system.yaml"), "utf8"));
    expect(dry.agents.map((agent) => agent.agent)).toEqual(system.run_modes["full-loop"].roster);
    for (const agent of dry.agents) {
      const yaml = parse(
        fs.readFileSync(path.join(REPO_ROOT, "config/agents", `${agent.agent.toLowerCase()}.yaml`), "utf8"),
      );
      expect(agent.allowlist, agent.agent).toEqual(yaml.tools);
      expect(agent.prompt.length, agent.agent).toBeGreaterThan(500);
      expect(agent.task).toContain(`# Task for ${agent.agent}`);
    }
    // Nothing ran: no run folder was created.
    expect(fs.existsSync(path.join(project.home, "runs"))).toBe(false);
  });

  it("renders the complete prompt and task for people", () => {
    const result = run();
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Nothing was called.");
    expect(result.stdout).toMatch(/={5,} MAPPER \(map, per_run\)/);
    expect(result.stdout).toContain("--- prompt ---");
    expect(result.stdout).toContain("--- task ---");
  });
});
