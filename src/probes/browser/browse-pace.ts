import { availableParallelism, loadavg } from "node:os";

// How busy the browser's world is right now, read from how long its pages take to load and from how many
// processes compete for this machine's cores. The browser's passes are bounded in time so they end with
// the other discovery agents; on a machine running several runs at once (or against a slow target) a page
// costs ten times what it costs idle, and a fixed bound would leave most pages unopened. Their bounds
// stretch with the loads they see instead, within a cap.
//
// Document loads alone under-read a busy machine: a small page still arrives within a second or two while
// the work on it (scripts, an accessibility scan, clicks and their watches) waits for a core. The load
// average per core says that directly: 1 is every core busy, 3 is three processes for each. A run keeps
// about two per core busy on its own (qaas, the target, the browser), so stretching starts past that.

/** A page that loads within this is an idle page: no stretch. */
const IDLE_LOAD_MS = 2000;
/** A pass never takes longer than this multiple of its idle bound. */
export const MAX_STRETCH = 3;
/** The recent loads the stretch is read from. */
const WINDOW = 9;
/** Runnable processes per core a run causes by itself: no stretch up to this. */
const OWN_LOAD_PER_CORE = 2;

/** Runnable processes per core over the last minute (Linux and macOS; 0 where the OS does not say). */
export function loadPerCore(load = loadavg()[0] ?? 0, cores = availableParallelism()): number {
  return load / Math.max(1, cores);
}

export class BrowsePace {
  private readonly recent: number[] = [];

  constructor(private readonly machineLoad: () => number = loadPerCore) {}

  /** One document load, in ms (a load that failed says nothing about pace and is not recorded). */
  record(loadMs: number): void {
    this.recent.push(loadMs);
    if (this.recent.length > WINDOW) this.recent.shift();
  }

  /**
   * 1 while pages load as fast as idle ones on a machine no busier than a run makes it, up to MAX_STRETCH
   * as the median recent load or the load per core grows.
   */
  stretch(): number {
    const sorted = [...this.recent].sort((a, b) => a - b);
    const median = sorted.length === 0 ? 0 : (sorted[Math.floor(sorted.length / 2)] as number);
    return Math.min(MAX_STRETCH, Math.max(1, median / IDLE_LOAD_MS, this.machineLoad() / OWN_LOAD_PER_CORE));
  }

  /** When a pass that started at `started` with an idle bound of `boundMs` ends, as of now. */
  deadline(started: number, boundMs: number): number {
    return started + boundMs * this.stretch();
  }
}
