// A browser call that may never answer: a renderer stuck in a page's endless loop answers no `evaluate`,
// and a probe awaiting it would hold its agent, and the run, until the agent's own timeout.

/** `call`'s answer, or `fallback` once `ms` passed (or when it fails). */
export async function boundedCall<T>(call: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      call.catch(() => fallback),
      new Promise<T>((resolve) => {
        timer = setTimeout(() => resolve(fallback), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a DOM read or a tab's closing may take; a healthy page answers in milliseconds. */
export const EVALUATE_MS = 5000;
