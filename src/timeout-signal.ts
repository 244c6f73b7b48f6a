// A signal that aborts with a TimeoutError after `ms`, and with the caller's signal when one is given (a
// request that also follows the run's abort). Not `AbortSignal.timeout`: Node 20 holds that signal only
// weakly, and inside `AbortSignal.any` it can be garbage-collected before it fires (nodejs/node#57736), so
// a target or model that never answers would hold the run. Here the timer owns its controller; it is
// unref'd so it keeps no process alive, and firing after the request settled changes nothing.

export function timeoutSignal(ms: number, follow?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  timer.unref();
  return follow ? AbortSignal.any([follow, controller.signal]) : controller.signal;
}
