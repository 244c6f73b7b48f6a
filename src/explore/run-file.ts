import fs from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../store/atomic-write.ts";
import type { ClampedValue, ExploreBudget } from "./budget.ts";
import { refuseCredentials } from "./credential-text.ts";
import type { StepCode } from "./step-codes.ts";

// The run file is the whole record of an exploratory run, rewritten in full after every step and every
// finding. A crash (or a killed browser) therefore loses at most the step in flight, and anything reading
// the file mid-run sees a complete, parseable document: the write goes to a temp file renamed over it.

export const RUN_FILE_NAME = "run.json";

export type StepStatus = "passed" | "failed" | "blocked" | "exhausted";

export type StopReason = "step-limit" | "time" | "tokens" | "stuck";

/** Why the run ended: a stop rule, the walker reaching the end of its plan, or an interruption. */
export type EndReason = StopReason | "goal-reached" | "plan-complete" | "interrupted" | "target-unreachable";

export interface ExploreStep {
  index: number;
  /** Charter-sized: "open the entry page and find a way to Settings", not "click a link". */
  title: string;
  status: StepStatus;
  /** Set when the step did not pass; decides how it counts (step-codes.ts). */
  code?: StepCode;
  detail?: string;
  /** Path or artifact URI of a trace of this step, when one was taken. */
  trace?: string;
}

export const EVIDENCE_KINDS = ["screenshot", "ui-tree", "video", "trace", "log", "text"] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

export interface Evidence {
  kind: EvidenceKind;
  path: string;
}

/**
 * The exact check a finding failed, when a deterministic one decided it: enough to generate a repro test
 * that asserts the same thing (a bug bash confirms a candidate only through such a test).
 */
export type FindingCheck =
  | { kind: "page-status"; page: string; status: number }
  | { kind: "text-shown"; page: string; text: string }
  | { kind: "form-submit"; page: string; fields: string[]; button: string; status: number };

export interface ExploreFinding {
  kind: "issue" | "warning";
  /** 1 trivial … 5 critical. */
  severity: number;
  title: string;
  screen: string;
  expected: string;
  /** A quote of the specification the expectation comes from, when there is one. */
  spec?: string;
  observed: string;
  repro: string[];
  evidence: Evidence[];
  /** Index of the step that reported it. */
  step: number;
  check?: FindingCheck;
}

export interface ExploreUsage {
  steps: number;
  minutes: number;
  tokens: number;
}

export interface ExploreRunFile {
  goal: string;
  platform: "web";
  persona: string;
  budget: ExploreBudget;
  clamped: ClampedValue[];
  usage: ExploreUsage;
  ended?: { reason: EndReason; at: string };
  steps: ExploreStep[];
  /** As reported; a finding that misses fields is kept here and judged by the report (finding-contract.ts). */
  findings: ExploreFinding[];
}

export function newRunFile(parts: {
  goal: string;
  persona: string;
  budget: ExploreBudget;
  clamped: ClampedValue[];
}): ExploreRunFile {
  return {
    goal: parts.goal,
    platform: "web",
    persona: parts.persona,
    budget: parts.budget,
    clamped: parts.clamped,
    usage: { steps: 0, minutes: 0, tokens: 0 },
    steps: [],
    findings: [],
  };
}

/**
 * Keeps one run file on disk in step with the run: every change (a step, a finding, usage, the end) is
 * written before the call returns. `now` is injectable so tests can drive the clock.
 */
export class RunFileWriter {
  readonly file: string;
  readonly #run: ExploreRunFile;
  readonly #startedAt: number;
  readonly #now: () => number;

  constructor(runDir: string, run: ExploreRunFile, now: () => number = Date.now) {
    this.file = path.join(runDir, RUN_FILE_NAME);
    this.#run = run;
    this.#now = now;
    this.#startedAt = now();
    this.#write();
  }

  /** The run as it stands (a copy: only the writer's methods change the file). */
  get run(): ExploreRunFile {
    return structuredClone(this.#run);
  }

  /** Minutes since the run started, as a fraction (the time rule compares it with the budget). */
  elapsedMinutes(): number {
    return (this.#now() - this.#startedAt) / 60_000;
  }

  addStep(step: Omit<ExploreStep, "index">): ExploreStep {
    const recorded: ExploreStep = { index: this.#run.steps.length + 1, ...step };
    this.#run.steps.push(recorded);
    this.#run.usage.steps = this.#run.steps.length;
    this.#refreshMinutes();
    this.#write();
    return recorded;
  }

  /**
   * Records a finding the moment it is known (its evidence is already on disk). One carrying a literal
   * credential is refused before anything is written, so the secret never reaches the file.
   */
  addFinding(finding: ExploreFinding): void {
    refuseCredentials(finding);
    this.#run.findings.push(finding);
    this.#refreshMinutes();
    this.#write();
  }

  addTokens(tokens: number): void {
    this.#run.usage.tokens += Math.max(0, Math.round(tokens));
    this.#write();
  }

  end(reason: EndReason): ExploreRunFile {
    this.#run.ended = { reason, at: new Date(this.#now()).toISOString() };
    this.#refreshMinutes();
    this.#write();
    return this.run;
  }

  #refreshMinutes(): void {
    this.#run.usage.minutes = Math.round(this.elapsedMinutes() * 100) / 100;
  }

  #write(): void {
    writeFileAtomic(this.file, `${JSON.stringify(this.#run, null, 2)}\n`);
  }
}

/** Reads a run file back (the report and tests read what is on disk, not what is in memory). */
export function readRunFile(file: string): ExploreRunFile {
  return JSON.parse(fs.readFileSync(file, "utf8")) as ExploreRunFile;
}
