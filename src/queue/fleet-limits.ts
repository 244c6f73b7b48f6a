import pg from "pg";
import { QaasError } from "../errors.ts";
import type { Limiter } from "../probes/http/concurrency.ts";

// The limits that protect a target while many workers work on it, kept in the queue's PostgreSQL as
// advisory locks taken on one connection per invocation. A lock lives exactly as long as the session that
// took it, so a worker that dies (SIGKILL, a lost machine) gives its share back as its connection closes,
// with no lease to wait out and nothing to clean up.
//
// - The target lock: every invocation holds it shared; an exclusive agent (LOAD, whose measurements other
//   traffic would spoil) holds it alone. PostgreSQL queues a shared request behind a waiting exclusive one,
//   so a steady stream of other invocations cannot starve it.
// - Request slots: `cap` numbered locks per target, and as many as the global cap over every target; each
//   request in flight holds one of each, so all workers together never exceed either.

/** A worker polls this often for a slot that another worker holds. */
const SLOT_POLL_MS = 25;
/** A slot handed from request to request within one worker goes back to the fleet after this long. */
const SLOT_HOLD_MS = 1000;
/** PostgreSQL's code for a statement cancelled on request. */
const QUERY_CANCELED = "57014";

export interface FleetLimitOptions {
  url: string;
  /** What identifies the target across workers and runs: its origin, else its profile's name. */
  target: string;
  exclusive: boolean;
  /** Requests in flight to this target at most, over every worker. */
  targetCap: number;
  /** Requests in flight to any target at most, over every worker; none when absent. */
  globalCap?: number;
  signal: AbortSignal;
}

/** One session's queries, sent one after another (pg no longer queues them itself). */
class Session {
  private last: Promise<unknown> = Promise.resolve();

  constructor(private readonly client: pg.Client) {}

  query<Row extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<Row[]> {
    const result = this.last.then(() => this.client.query<Row>(text, values)).then((answer) => answer.rows);
    this.last = result.catch(() => {});
    return result;
  }
}

export class FleetHold {
  private constructor(
    private readonly client: pg.Client,
    /** Caps the invocation's requests: a slot of the target's, then one of the global cap's. */
    readonly limiter: Limiter,
  ) {}

