import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { CATALOG_TOOL_NAMES } from "../tools/catalog.ts";
import type { AgentConfig, SeatRef } from "./agent-schema.ts";
import { didYouMean, displayPath, type Problem } from "./config-errors.ts";
import type { ConfigReading } from "./load-config.ts";
import { checkSeat, checkSystem } from "./system-coherence.ts";
import { type Report, reporter } from "./yaml-source.ts";

// Checks that need more than one field, file or folder: what the schemas alone cannot say.

/** Tools whose calls write to the target's repository; an agent holding one is a "writer". */
export const WRITE_TOOLS: readonly string[] = ["write_file", "commit", "push", "create_branch"];

/** Which phases belong to which layer (TRIAGE's layer covers reproducing and filing). */
const PHASES_OF_LAYER: Record<AgentConfig["layer"], readonly AgentConfig["phase"][]> = {
  map: ["map"],
  discover: ["discover"],
  triage: ["reproduce", "file"],
  remediate: ["verify"],
  verify: ["verify"],
  report: ["report"],
};

export function isWriter(agent: AgentConfig): boolean {
  return agent.tools.some((tool) => WRITE_TOOLS.includes(tool));
}

/** `implementedTools`, when given, turns catalog names with no implementation yet into "planned" warnings. */
export function checkCoherence(reading: ConfigReading, implementedTools?: ReadonlySet<string>): Problem[] {
  const problems: Problem[] = [];
  if (reading.system !== undefined && reading.systemSource !== undefined) {
    problems.push(...checkSystem(reading.system, reading.systemSource, reading.agentNames));
  }
  checkHouseRules(problems);
  checkLoopRoles(reading, problems);
  for (const { loaded, source, playbookDeclared } of reading.agents) {
    const report = reporter(problems, source);
    const agent = loaded.config;
    checkPhase(agent, report);
    checkTools(agent, report, implementedTools);
    checkWriterPolicy(agent, report);
    checkTickets(agent, report);
    checkFile(loaded.promptFile, "prompt", report);
    if (playbookDeclared && loaded.playbookFile !== undefined) {
      checkFile(loaded.playbookFile, "playbook", report);
    }
    if (agent.seat !== undefined) {
      for (const problem of checkSeat(agent.seat as SeatRef, "worker")) {
        report(["seat", ...problem.segments], problem.message, problem.severity);
      }
    }
  }
  return problems;
}

const LOOP_ROLES = ["verifier", "fixer", "reviewer"] as const;

/** The router drives the verify loop by role: each role must be played by one agent, in the verify phase. */
function checkLoopRoles(reading: ConfigReading, problems: Problem[]): void {
  const roleOf = new Map<string, string>();
  const playedBy = new Map<string, string>();
  for (const { loaded, source } of reading.agents) {
    const agent = loaded.config;
    const report = reporter(problems, source);
    if (agent.loop_role === undefined) {
      if (agent.cardinality === "per_ticket") {
        report(
          ["cardinality"],
          "a per_ticket agent without loop_role is never started by the verify loop",
          "warning",
        );
      }
      continue;
    }
    roleOf.set(agent.name, agent.loop_role);
    if (agent.phase !== "verify") report(["loop_role"], 'the verify loop runs in phase "verify"');
    const other = playedBy.get(agent.loop_role);
    if (other !== undefined) {
      report(
        ["loop_role"],
        `"${agent.loop_role}" is already played by ${other}; the router needs exactly one`,
      );
    }
    playedBy.set(agent.loop_role, agent.name);
  }
  const system = reading.system;
  const systemSource = reading.systemSource;
  if (system === undefined || systemSource === undefined) return;
  const report = reporter(problems, systemSource);
  for (const [mode, runMode] of Object.entries(system.run_modes)) {
    const present = new Set(
      runMode.roster.map((name) => roleOf.get(name)).filter((role) => role !== undefined),
    );
    const missing = LOOP_ROLES.filter((role) => !present.has(role));
    if (present.size > 0 && missing.length > 0) {
      report(
        ["run_modes", mode, "roster"],
        `has part of the verify loop but no ${missing.join(" or ")}; the loop cannot complete`,
        "warning",
      );
    }
  }
}

function checkPhase(agent: AgentConfig, report: Report): void {
  const phases = PHASES_OF_LAYER[agent.layer];
  if (!phases.includes(agent.phase)) {
    report(
      ["phase"],
      `phase "${agent.phase}" does not belong to layer "${agent.layer}" (expected ${phases.join(" or ")})`,
    );
  }
  if (agent.cardinality === "per_finding" && agent.phase !== "reproduce") {
    report(["cardinality"], "per_finding agents run in the reproduce phase", "warning");
  }
  if (agent.cardinality === "per_ticket" && agent.phase !== "verify") {
    report(["cardinality"], "per_ticket agents run in the verify phase", "warning");
  }
}

