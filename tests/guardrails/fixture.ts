import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import type { AgentConfig } from "../../src/config/agent-schema.ts";
import { AgentConfigSchema } from "../../src/config/agent-schema.ts";
import { SystemConfigSchema } from "../../src/config/system-schema.ts";
import type { GuardedAction, GuardRule } from "../../src/guardrails/actions.ts";
import { checkAction } from "../../src/guardrails/check.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { GuardState, LoadedTarget } from "../../src/tools/context.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { fakeRunContext } from "../support/fake-run-context.ts";

// A real target tree on disk for the guardrail tests: symbolic links that leave it, one that stays
// inside, a dangling one, an answer key, a migrations folder and a failing test to keep immutable.

export interface Fixture {
  base: string;
  root: string;
  outside: string;
  goldenLedger: string;
  cleanup(): void;
}

export function createFixture(): Fixture {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-guard-"));
  const root = path.join(base, "target");
  const outside = path.join(base, "outside");
  const goldenLedger = path.join(base, "answers", "seeded.yaml");
  const write = (file: string, content = "x\n") => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  };
  write(path.join(root, "src", "app.ts"), "export const app = 1;\n");
  write(path.join(root, "src", "a.ts"));
  write(path.join(root, "src", "b.ts"));
  write(path.join(root, "tests", "qaas", "existing.test.ts"));
  write(path.join(root, "tests", "repro", "failing.test.ts"));
  write(path.join(root, "db", "migrations", "001.sql"));
  write(path.join(root, "defects.yaml"), "defects: []\n");
  write(path.join(outside, "secret.ts"));
  write(goldenLedger, "defects: []\n");
  const qaas = path.join(root, "tests", "qaas");
  fs.symlinkSync(outside, path.join(qaas, "escape"));
  fs.symlinkSync(path.join(outside, "secret.ts"), path.join(qaas, "leak.ts"));
  fs.symlinkSync(path.join(outside, "created-through-link.ts"), path.join(qaas, "dangling.ts"));
  fs.symlinkSync(path.join("..", "..", "src"), path.join(qaas, "to-src"));
  fs.symlinkSync(path.join("..", "repro", "failing.test.ts"), path.join(qaas, "failing-link.ts"));
  fs.symlinkSync(goldenLedger, path.join(root, "notes.yaml"));
  return {
    base,
    root,
    outside,
    goldenLedger,
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

export function loadedTarget(
  fixture: Fixture,
  environment: Record<string, unknown> = { mode: "external", base_url: "http://127.0.0.1:4000" },
): LoadedTarget {
  return {
    profile: TargetProfileSchema.parse({ name: "fixture", source: { path: "target" }, environment }),
    file: path.join(fixture.base, "fixture.yaml"),
    root: fixture.root,
    goldenLedger: fixture.goldenLedger,
  };
}

const GIT_TOOLS = [
  "read_file",
  "write_file",
  "git_branch",
  "git_commit",
  "git_push",
  "shell",
  "open_pull_request",
];

export const REPRODUCER: AgentConfig = AgentConfigSchema.parse({
  name: "REPRODUCER",
  description: "reproduces one finding as a failing test",
  layer: "triage",
  phase: "reproduce",
  cardinality: "per_finding",
  tools: GIT_TOOLS,
  policy: { write_paths: ["tests/qaas/**"], branch_patterns: ["qa/repro/*"] },
});

export const FIXER: AgentConfig = AgentConfigSchema.parse({
  name: "FIXER",
  description: "proposes the minimal fix",
  layer: "remediate",
  phase: "verify",
  cardinality: "per_ticket",
  tools: [...GIT_TOOLS, "merge_branch"],
  policy: {
    write_paths: ["**"],
    branch_patterns: ["fix/*"],
    diff_budget: { files: 2, lines: 50 },
    immutable_test: true,
  },
});

export const TRIAGE: AgentConfig = AgentConfigSchema.parse({
  name: "TRIAGE",
  description: "files tickets",
  layer: "triage",
  phase: "file",
  tools: ["read_file", "ticket_create", "http_request"],
  policy: { may_file_tickets: true },
});

/** Branch patterns that would allow anything: protected branches must still be refused. */
export const RECKLESS: AgentConfig = AgentConfigSchema.parse({
  name: "RECKLESS",
  description: "declares patterns that match every branch",
  layer: "remediate",
  phase: "verify",
  policy: { write_paths: ["**"], branch_patterns: ["*", "**"] },
});

export const SYSTEM = SystemConfigSchema.parse({
  version: 1,
  run_modes: { nightly: { roster: ["MAPPER"] } },
  thresholds: {},
  loop: {},
  seats: { worker: { backend: "builtin" }, orchestrator: { backend: "rules" } },
  ticket_cap: 2,
  forbidden_paths: {
    migrations: ["**/migrations/**"],
    auth: ["**/auth/**"],
    secrets: ["**/.env", "**/*.pem"],
    ci: [".github/workflows/**"],
  },
  forbidden_commands: ["npm publish"],
});

/** A tool context for `agent` on the fixture target, with the given guard counters. */
export function contextFor(
  agent: AgentConfig,
  target: LoadedTarget | undefined,
  guard: Partial<GuardState> = {},
): FakeRunContext {
  const context = fakeRunContext({ agent, ...(target ? { target } : {}) });
  fs.rmSync(context.artifactsDir, { recursive: true, force: true });
  context.system = SYSTEM;
  context.guard = { ticketsFiled: 0, filesChanged: new Map(), ...guard };
  return context;
}

export interface Row {
  name: string;
  agent: AgentConfig;
  action: GuardedAction;
  expected: "allowed" | GuardRule;
  guard?: Partial<GuardState>;
  target?: LoadedTarget;
}

export const write = (file: string, changedLines = 1): GuardedAction => ({
  kind: "write_file",
  path: file,
  changedLines,
});

/** Judges a row's action and asserts the exact decision: allowed, or denied by the expected rule. */
export function expectRow(row: Row, target: LoadedTarget): void {
  const context = contextFor(row.agent, row.target ?? target, row.guard);
  const decision = checkAction(row.agent, row.action, context);
  if (row.expected === "allowed") {
    expect(decision).toEqual({ allowed: true });
    return;
  }
  expect(decision).toMatchObject({ allowed: false, rule: row.expected });
  if (!decision.allowed) {
    // Every refusal is a full sentence naming the agent, what was refused and what to do instead.
    expect(decision.reason).toMatch(new RegExp(`^${row.agent.name} may not `));
    expect(decision.reason.length).toBeGreaterThan(60);
    expect(decision.reason.trim().endsWith(".")).toBe(true);
  }
}