  /** Waits for the target lock (shared, or alone when `exclusive`), then answers the held limits. */
  static async enter(options: FleetLimitOptions): Promise<FleetHold> {
    const client = new pg.Client({ connectionString: options.url, keepAlive: true });
    // A dropped connection surfaces on the next query; without a listener Node would treat it as uncaught.
    client.on("error", () => {});
    try {
      await client.connect();
      await lockTarget(client, options);
      await announceHold(client, options);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    const session = new Session(client);
    const pools = [new SlotPool(session, slotScope(options.target), options.targetCap, options.signal)];
    if (options.globalCap !== undefined) {
      pools.push(new SlotPool(session, "qaas:slot:*", options.globalCap, options.signal));
    }
    return new FleetHold(client, {
      async acquire() {
        const taken: Array<() => void> = [];
        try {
          // Always the target's slot first: whoever holds a global slot holds a target slot already, so two
          // workers never wait on each other's half.
          for (const pool of pools) taken.push(await pool.take());
        } catch (error) {
          for (const give of taken) give();
          throw error;
        }
        return () => {
          for (const give of taken) give();
        };
      },
    });
  }

  /** Gives every lock back by ending the session that holds them. */
  async leave(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

async function lockTarget(client: pg.Client, options: FleetLimitOptions): Promise<void> {
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const backend = rows[0]?.pid;
  // The lock is waited for in the database, where waiting requests queue in order; a worker told to stop
  // cancels its own wait from a second connection.
  const cancel = () => {
    const canceller = new pg.Client({ connectionString: options.url });
    canceller.on("error", () => {});
    void canceller
      .connect()
      .then(() => canceller.query("SELECT pg_cancel_backend($1)", [backend]))
      .catch(() => {})
      .finally(() => canceller.end().catch(() => {}));
  };
  options.signal.addEventListener("abort", cancel, { once: true });
  try {
    await client.query(
      options.exclusive
        ? "SELECT pg_advisory_lock(hashtextextended($1, 0))"
        : "SELECT pg_advisory_lock_shared(hashtextextended($1, 0))",
      [`qaas:target:${options.target}`],
    );
  } catch (error) {
    if ((error as { code?: string }).code === QUERY_CANCELED && options.signal.aborted) {
      throw new QaasError("WORKER_STOPPED", `stopped while waiting for target ${options.target}`);
    }
    throw error;
  } finally {
    options.signal.removeEventListener("abort", cancel);
  }
}

/**
 * Says who holds which target, for `qaas queue status`. A row outlives its session when a worker dies;
 * it counts only while a session with its pid and start time is alive, and the next hold clears it.
 */
async function announceHold(client: pg.Client, options: FleetLimitOptions): Promise<void> {
  await client.query(
    `DELETE FROM qaas_target_hold h WHERE NOT EXISTS
       (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.pid AND a.backend_start = h.backend_start)`,
  );
  await client.query(
    `INSERT INTO qaas_target_hold (pid, backend_start, target, exclusive, cap)
     SELECT pid, backend_start, $1, $2, $3 FROM pg_stat_activity WHERE pid = pg_backend_pid()`,
    [options.target, options.exclusive, options.targetCap],
  );
}

/** The advisory lock key of a target's request slot. */
export function slotScope(target: string): string {
  return `qaas:slot:${target}`;
}

/**
 * `cap` numbered advisory locks under one scope. Requests wait in line; one loop per pool claims slots for
 * them, polling while other workers hold them all, so a crowd of waiting requests costs one query a poll.
 */
class SlotPool {
  /** Slot → when this worker claimed it. */
  private readonly held = new Map<number, number>();
  private readonly waiting: Array<{ take(slot: number): void; fail(error: unknown): void }> = [];
  private pumping = false;
  /** After giving a slot back for fairness, this worker lets the others' polls in before claiming again. */
  private yieldUntil = 0;

  constructor(
    private readonly session: Session,
    private readonly scope: string,
    private readonly cap: number,
    private readonly signal: AbortSignal,
  ) {}

  take(): Promise<() => void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ take: (slot) => resolve(this.giver(slot)), fail: reject });
      this.pump();
    });
  }

  private giver(slot: number): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.give(slot);
    };
  }

  private give(slot: number): void {
    const since = this.held.get(slot) ?? 0;
    const heldLong = Date.now() - since >= SLOT_HOLD_MS;
    // Handing the slot to this worker's next request saves two round trips, but only for a while: other
    // workers may be waiting for it.
    if (this.waiting.length > 0 && !heldLong) {
      this.waiting.shift()?.take(slot);
      return;
    }
    this.held.delete(slot);
    if (this.waiting.length > 0) this.yieldUntil = Date.now() + 2 * SLOT_POLL_MS;
    // The session runs its queries in order, so the slot is free before this worker claims again.
    void this.session
      .query("SELECT pg_advisory_unlock(hashtextextended($1 || ':' || $2, 0))", [this.scope, slot])
      .catch(() => {});
    this.pump();
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    void this.claimForWaiting().then(
      () => {
        this.pumping = false;
        // A request that came while the loop was ending found it still running: serve it now.
        if (this.waiting.length > 0 && this.held.size < this.cap) this.pump();
      },
      (error: unknown) => {
        this.pumping = false;
        for (const waiter of this.waiting.splice(0)) waiter.fail(error);
      },
    );
  }

  private async claimForWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      if (this.signal.aborted) {
        throw new QaasError("WORKER_STOPPED", `stopped while waiting for a request slot (${this.scope})`);
      }
      // Every slot is this worker's and busy: the next one given back is handed over.
      if (this.held.size >= this.cap) return;
      const pause = this.yieldUntil - Date.now();
      const slot = pause > 0 ? undefined : await this.claim();
      if (slot === undefined) {
        await new Promise((resolve) => setTimeout(resolve, pause > 0 ? pause : SLOT_POLL_MS));
        continue;
      }
      const waiter = this.waiting.shift();
      if (waiter) waiter.take(slot);
      else this.give(slot);
    }
  }

  /** Claims a slot no other session holds; undefined when all `cap` are taken. */
  private async claim(): Promise<number | undefined> {
    // CASE fixes the order: a slot this session already holds is never locked a second time (advisory locks
    // nest within one session, which would count one slot as two).
    const rows = await this.session.query<{ slot: number }>(
      `SELECT slot FROM generate_series(0, $2::int - 1) AS slot
       WHERE CASE WHEN slot = ANY($3::int[]) THEN false
                  ELSE pg_try_advisory_lock(hashtextextended($1 || ':' || slot, 0)) END
       LIMIT 1`,
      [this.scope, this.cap, [...this.held.keys()]],
    );
    const slot = rows[0]?.slot;
    if (slot !== undefined) this.held.set(slot, Date.now());
    return slot;
  }
}
