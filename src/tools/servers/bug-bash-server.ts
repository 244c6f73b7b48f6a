import path from "node:path";
import { z } from "zod";
import { resolveBudget } from "../../explore/budget.ts";
import { candidateEnvelope, markersOf } from "../../explore/bug-bash/candidate-test.ts";
import { type Candidate, type CharterSession, mergeCandidates } from "../../explore/bug-bash/candidates.ts";
import { type Charter, deriveCharters, parseGivenCharter } from "../../explore/bug-bash/charters.ts";
import { judgeCandidate } from "../../explore/bug-bash/confirm.ts";
import { walkCharter } from "../../explore/charter-walker.ts";
import { newRunFile, RunFileWriter, readRunFile } from "../../explore/run-file.ts";
import { guardedStepCaller } from "../../explore/step-caller.ts";
import { verdictOf } from "../../explore/verdict.ts";
import { closeTab } from "../../probes/browser/agent-tab.ts";
import { browserSessionFor } from "../../probes/browser/browser-session.ts";
import { RunStore } from "../../store/run-store.ts";
import type { ToolContext } from "../context.ts";
import { err, ok } from "../result.ts";
import { findingTestOf } from "../testing/finding-test.ts";
import { defineTool } from "../tool.ts";
import { runFindingTest } from "./test-runner-server.ts";

// bug_bash: the tools of a bug bash. Charters come from the run (`--charter`) or from the map; each is
// walked by the deterministic walker in a browser session of its own; the sessions' findings are merged
// into candidates; each candidate is proven only by its generated repro test failing on the assertion that
// encodes it. Every session, candidate and verdict is a ledger entry, so the report reads facts.

const DEFAULT_BOUNDS = { max: 4, parallel: 2, steps: 6, minutes: 5 };

function ledgerOf(context: ToolContext) {
  return RunStore.open(context.home, context.runId).readLedger().entries;
}

/** The run's mode and the charters given to it, as `run_started` recorded them. */
function runStart(context: ToolContext): { mode: string; charters: string[] } {
  const started = ledgerOf(context).find((entry) => entry.kind === "run_started")?.data ?? {};
  const charters = Array.isArray(started.charters) ? started.charters.map(String) : [];
  return { mode: String(started.mode ?? ""), charters };
}

function personasOf(context: ToolContext): string[] {
  const roles = (context.target?.profile.users ?? []).map((user) => user.role);
  return ["anonymous", ...new Set(roles.filter((role) => role !== "anonymous"))];
}

const listCharters = defineTool({
  name: "list_charters",
  server: "bug_bash",
  description:
    "The bug bash's charters (persona + scope): the ones given to the run with --charter, else one per persona and area of the system map. Answers them with the session bounds (how many at once, steps and minutes each).",
  input: z.strictObject({}),
  async run(_input, context) {
    const { mode, charters: given } = runStart(context);
    const bounds = { ...DEFAULT_BOUNDS, ...context.system.run_modes[mode]?.charters };
    const personas = personasOf(context);
    const charters: Charter[] =
      given.length > 0
        ? given.slice(0, 12).map((text, index) => parseGivenCharter(text, index, personas))
        : deriveCharters(context.systemMap(), personas, bounds.max);
    return ok({ charters, parallel: bounds.parallel, steps: bounds.steps, minutes: bounds.minutes });
  },
});

const walkCharterTool = defineTool({
  name: "walk_charter",
  server: "bug_bash",
  description:
    "Walk one charter as a persona in a browser session of its own (parallel calls never share a page), within a step and minute budget. Writes the session's run file, records it in the ledger, and answers its verdict and findings.",
  input: z.strictObject({
    id: z.string().regex(/^C\d+$/),
    persona: z.string().min(1).max(100),
    charter: z.string().min(1).max(500),
    steps: z.number().int().positive().optional(),
    minutes: z.number().int().positive().optional(),
  }),
  async run(input, context) {
    const { budget, clamped } = resolveBudget({
      ...(input.steps ? { steps: input.steps } : {}),
      ...(input.minutes ? { minutes: input.minutes } : {}),
    });
    const folder = path.join(context.home, "runs", context.runId, "bug-bash", input.id);
    const writer = new RunFileWriter(
      folder,
      newRunFile({ goal: input.charter, persona: input.persona, budget, clamped }),
    );
    const session: ToolContext = { ...context, session: input.id };
    let run: Awaited<ReturnType<typeof walkCharter>>;
    try {
      run = await walkCharter({
        charter: input.charter,
        persona: input.persona,
        entry: context.target?.profile.ui?.entry ?? "/",
        call: guardedStepCaller(session, `${context.agent.name.toLowerCase()}-${input.id}`),
        writer,
        signal: context.signal,
      });
    } finally {
      await closeTab(session);
      await browserSessionFor(context).closeSession(input.id);
    }
    const verdict = verdictOf(run);
    context.record("charter_session", {
      charter: input.id,
      persona: input.persona,
      text: input.charter,
      verdict,
      ended: run.ended?.reason ?? null,
      steps: run.steps.length,
      budget,
      findings: run.findings.length,
      run_file: path.relative(context.home, writer.file),
    });
    return ok({
      charter: input.id,
      verdict,
      ended: run.ended?.reason ?? null,
      steps: run.steps.map((step) => ({ index: step.index, status: step.status, title: step.title })),
      findings: run.findings.map((finding) => ({ title: finding.title, kind: finding.kind })),
    });
  },
});

