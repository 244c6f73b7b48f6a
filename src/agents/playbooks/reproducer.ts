import type { DefectEnvelope } from "../../envelope/envelope.ts";
import { definePlaybook, type PlaybookSession } from "../playbook.ts";

// REPRODUCER without a model, one finding per invocation: on a target reset once for the phase, run the
// finding's generated test three times in one process. It reproduced when every run failed on the same
// assertion of the test itself; mixed results are flaky (the rate is kept); a test that passes, or fails
// before it reaches its own assertions, did not reproduce the finding. Only reproduced findings stay fileable.

const RUNS = 3;

interface Series {
  command: string;
  recorded_path: string;
  test_artifact: string;
  times: number;
  failed: number;
  flake_rate: number;
  same_reason: boolean;
  own_assertion: boolean;
  reasons: string[];
  runs: Array<{ output_artifact: string; failure?: string; timed_out: boolean }>;
}

type Status = "reproduced" | "flaky" | "not_reproduced" | "untestable";

/** The outcome of three runs, and why, in words a person reads on the held finding. */
export function classify(
  series: Series,
  finding?: Pick<DefectEnvelope, "reproduction">,
  resetDone = true,
): { status: Status; notes: string } {
  const { failed, times } = series;
  if (failed === 0 && finding?.reproduction.needs_probe_data) {
    // Its probe measured it on data the reset removed: the pass says the data is gone, not the defect.
    return {
      status: "untestable",
      notes: `the test passed all ${times} runs, but it measures data its probe created and the reset removed: the finding stands on the probe's measurements`,
    };
  }
  if (failed === 0) {
    return {
      status: "not_reproduced",
      notes: `the test passed all ${times} runs on ${resetDone ? "a freshly reset target" : "the target as it was (it has no reset)"}: the defect did not show`,
    };
  }
  if (failed < times) {
    return {
      status: "flaky",
      notes: `the test failed ${failed} of ${times} runs (flake rate ${series.flake_rate}): ${series.reasons.join("; ")}`,
    };
  }
  if (!series.own_assertion) {
    const why =
      series.runs.find((run) => run.failure)?.failure ??
      (series.runs[0]?.timed_out ? "timed out" : "no assertion ran");
    // The test could not judge (its sign-in or set-up broke here): that says nothing against the finding,
    // which stands on the probe's own confirmed evidence, as one without a test does.
    return {
      status: "untestable",
      notes: `the test failed ${times} of ${times} runs, but not on its own assertion (${why}): set-up, sign-in or the environment failed, not the behaviour under test`,
    };
  }
  if (!series.same_reason) {
    return {
      status: "not_reproduced",
      notes: `the test failed every run but on different assertions (${series.reasons.join("; ")}), so no one reason is proven`,
    };
  }
  return { status: "reproduced", notes: `failed ${times} of ${times} runs on: ${series.reasons[0]}` };
}

export default definePlaybook(async (session) => {
  const findingId = String(session.task.finding_id ?? "");
  const finding = await findingOf(session, findingId);
  if (!finding) return;
  if (!finding.reproduction.test) {
    await session.call("record_reproduction", {
      finding_id: findingId,
      reproduced: false,
      status: "untestable",
      flake_rate: 0,
      notes:
        "no generated test to run: the finding stands on its other evidence (a static or source finding)",
    });
    return;
  }

  // One reset for the whole phase: a reset per finding would cost more than the tests themselves.
  const reset = await session.call("reset", { once: "reproduce" });
  if (!reset.ok) session.log(`reset: ${reset.error} (running on the target as it is)`);
  if (session.task.mode === "bug-bash" && (await verifyCandidate(session, findingId))) return;

  const answer = await session.call<Series>("run_n_times", { finding_id: findingId, times: RUNS });
  if (!answer.ok) {
    await session.call("record_reproduction", {
      finding_id: findingId,
      reproduced: false,
      status: "untestable",
      flake_rate: 0,
      notes: `the test could not be run: ${answer.error}`,
    });
    return;
  }
  const series = answer.data;
  const { status, notes } = classify(series, finding, reset.ok);
  const branch = status === "reproduced" ? await commitTest(session, findingId, series) : undefined;
  await session.call("record_reproduction", {
    finding_id: findingId,
    reproduced: status === "reproduced",
    status,
    flake_rate: series.flake_rate,
    output_artifact: series.runs[0]?.output_artifact,
    ...(branch
      ? { test: { path: series.recorded_path, command: `node --test ${series.recorded_path}`, branch } }
      : {}),
    notes,
  });
  session.log(`${findingId}: ${status} — ${notes}`);
});

interface CandidateVerdict {
  candidate: string;
  status: "confirmed" | "rejected";
  reason?: string;
  note: string;
  failed: number;
  runs: number;
  output_artifact: string | null;
}

/**
 * A bug-bash candidate is confirmed only when its repro test fails on the assertion that encodes it; the
 * tool decides and records it, and the reproduction follows that decision. False for a finding that is
 * not a candidate, which is then reproduced like any other.
 */
async function verifyCandidate(session: PlaybookSession, findingId: string): Promise<boolean> {
  const verdict = await session.call<CandidateVerdict>("verify_candidate", {
    finding_id: findingId,
    times: RUNS,
  });
  if (!verdict.ok) {
    session.log(`${findingId}: ${verdict.error}`);
    return false;
  }
  const { candidate, status, reason, note, failed, runs } = verdict.data;
  const confirmed = status === "confirmed";
  await session.call("record_reproduction", {
    finding_id: findingId,
    reproduced: confirmed,
    status: confirmed ? "reproduced" : "not_reproduced",
    flake_rate: failed > 0 && failed < runs ? Math.min(failed, runs - failed) / runs : 0,
    ...(verdict.data.output_artifact ? { output_artifact: verdict.data.output_artifact } : {}),
    notes: `bug bash ${candidate}: ${confirmed ? "confirmed" : `rejected (${reason})`}: ${note}`,
  });
  session.log(`${findingId}: ${candidate} ${confirmed ? "confirmed" : `rejected (${reason})`}: ${note}`);
  return true;
}

async function findingOf(session: PlaybookSession, findingId: string): Promise<DefectEnvelope | undefined> {
  const given = session.task.finding as DefectEnvelope | undefined;
  if (given?.id === findingId) return given;
  const read = await session.call<DefectEnvelope>("get_finding", { id: findingId });
  if (read.ok) return read.data;
  session.log(`no finding to reproduce: ${read.error}`);
  return undefined;
}

/**
 * Commits the stored test on `qa/repro/<finding>` when the profile asks for reproduction branches; the
 * stored artifact stays the proof either way. Answers the branch, or undefined when none was made.
 */
async function commitTest(
  session: PlaybookSession,
  findingId: string,
  series: Series,
): Promise<string | undefined> {
  const target = session.task.target as { repro_branches?: boolean; has_source?: boolean } | null;
  if (!target?.repro_branches || !target.has_source) return undefined;
  const branch = `qa/repro/${findingId}`;
  const steps: Array<[string, unknown]> = [
    ["create_branch", { branch }],
    ["write_file", { branch, path: series.recorded_path, from_artifact: series.test_artifact }],
    ["commit", { branch, message: `Failing test for ${findingId}: ${series.reasons[0] ?? "reproduced"}` }],
  ];
  for (const [tool, input] of steps) {
    const result = await session.call(tool, input);
    if (!result.ok) {
      session.log(`${tool}: ${result.error} (the test stays a run artifact)`);
      return undefined;
    }
  }
  return branch;
}
