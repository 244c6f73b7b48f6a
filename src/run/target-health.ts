import type { TargetLiveness } from "../probes/http/liveness.ts";
import type { RunStore } from "../store/run-store.ts";
import type { RunContext } from "../tools/context.ts";
import type { Progress } from "./progress.ts";

// The run-level account of a target that stopped answering: how much of the run it cost. Each death was
// noted when it happened (target_down); this adds what followed, once the probes have finished.

/** Records and prints how many probes met a target that was down for good; silent when none did. */
export function noteSkippedProbes(context: RunContext, store: RunStore, progress: Progress): void {
  for (const [key, value] of context.shared) {
    if (!key.startsWith("http:liveness:")) continue;
    const liveness = value as TargetLiveness;
    const last = liveness.deaths.at(-1);
    if (!last || !liveness.down) continue;
    const after = last.culprit ?? last.suspects[0];
    const message =
      `target stopped answering at ${last.at}` +
      (after ? ` after ${after.request.method} ${new URL(after.request.url).pathname}` : "") +
      `; ${liveness.skippedCalls} probe(s) skipped (${liveness.skippedRequests} request(s) not sent)` +
      (liveness.restarts > 0 ? ` after ${liveness.restarts} restart(s)` : "");
    store.append("target_down", {
      at: last.at,
      final: true,
      skipped_probes: liveness.skippedCalls,
      skipped_requests: liveness.skippedRequests,
      restarts: liveness.restarts,
      deaths: liveness.deaths.length,
      message,
    });
    progress.line(message);
  }
}
