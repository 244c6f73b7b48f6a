/** What caps work in flight: `acquire` resolves once a slot is free and answers how to give it back. */
export interface Limiter {
  acquire(): Promise<() => void>;
  /**
   * Several slots at the same moment (at most the limit), for requests that must reach the target
   * together: taken one by one, a burst behind other work leaves one at a time and races nothing.
   */
  acquireMany?(count: number): Promise<Array<() => void>>;
}

/** A counting semaphore: at most `limit` holders at once, served in arrival order. */
export class Semaphore implements Limiter {
  private active = 0;
  private readonly waiting: Array<{ need: number; resolve: () => void }> = [];

  constructor(readonly limit: number) {}

  async acquire(): Promise<() => void> {
    const [release] = await this.acquireMany(1);
    return release!;
  }

  /** `count` slots at once (capped at the limit); later arrivals wait behind them, so a group is not starved. */
  async acquireMany(count: number): Promise<Array<() => void>> {
    const need = Math.max(1, Math.min(count, this.limit));
    if (this.waiting.length === 0 && this.active + need <= this.limit) this.active += need;
    else await new Promise<void>((resolve) => this.waiting.push({ need, resolve }));
    return Array.from({ length: need }, () => this.releaser());
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      // Whoever waits first is served first, a group once enough slots are free together.
      for (
        let next = this.waiting[0];
        next && this.active + next.need <= this.limit;
        next = this.waiting[0]
      ) {
        this.waiting.shift();
        this.active += next.need;
        next.resolve();
      }
    };
  }
}

/**
 * The limiter kept under `key` in a run's shared map: a semaphore of `limit` holders made on first use,
 * unless whoever set the run up put another there first (a queue worker puts one that holds across workers).
 */
export function sharedLimiter(shared: Map<string, unknown>, key: string, limit: number): Limiter {
  let limiter = shared.get(key) as Limiter | undefined;
  if (!limiter) {
    limiter = new Semaphore(limit);
    shared.set(key, limiter);
  }
  return limiter;
}

/** Runs `task` over `items` with at most `limit` in flight, keeping the order of results. */
export async function mapConcurrent<Item, Result>(
  items: readonly Item[],
  limit: number,
  task: (item: Item, index: number) => Promise<Result>,
): Promise<Result[]> {
  const results = new Array<Result>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await task(items[index]!, index);
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, () => worker());
  await Promise.all(workers);
  return results;
}

export interface InOrderOptions<Item, Result> {
  /** Items worked on at once. */
  width: number;
  /** Items started at most (an item whose `work` answers undefined did nothing and does not count). */
  cap: number;
  /** Checked before each start: false starts nothing more (a deadline, an abort). */
  mayStart?: () => boolean;
  /** The work on one item; `stop` aborts once nothing started will be used. */
  work: (item: Item, stop: AbortSignal) => Promise<Result | undefined>;
  /**
   * Called with each item's result in the items' order, whichever finished first; answering true stops:
   * nothing more starts and later results are dropped.
   */
  decide: (item: Item, result: Result) => Promise<boolean>;
}

/**
 * Works on `items` in their order, `width` at a time, and decides on each result in that order: what is
 * decided never depends on which item finished first. Answers how many items were started (and counted).
 */
export async function workInOrder<Item, Result>(
  items: readonly Item[],
  options: InOrderOptions<Item, Result>,
): Promise<number> {
  const stop = new AbortController();
  const results = new Map<number, Promise<Result | undefined>>();
  const running = new Set<Promise<unknown>>();
  let next = 0;
  let counted = 0;
  let reserved = 0;
  let wake: () => void = () => {};
  const mayStart = () =>
    !stop.signal.aborted && counted + reserved < options.cap && (options.mayStart?.() ?? true);
  const fill = (): void => {
    while (running.size < options.width && next < items.length && mayStart()) {
      const index = next;
      next += 1;
      // Reserved until the work answers whether it counted: a cap of 15 never starts a 16th.
      reserved += 1;
      const result = options
        .work(items[index]!, stop.signal)
        .catch(() => undefined)
        .then((value) => {
          reserved -= 1;
          if (value !== undefined) counted += 1;
          return value;
        });
      results.set(index, result);
      const tracked = result.finally(() => {
        running.delete(tracked);
        fill();
        wake();
      });
      running.add(tracked);
    }
  };
  try {
    fill();
    for (let index = 0; index < items.length; index += 1) {
      // An item not started yet may still start once a running one frees its place.
      while (!results.has(index) && running.size > 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      const result = results.get(index);
      if (!result) break;
      const value = await result;
      results.delete(index);
      if (value !== undefined && (await options.decide(items[index]!, value))) break;
    }
  } finally {
    stop.abort();
    await Promise.allSettled([...running]);
  }
  return counted;
}
