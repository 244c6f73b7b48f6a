import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, formatProblem } from "../../src/config/config-errors.ts";
import { agentPrompt, HOUSE_RULES_FILE, loadConfig, PROMPTS_DIR } from "../../src/config/load-config.ts";
import { validateConfig } from "../../src/config/validate-config.ts";
import { CATALOG_TOOL_NAMES } from "../../src/tools/catalog.ts";
import { copyShippedConfig, editConfigFile, lineOf } from "./config-fixture.ts";

const SPEC_AGENTS = [
  "MAPPER",
  "ARCHITECT",
  "API",
  "BROWSER",
  "DBA",
  "AUDITOR",
  "SOCKET",
  "GUIDE",
  "LOAD",
  "REPRODUCER",
  "TRIAGE",
  "FIXER",
  "REVIEWER",
  "VERIFIER",
  "REPORTER",
];

function loadError(dir: string): ConfigError {
  try {
    loadConfig(dir);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected loadConfig to throw a ConfigError");
}

describe("the shipped configuration", () => {
  it("loads all fifteen agents of the spec with no errors", () => {
    const config = loadConfig();
    expect([...config.agents.keys()].sort()).toEqual([...SPEC_AGENTS].sort());
    expect(validateConfig().filter((problem) => problem.severity === "error")).toEqual([]);
  });

  it("gives every agent a prompt of real length, and the house rules to each", () => {
    const config = loadConfig();
    for (const agent of config.agents.values()) {
      expect(agent.promptFile).toBe(path.join(PROMPTS_DIR, `${agent.config.name}.md`));
      const lines = fs.readFileSync(agent.promptFile, "utf8").trim().split("\n").length;
      expect(lines, agent.config.name).toBeGreaterThanOrEqual(40);
      expect(lines, agent.config.name).toBeLessThanOrEqual(120);
      expect(agentPrompt(agent)).toContain(fs.readFileSync(HOUSE_RULES_FILE, "utf8").trim());
    }
  });

  it("lets only REPRODUCER and FIXER write, and only TRIAGE file tickets", () => {
    const config = loadConfig();
    const writers = [...config.agents.values()]
      .filter((agent) => agent.config.policy.write_paths.length > 0)
      .map((agent) => agent.config.name);
    expect(writers.sort()).toEqual(["FIXER", "REPRODUCER"]);
    const fixer = config.agents.get("FIXER")!.config.policy;
    expect(fixer).toMatchObject({
      branch_patterns: ["qaas/fix-*"],
      diff_budget: { files: 5, lines: 200 },
      immutable_test: true,
    });
    expect(config.agents.get("REPRODUCER")!.config.policy.branch_patterns).toEqual(["qa/repro/*"]);
    const roles = [...config.agents.values()].flatMap((agent) =>
      agent.config.loop_role ? [agent.config.name] : [],
    );
    expect(roles.sort()).toEqual(["FIXER", "REVIEWER", "VERIFIER"]);
    const filers = [...config.agents.values()].filter((agent) => agent.config.policy.may_file_tickets);
    expect(filers.map((agent) => agent.config.name)).toEqual(["TRIAGE"]);
  });

  it("declares the run modes of the spec with budgets and the verify-loop bounds", () => {
    const { system } = loadConfig();
    expect(Object.keys(system.run_modes).sort()).toEqual(
      ["bug-bash", "explore", "fix-cycle", "full-loop", "nightly", "pr-check", "ui"].sort(),
    );
    expect(system.run_modes["pr-check"]).toMatchObject({
      roster: ["MAPPER", "API", "BROWSER", "REPRODUCER", "TRIAGE"],
      focus: "changed",
    });
    expect([...system.run_modes["full-loop"]!.roster].sort()).toEqual([...SPEC_AGENTS].sort());
    for (const mode of Object.values(system.run_modes)) {
      expect(mode.budget.usd).toBeGreaterThan(0);
      expect(mode.budget.tokens).toBeGreaterThan(0);
    }
    expect(system.loop).toEqual({ max_reopens: 2, max_round_trips: 3 });
    expect(Object.keys(system.forbidden_paths).sort()).toEqual(
      ["auth", "ci", "infrastructure", "migrations", "payment", "secrets"].sort(),
    );
    expect(system.forbidden_commands).toEqual(
      expect.arrayContaining(["git merge", "git push --force", "gh pr merge"]),
    );
  });

  it("warns about planned tools only when told which tools are implemented", () => {
    expect(validateConfig().filter((problem) => problem.severity === "warning")).toEqual([]);
    const implemented = new Set([...CATALOG_TOOL_NAMES].filter((tool) => tool !== "record_verdict"));
    const warnings = validateConfig(undefined, implemented).filter(
      (problem) => problem.severity === "warning",
    );
    expect(warnings).toHaveLength(1);
    expect(formatProblem(warnings[0]!)).toMatch(
      /verifier\.yaml:\d+ tools\[\d+\]: warning: "record_verdict" is planned/,
    );
  });
});

describe("configuration errors", () => {
  it("name the file, the line, the field and a suggestion for a misspelled tool", () => {
    const dir = copyShippedConfig();
    const file = editConfigFile(dir, "agents/api.yaml", "  - http_request\n", "  - htp_request\n");
    const error = loadError(dir);
    expect(error.code).toBe("CONFIG_INVALID");
    const problem = error.problems.find((candidate) => candidate.message.includes("htp_request"));
    expect(problem).toMatchObject({
      line: lineOf(file, "htp_request"),
      path: "tools[5]",
      severity: "error",
      message: '"htp_request" is not a tool (did you mean "http_request"?)',
    });
    expect(problem!.file).toMatch(/agents\/api\.yaml$/);
    expect(error.message).toContain(`api.yaml:${lineOf(file, "htp_request")} tools[5]:`);
  });

  it("collects every problem of every file before throwing", () => {
    const dir = copyShippedConfig();
    editConfigFile(dir, "agents/dba.yaml", "max_turns: 30", "max_turns: -1");
    editConfigFile(dir, "agents/load.yaml", "layer: discover", "layer: discovery");
    editConfigFile(dir, "system.yaml", "concurrency: 5", "concurrency: 0");
    const paths = loadError(dir).problems.map((problem) => `${path.basename(problem.file)} ${problem.path}`);
    expect(paths).toEqual(
      expect.arrayContaining(["dba.yaml max_turns", "load.yaml layer", "system.yaml concurrency"]),
    );
  });

  it("suggests the valid value of an enum", () => {
    const dir = copyShippedConfig();
    editConfigFile(dir, "agents/load.yaml", "layer: discover", "layer: discovery");
    const problem = loadError(dir).problems.find((candidate) => candidate.path === "layer");
    expect(problem?.message).toContain('"discovery" is not valid (did you mean "discover"?)');
  });

  it("requires an agent's name to match its file name", () => {
    const dir = copyShippedConfig();
    editConfigFile(dir, "agents/guide.yaml", "name: GUIDE", "name: GUIDES");
    const problem = loadError(dir).problems.find((candidate) => candidate.path === "name");
    expect(problem?.message).toContain('expected "GUIDE"');
  });

  it("refuses a writer without a diff budget and a ticket filer without create_issue", () => {
    const dir = copyShippedConfig();
    editConfigFile(dir, "agents/fixer.yaml", "  diff_budget: { files: 5, lines: 200 }\n", "");
    editConfigFile(dir, "agents/triage.yaml", "  - create_issue\n", "");
    const problems = loadError(dir).problems.map(
      (problem) => `${path.basename(problem.file)} ${problem.path}`,
    );
    expect(problems).toEqual(
      expect.arrayContaining(["fixer.yaml policy.diff_budget", "triage.yaml policy.may_file_tickets"]),
    );
  });

  it("refuses two agents playing one verify-loop role, and warns about a roster with half a loop", () => {
    const dir = copyShippedConfig();
    editConfigFile(dir, "agents/reviewer.yaml", "loop_role: reviewer", "loop_role: fixer");
    const problems = loadError(dir).problems.map(
      (problem) => `${path.basename(problem.file)} ${problem.path} ${problem.severity}`,
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        "reviewer.yaml loop_role error",
        "system.yaml run_modes.fix-cycle.roster warning",
      ]),
    );
  });

  it("refuses a seat key variable that holds a non-model secret", () => {
    const dir = copyShippedConfig();
    editConfigFile(
      dir,
      "system.yaml",
      "  worker:\n    backend: builtin\n",
      "  worker:\n    backend: anthropic\n    model: some-model\n    api_key_env: GITHUB_TOKEN\n",
    );
    const problem = loadError(dir).problems.find(
      (candidate) => candidate.path === "seats.worker.api_key_env",
    );
    expect(problem?.message).toContain("looks like a secret that is not a model key");
  });
});