const mergeCandidatesTool = defineTool({
  name: "merge_candidates",
  server: "bug_bash",
  description:
    "Merge the findings of every charter session of this run into candidates (BB-n). Duplicates and claims no test can check are rejected with the reason; each other candidate answers an envelope draft whose failing test is its generated repro test. Emit those drafts; REPRODUCER confirms or rejects each.",
  input: z.strictObject({}),
  async run(_input, context) {
    const sessions: CharterSession[] = [];
    for (const entry of ledgerOf(context)) {
      if (entry.kind !== "charter_session") continue;
      const data = entry.data as { charter: string; persona: string; text: string; run_file: string };
      sessions.push({
        charter: { id: data.charter, persona: data.persona, text: data.text, origin: "given" },
        run: readRunFile(path.join(context.home, data.run_file)),
      });
    }
    if (sessions.length === 0) return err("no charter session was walked in this run (walk_charter first)");
    const baseUrl = context.target?.profile.environment.base_url ?? "http://localhost";
    const answered: Array<Pick<Candidate, "id" | "status" | "reason" | "note"> & { draft?: unknown }> = [];
    for (const candidate of mergeCandidates(sessions)) {
      const built =
        candidate.status === "pending"
          ? candidateEnvelope(candidate, baseUrl, (name, content) => context.putArtifact(name, content))
          : undefined;
      context.record("bash_candidate", {
        candidate: candidate.id,
        charter: candidate.charter,
        persona: candidate.persona,
        title: candidate.finding.title,
        screen: candidate.finding.screen,
        key: candidate.key,
        status: candidate.status,
        ...(built ? { test: built.test, encodes: built.encodes } : {}),
      });
      if (candidate.status === "rejected") {
        context.record("bash_verdict", {
          candidate: candidate.id,
          status: "rejected",
          reason: candidate.reason,
          note: candidate.note ?? null,
          ...(candidate.duplicateOf ? { duplicate_of: candidate.duplicateOf } : {}),
        });
      }
      answered.push({
        id: candidate.id,
        status: candidate.status,
        ...(candidate.reason ? { reason: candidate.reason, note: candidate.note } : {}),
        ...(built ? { draft: built.draft } : {}),
      });
    }
    return ok({ candidates: answered });
  },
});

const verifyCandidate = defineTool({
  name: "verify_candidate",
  server: "bug_bash",
  description:
    "Run a bug-bash candidate's repro test N times (default 3) and decide: confirmed only when every run failed on the assertion that encodes the candidate; otherwise rejected with the reason (did-not-reproduce, artifact, environment). Records the verdict; errs for a finding that is not a bug-bash candidate.",
  input: z.strictObject({
    finding_id: z.string().min(1),
    times: z.number().int().min(1).max(5).optional(),
  }),
  actions: () => [{ kind: "shell", command: "node --test-reporter=tap qaas-repeat.mjs finding.test.mjs" }],
  async run(input, context) {
    const envelope = context.readEnvelopes().find((candidate) => candidate.id === input.finding_id);
    if (!envelope) return err(`no finding ${input.finding_id} in this run`);
    const test = findingTestOf(envelope, context);
    if (typeof test === "string") return err(test);
    const marks = markersOf(test.source);
    if (!marks)
      return err(`finding ${input.finding_id} is not a bug-bash candidate (its test carries no marks)`);
    const answer = await runFindingTest(input.finding_id, context, {
      times: input.times ?? 3,
      timeoutSeconds: 30,
      label: `bug-bash-${marks.candidate}`,
    });
    if (typeof answer === "string") return err(answer);
    const verdict = judgeCandidate(answer.runs, marks.encodes);
    const data = {
      candidate: marks.candidate,
      finding_id: input.finding_id,
      ...verdict,
      encodes: marks.encodes,
      runs: answer.runs.length,
      failed: answer.runs.filter((run) => !run.passed).length,
      test: { path: answer.recorded_path, command: answer.command, artifact: answer.test_artifact },
      output_artifact: answer.runs[0]?.output_artifact ?? null,
    };
    context.record("bash_verdict", data);
    return ok(data);
  },
});

export const bugBashTools = [listCharters, walkCharterTool, mergeCandidatesTool, verifyCandidate];
