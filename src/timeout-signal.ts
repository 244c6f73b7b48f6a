// A signal that aborts with a TimeoutError after `ms`, and with the caller's signal when one is given (a
// request that also follows the run's abort). Not `AbortSignal.timeout`: Node 20 holds that signal only
// weakly, and inside `AbortSignal.any` it can be garbage-collected before it fires (nodejs/node#57736), so
// a target or model that never answers would hold the run. Here the timer owns its controller; it is
// unref'd so it keeps no process alive, and firing after the request settled changes nothing.
//
// A timer that fires late means the event loop was held (a synchronous step elsewhere in the process: a
// source scan, a large parse). Answers that arrived meanwhile wait behind expired timers, so aborting then
// would call a prompt answer a timeout; the request gets a short grace in which they are read first.

/** How late a timer must fire to say the loop was held rather than busy. */
const LOOP_HELD_MS = 250;
/** The grace after a held loop: a few turns of the loop to read what arrived. */
const HELD_LOOP_GRACE_MS = 1_000;

export function timeoutSignal(ms: number, follow?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const abort = () =>
    controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  const due = performance.now() + ms;
  const timer = setTimeout(() => {
    if (performance.now() - due > LOOP_HELD_MS) setTimeout(abort, HELD_LOOP_GRACE_MS).unref();
    else abort();
  }, ms);
  timer.unref();
  return follow ? AbortSignal.any([follow, controller.signal]) : controller.signal;
}