function checkTools(agent: AgentConfig, report: Report, implementedTools?: ReadonlySet<string>): void {
  const seen = new Set<string>();
  for (const [index, tool] of agent.tools.entries()) {
    if (seen.has(tool)) report(["tools", index], `"${tool}" is listed twice`, "warning");
    seen.add(tool);
    if (!CATALOG_TOOL_NAMES.has(tool)) {
      report(["tools", index], `"${tool}" is not a tool${didYouMean(tool, CATALOG_TOOL_NAMES)}`);
    } else if (implementedTools !== undefined && !implementedTools.has(tool)) {
      report(
        ["tools", index],
        `"${tool}" is planned: calling it answers "not available" until it is built`,
        "warning",
      );
    }
  }
  for (const [index, tool] of agent.must_call.entries()) {
    if (!agent.tools.includes(tool)) {
      report(
        ["must_call", index],
        `"${tool}" is not in this agent's tools${didYouMean(tool, agent.tools)}: an agent cannot be made to call a tool it may not use`,
      );
    }
  }
  if (agent.phase === "discover" && !agent.tools.includes("emit_envelope")) {
    report(["tools"], "a discovery agent needs emit_envelope: it is the only way to hand over a finding");
  }
}

function checkWriterPolicy(agent: AgentConfig, report: Report): void {
  const policy = agent.policy;
  if (!isWriter(agent)) {
    const writeTools = WRITE_TOOLS.join(", ");
    if (policy.write_paths.length > 0) {
      report(["policy", "write_paths"], `only writers (agents with ${writeTools}) may have write paths`);
    }
    if (policy.branch_patterns.length > 0) {
      report(
        ["policy", "branch_patterns"],
        `only writers (agents with ${writeTools}) may have branch patterns`,
      );
    }
    if (policy.diff_budget !== undefined) {
      report(["policy", "diff_budget"], `only writers (agents with ${writeTools}) may have a diff budget`);
    }
    if (policy.immutable_test)
      report(["policy", "immutable_test"], "has no effect on an agent that cannot write", "warning");
    return;
  }
  const writeTool = agent.tools.find((tool) => WRITE_TOOLS.includes(tool));
  const because = `this agent writes (it has ${writeTool})`;
  if (policy.write_paths.length === 0)
    report(["policy", "write_paths"], `${because}, so it needs write_paths`);
  if (policy.branch_patterns.length === 0)
    report(["policy", "branch_patterns"], `${because}, so it needs branch_patterns`);
  if (policy.diff_budget === undefined)
    report(["policy", "diff_budget"], `${because}, so it needs a diff_budget`);
  for (const [index, glob] of policy.write_paths.entries()) {
    if (glob.startsWith("/") || /^[A-Za-z]:/.test(glob) || glob.split("/").includes("..")) {
      report(
        ["policy", "write_paths", index],
        `"${glob}" must be relative to the target root and stay inside it`,
      );
    }
  }
  for (const [index, pattern] of policy.branch_patterns.entries()) {
    const problem = branchPatternProblem(pattern);
    if (problem !== undefined) report(["policy", "branch_patterns", index], problem);
  }
}

/** A branch pattern may never reach a protected branch, nor be so wide that it could. */
export function branchPatternProblem(pattern: string): string | undefined {
  if (/^[*/?]*$/.test(pattern)) return `"${pattern}" matches every branch; use a prefix such as fix/*`;
  for (const protectedBranch of ["main", "master"]) {
    if (branchGlobToRegExp(pattern).test(protectedBranch)) {
      return `"${pattern}" matches "${protectedBranch}": agents never write to a protected branch`;
    }
  }
  return undefined;
}

/** `*` and `?` stay within one segment, `**` crosses segments. */
export function branchGlobToRegExp(pattern: string): RegExp {
  let expression = "";
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]!;
    if (character === "*" && pattern[index + 1] === "*") {
      expression += ".*";
      index++;
    } else if (character === "*") expression += "[^/]*";
    else if (character === "?") expression += "[^/]";
    else expression += character.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${expression}$`);
}

function checkTickets(agent: AgentConfig, report: Report): void {
  const hasCreateIssue = agent.tools.includes("create_issue");
  if (agent.policy.may_file_tickets && !hasCreateIssue) {
    report(["policy", "may_file_tickets"], "may_file_tickets is true but create_issue is not in tools");
  }
  if (hasCreateIssue && !agent.policy.may_file_tickets) {
    report(
      ["tools", agent.tools.indexOf("create_issue")],
      "create_issue needs policy.may_file_tickets: true (only the agent allowed to file tickets may hold it)",
    );
  }
}

function checkFile(file: string, what: "prompt" | "playbook", report: Report): void {
  const field = [what];
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    report(field, `${what} file not found: ${displayPath(file)}`);
    return;
  }
  if (what === "prompt" && fs.readFileSync(file, "utf8").trim() === "") {
    report(field, `prompt file is empty: ${displayPath(file)}`);
  } else if (size === 0) {
    report(field, `${what} file is empty: ${displayPath(file)}`);
  }
}

function checkHouseRules(problems: Problem[]): void {
  const file = HOUSE_RULES;
  if (!fs.existsSync(file) || fs.readFileSync(file, "utf8").trim() === "") {
    problems.push({
      file: displayPath(file),
      path: "",
      message: "the house rules every prompt shares are missing or empty",
      severity: "error",
    });
  }
}

// Resolved here rather than imported from load-config, which imports this module.
const HOUSE_RULES = fileURLToPath(new URL("../agents/prompts/HOUSE_RULES.md", import.meta.url));
