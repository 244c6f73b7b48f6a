import { type CharterGoal, parseCharter } from "./charter-goal.ts";
import type { ExploreFinding, ExploreRunFile, ExploreStep, RunFileWriter } from "./run-file.ts";
import type { StepCaller } from "./step-caller.ts";
import { shouldStop } from "./stop-rules.ts";
import { completeForm } from "./walk-form.ts";
import { expectText, followLinks, openPage, reachPage } from "./walk-pages.ts";
import type { MoveOutcome, WalkState } from "./walk-state.ts";

// A deterministic walker for the builtin seat: it turns a charter into a short plan of charter-sized moves
// (open the entry page, find a way to the page, check what it shows, complete the form) and walks it with
// the guarded browser step tools. The stop rules are asked before every move, and every move and finding is
// on disk before the next one starts.

interface Move {
  title: string;
  run(state: WalkState): Promise<MoveOutcome>;
}

export interface WalkOptions {
  charter: string;
  persona: string;
  /** The path the walk starts from (the profile's ui.entry, else "/"). */
  entry: string;
  call: StepCaller;
  writer: RunFileWriter;
  signal?: AbortSignal;
  onStep?(step: ExploreStep, finding: ExploreFinding | undefined): void;
}

export async function walkCharter(options: WalkOptions): Promise<ExploreRunFile> {
  const { writer } = options;
  const state: WalkState = {
    call: options.call,
    persona: options.persona,
    entry: options.entry,
    url: undefined,
  };
  const moves = planMoves(parseCharter(options.charter), options.entry, options.persona);
  for (const move of moves) {
    if (options.signal?.aborted) return writer.end("interrupted");
    const decision = shouldStop(writer.run, writer.elapsedMinutes());
    if (decision.stop) return writer.end(decision.reason);
    // Once the target stopped answering, a page move would only fail on a chrome error page and be
    // misread as a missing locator; it is recorded as what it is.
    const outcome: MoveOutcome = state.unreachable
      ? {
          status: "blocked",
          code: "ENVIRONMENT_UNAVAILABLE",
          detail: `the target did not answer: ${state.unreachable}`,
        }
      : await move.run(state).catch(
          (error: unknown): MoveOutcome => ({
            status: "failed",
            detail: `the walker failed: ${error instanceof Error ? error.message : String(error)}`,
          }),
        );
    const repro = [...writer.run.steps.map((step) => step.title), move.title];
    const step = writer.addStep({
      title: move.title,
      status: outcome.status,
      ...(outcome.code ? { code: outcome.code } : {}),
      ...(outcome.detail ? { detail: outcome.detail } : {}),
    });
    let finding: ExploreFinding | undefined;
    if (outcome.finding) {
      finding = { ...outcome.finding, repro, step: step.index };
      writer.addFinding(finding);
    }
    options.onStep?.(step, finding);
  }
  const run = writer.run;
  return writer.end(run.steps.every((step) => step.status === "passed") ? "goal-reached" : "plan-complete");
}

/** The moves a charter asks for, in the order a person would make them. */
export function planMoves(goal: CharterGoal, entry: string, persona: string): Move[] {
  const moves: Move[] = [
    { title: `open the entry page (${entry}) as ${persona}`, run: (state) => openPage(state, entry) },
  ];
  if (goal.page) {
    const page = goal.page;
    moves.push({ title: `find a way to ${page.words ?? page.path}`, run: (state) => reachPage(state, page) });
  }
  for (const text of goal.texts) {
    moves.push({ title: `check that the page shows "${text}"`, run: (state) => expectText(state, text) });
  }
  if (goal.form) {
    const subject = goal.form.subject;
    moves.push({ title: `complete the ${subject} form`, run: (state) => completeForm(state, subject) });
  }
  if (!goal.page && goal.texts.length === 0 && !goal.form) {
    moves.push({ title: "follow the links the entry page offers", run: (state) => followLinks(state) });
  }
  return moves;
}
