import { checkApiKeyName, checkBaseUrl } from "../seats/seat-safety.ts";
import type { SeatRef } from "./agent-schema.ts";
import { didYouMean, type Problem } from "./config-errors.ts";
import type { SystemConfig } from "./system-schema.ts";
import { reporter, type YamlSource } from "./yaml-source.ts";

// Checks of config/system.yaml beyond its schema: rosters name real agents, bounds are sane, the
// guardrail lists cover what the spec promises, and seats are safe to build.

export const FORBIDDEN_PATH_CLASSES = [
  "migrations",
  "auth",
  "payment",
  "secrets",
  "infrastructure",
  "ci",
] as const;

interface SeatProblem {
  segments: PropertyKey[];
  message: string;
  severity: Problem["severity"];
}

export function checkSystem(
  system: SystemConfig,
  source: YamlSource,
  agentNames: ReadonlySet<string>,
): Problem[] {
  const problems: Problem[] = [];
  const report = reporter(problems, source);

  for (const [mode, runMode] of Object.entries(system.run_modes)) {
    const seen = new Set<string>();
    for (const [index, agent] of runMode.roster.entries()) {
      const at = ["run_modes", mode, "roster", index];
      if (!agentNames.has(agent)) {
        report(
          at,
          `"${agent}" is not an agent${didYouMean(agent, agentNames)}; agents: ${[...agentNames].join(", ")}`,
        );
      }
      if (seen.has(agent)) report(at, `"${agent}" is listed twice`, "warning");
      seen.add(agent);
    }
    if (runMode.budget.usd === undefined && runMode.budget.tokens === undefined) {
      report(
        ["run_modes", mode],
        "no budget: set budget.usd and budget.tokens so the run has a hard limit",
        "warning",
      );
    }
  }

  const { thresholds, loop } = system;
  if (thresholds.file_confidence < 0.3) {
    report(
      ["thresholds", "file_confidence"],
      "below 0.3 nearly every guess would be filed as a ticket",
      "warning",
    );
  }
  for (const gate of ["min_recall", "min_precision"] as const) {
    if (thresholds[gate] === 0)
      report(["thresholds", gate], "0 means the quality gate can never fail", "warning");
  }
  if (loop.max_reopens > 10)
    report(["loop", "max_reopens"], "more than 10 reopens rarely ends well", "warning");
  if (loop.max_round_trips > 10) {
    report(["loop", "max_round_trips"], "more than 10 review round trips rarely ends well", "warning");
  }
  if (system.retries.attempts > 5)
    report(["retries", "attempts"], "more than 5 retries multiplies cost", "warning");
  if (system.concurrency > 32)
    report(["concurrency"], "more than 32 concurrent agents on one machine", "warning");
  if (system.ticket_cap === 0) report(["ticket_cap"], "0 means no ticket can ever be filed", "warning");

  for (const pathClass of FORBIDDEN_PATH_CLASSES) {
    if (system.forbidden_paths[pathClass] === undefined) {
      report(
        ["forbidden_paths"],
        `no "${pathClass}" class: changes there would not stop at a person`,
        "warning",
      );
    }
  }
  for (const [pathClass, globs] of Object.entries(system.forbidden_paths)) {
    if (globs.length === 0) report(["forbidden_paths", pathClass], "an empty class protects nothing");
    for (const [index, glob] of globs.entries()) {
      if (glob.startsWith("/") || glob.split("/").includes("..")) {
        report(["forbidden_paths", pathClass, index], `"${glob}" must be relative to the target root`);
      }
    }
  }
  if (!system.forbidden_commands.some((command) => /\bmerge\b/.test(command))) {
    report(["forbidden_commands"], "no merge command is forbidden; qaas must never merge", "warning");
  }

  for (const problem of checkSeat(system.seats.worker, "worker")) {
    report(["seats", "worker", ...problem.segments], problem.message, problem.severity);
  }
  const orchestrator = system.seats.orchestrator;
  if (orchestrator.backend === "builtin") {
    report(
      ["seats", "orchestrator", "backend"],
      'the orchestrator makes decisions: use "rules" or a model backend, not "builtin"',
    );
  } else if (orchestrator.backend !== "rules") {
    for (const problem of checkSeat(orchestrator as SeatRef, "orchestrator")) {
      report(["seats", "orchestrator", ...problem.segments], problem.message, problem.severity);
    }
  }
  return problems;
}

/**
 * A seat is built offline, so these mistakes would otherwise show only at call time. The safety rules
 * themselves (key variable names, base URL addresses) are the seats' own, reused here.
 */
export function checkSeat(seat: SeatRef, role: "worker" | "orchestrator"): SeatProblem[] {
  const problems: SeatProblem[] = [];
  const add = (field: string, message: string, severity: Problem["severity"] = "error") =>
    problems.push({ segments: [field], message, severity });
  if (seat.backend === "builtin" || seat.backend === "mock") {
    for (const field of ["model", "base_url", "api_key_env"] as const) {
      if (seat[field] !== undefined)
        add(field, `a ${seat.backend} seat runs without a model and ignores ${field}`, "warning");
    }
    return problems;
  }
  if ((seat.backend === "openai-compatible" || seat.backend === "anthropic") && !seat.model) {
    add("model", `a ${seat.backend} ${role} seat needs a model`);
  }
  if (seat.api_key_env !== undefined) {
    const verdict = checkApiKeyName(seat.api_key_env);
    if (verdict.refusal !== undefined) add("api_key_env", verdict.refusal);
    if (verdict.notice !== undefined) add("api_key_env", verdict.notice, "warning");
  }
  if (seat.base_url !== undefined) {
    const refusal = checkBaseUrl(seat.base_url, seat.is_local === true);
    if (refusal !== undefined) add("base_url", refusal);
  } else if (seat.is_local) {
    add("is_local", "is_local: true requires a loopback base_url, and none is set");
  }
  return problems;
}
