import { timeoutSignal } from "../../timeout-signal.ts";
import type { AccountGuard } from "./account-guard.ts";
import type { Limiter } from "./concurrency.ts";
import { connectionLossOf } from "./connection-loss.ts";
import { isGraphqlRead } from "./graphql-read.ts";
import type { HttpExchange, HttpRequestSpec, HttpResponseRecord } from "./http-types.ts";
import { isWriteMethod } from "./http-types.ts";
import type { DeathReporter, TargetLiveness } from "./liveness.ts";
import type { QuietWindows } from "./quiet-window.ts";
import { signOutReason, signOutRefusal } from "./sign-out.ts";
import { stateResetReason } from "./state-reset.ts";

const MAX_BODY_CHARS = 512 * 1024;
const MAX_PARSED_CHARS = 16 * 1024 * 1024;

/** Counts requests against a cap; a child budget also charges its parent (a tool call inside an agent). */
export class RequestBudget {
  used = 0;

  constructor(
    readonly max: number,
    private readonly parent?: RequestBudget,
  ) {}

  remaining(): number {
    const own = this.max - this.used;
    return this.parent ? Math.min(own, this.parent.remaining()) : own;
  }

  take(): boolean {
    if (this.remaining() <= 0) return false;
    this.used += 1;
    this.parent?.take();
    return true;
  }
}

/** Raised when a budget is spent; probes catch it and stop with what they have. */
export class BudgetExhaustedError extends Error {
  override readonly name: string = "BudgetExhaustedError";
}

/** Raised when the target stopped answering and cannot be restarted; probes stop as on a spent budget. */
export class TargetDownError extends BudgetExhaustedError {
  override readonly name: string = "TargetDownError";
}

/**
 * Raised when a request may not be sent: a write against a target that forbids them (external, allow_writes
 * off), an operation the profile excludes, or a sign-out. Probes treat it as "not sent".
 */
export class WriteNotAllowedError extends Error {
  override readonly name: string = "WriteNotAllowedError";
}

/** A request refused because it would sign out and end the run's sessions (a kind of "not sent"). */
export class SignOutRefusedError extends WriteNotAllowedError {
  override readonly name: string = "SignOutRefusedError";
}

export interface HttpClientStats {
  sent: number;
  failed: number;
  skipped_writes: number;
  /** Requests refused because they would have signed out (counted in skipped_writes too). */
  refused_sign_outs: number;
  by_status: Record<string, number>;
}

export interface HttpClientOptions {
  /** Says why a request may never be sent (an operation the profile excludes), or undefined. */
  refuse?: (method: string, url: string) => string | undefined;
  /** Sign-out-looking operations the profile names as harmless (auth.allow_sign_out); all others are refused. */
  allowSignOut?: (method: string, url: string) => boolean;
  limiter: Limiter;
  budget: RequestBudget;
  writesAllowed: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Refuses a write that would change a profile user's own email, login or password (see account-guard.ts). */
  guardAccount?: AccountGuard;
  /** The run's watch over the target's liveness: a target that dies is noticed, restarted or given up on. */
  liveness?: TargetLiveness;
  /** Reports a death this client's request was the first to notice (a finding and a run note). */
  reportDeath?: DeathReporter;
  /** The run's measurement windows: requests wait while another client measures (see quiet-window.ts). */
  quiet?: QuietWindows;
}

let sequence = 0;

/**
 * The only way probes reach a target: every request waits for a run-wide concurrency slot, is charged to a
 * budget, and respects the write policy. Node's fetch keeps connections alive, so nothing is pooled here.
 */
const DEFAULT_TIMEOUT_MS = 10_000;

export class HttpClient {
  readonly stats: HttpClientStats = {
    sent: 0,
    failed: 0,
    skipped_writes: 0,
    refused_sign_outs: 0,
    by_status: {},
  };

  private metDownTarget = false;
  /** Slots `together` took for a burst, which its requests use before asking the limiter for more. */
  private readonly reservedSlots: Array<Array<() => void>> = [];

  constructor(private readonly options: HttpClientOptions) {}

  /** How long a request may go unanswered before it counts as a timeout. */
  get timeoutMs(): number {
    return this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  get writesAllowed(): boolean {
    return this.options.writesAllowed;
  }

  remaining(): number {
    return this.options.budget.remaining();
  }

  /** How often the run restarted the target after it died: each restart may have lost the sessions it kept. */
  get targetRestarts(): number {
    return this.options.liveness?.restarts ?? 0;
  }

  /**
   * Runs `measure` with the target to this client alone: other clients' requests wait until it is done
   * (see quiet-window.ts). For timings and statement-log readings, not for probing.
   */
  quietly<Result>(measure: () => Promise<Result>): Promise<Result> {
    return this.options.quiet ? this.options.quiet.hold(this, measure) : measure();
  }

  /**
   * Runs `burst`, `requests` requests that must reach the target at the same moment (a race), so that no
   * other client's measurement window splits it (see quiet-window.ts) and the run's cap lets them out at once.
   */
  together<Result>(burst: () => Promise<Result>, requests = 1): Promise<Result> {
    const gathered = async () => {
      // The burst's slots are taken at one moment and its requests use them: behind other agents' work,
      // slots taken one by one would let the requests out one at a time, and a race would never happen.
      const limiter = this.options.limiter;
      if (requests < 2 || !limiter.acquireMany) return burst();
      const slots = await limiter.acquireMany(requests);
      this.reservedSlots.push(slots);
      try {
        return await burst();
      } finally {
        this.reservedSlots.splice(this.reservedSlots.indexOf(slots), 1);
        for (const give of slots) give();
      }
    };
    return this.options.quiet ? this.options.quiet.together(this, gathered) : gathered();
  }

  /**
   * Sends one request. `signIn` marks the sign-in layer's own exchanges (sign-in, sign-up of a throw-away
   * user, their pages and redirects): exempt from the write policy and the sign-out guard, since they change
   * no data a probe cares about and nothing else can be probed without them.
   */
  async send(
    spec: HttpRequestSpec,
    extra: { signIn?: boolean; user?: string; resent?: number } = {},
  ): Promise<HttpExchange> {
    const method = spec.method.toUpperCase();
    if (isWriteMethod(method) && !this.options.writesAllowed && !extra.signIn && !isGraphqlRead(spec)) {
      this.stats.skipped_writes += 1;
      throw new WriteNotAllowedError(`${method} ${spec.url} skipped: the target does not allow writes`);
    }
    const signOut = extra.signIn ? undefined : signOutReason(method, spec.url);
    if (signOut && !this.options.allowSignOut?.(method, spec.url)) {
      this.stats.skipped_writes += 1;
      this.stats.refused_sign_outs += 1;
      throw new SignOutRefusedError(signOutRefusal(method, spec.url, signOut));
    }
    const reset = extra.signIn ? undefined : stateResetReason(spec.url);
    if (reset) {
      this.stats.skipped_writes += 1;
      throw new WriteNotAllowedError(`${method} ${spec.url} refused: ${reset}`);
    }
    const refused =
      this.options.refuse?.(method, spec.url) ??
      (extra.signIn ? undefined : this.options.guardAccount?.(method, spec.url, spec.body, extra.user));
    if (refused) {
      this.stats.skipped_writes += 1;
      throw new WriteNotAllowedError(refused);
    }
    if (this.options.signal?.aborted) throw new BudgetExhaustedError("the run was stopped");
    const again = this.options.liveness?.wouldCrash(method, spec.url, spec.body);
    if (again) {
      this.stats.skipped_writes += 1;
      throw new WriteNotAllowedError(again);
    }
    const liveness = this.options.liveness?.concerns(spec.url) ? this.options.liveness : undefined;
    if (liveness) await this.admitted(liveness, spec.url);
    if (!this.options.budget.take()) {
      throw new BudgetExhaustedError(`request budget of ${this.options.budget.max} spent`);
    }
    const leaveWindow = await this.options.quiet?.enter(this, { bypass: extra.signIn });
    let slot: () => void;
    try {
      slot =
        this.reservedSlots.find((slots) => slots.length > 0)?.pop() ?? (await this.options.limiter.acquire());
    } catch (error) {
      // A limiter held across workers can fail (its database gone, the worker stopping).
      leaveWindow?.();
      throw error;
    }
    const release = () => {
      slot();
      leaveWindow?.();
    };
    if (liveness) {
      // The target may have died while this request waited for a slot.
      try {
        await this.admitted(liveness, spec.url);
      } catch (error) {
        release();
        throw error;
      }
    }
    sequence += 1;
    const exchange: HttpExchange = {
      sequence,
      startedAt: new Date().toISOString(),
      request: { method, url: spec.url, headers: { ...(spec.headers ?? {}) }, body: spec.body },
      response: undefined,
      durationMs: 0,
      user: extra.user,
    };
    liveness?.begin(exchange);
    const started = performance.now();
    let loss: ReturnType<typeof connectionLossOf>;
    try {
      const signal = timeoutSignal(spec.timeoutMs ?? this.timeoutMs, this.options.signal);
      const response = await fetch(spec.url, {
        method,
        headers: spec.headers,
        body: spec.body,
        redirect: "manual",
        signal,
      });
      exchange.response = await readResponse(response, spec.maxBodyChars ?? MAX_BODY_CHARS);
      this.stats.sent += 1;
      const key = String(exchange.response.status);
      this.stats.by_status[key] = (this.stats.by_status[key] ?? 0) + 1;
    } catch (error) {
      this.stats.sent += 1;
      this.stats.failed += 1;
      loss = connectionLossOf(error);
      exchange.error =
        error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")
          ? "timeout"
          : error instanceof Error
            ? ((error.cause as Error | undefined)?.message ?? error.message)
            : String(error);
    } finally {
      exchange.durationMs = Math.round(performance.now() - started);
      release();
    }
    if (!liveness) return exchange;
    if (loss) exchange.connection = loss;
    liveness.end(exchange);
    if (!loss) return exchange;
    // The target may have died: wait for the verdict. A request cut off by a death the run recovered from
    // is sent again, as often as the liveness watch allows (never when it is the request that kills it).
    const verdict = await liveness.lost(exchange, loss, this.options.reportDeath);
    const resent = extra.resent ?? 0;
    if (verdict === "restarted" && resent < liveness.resendsAllowed(exchange)) {
      return this.send(spec, { ...extra, resent: resent + 1 });
    }
    return exchange;
  }

  /** Waits out a restart under way; a target down for good refuses the request (counted once per client). */
  private async admitted(liveness: TargetLiveness, url: string): Promise<void> {
    try {
      await liveness.admit(url);
    } catch (error) {
      if (!this.metDownTarget) liveness.skippedCalls += 1;
      this.metDownTarget = true;
      throw error;
    }
  }
}

async function readResponse(response: Response, maxBodyChars: number): Promise<HttpResponseRecord> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const setCookies = response.headers.getSetCookie();
  const text = await response.text();
  const truncated = text.length > maxBodyChars;
  const body = truncated ? text.slice(0, maxBodyChars) : text;
  const contentType = (headers["content-type"] ?? "").toLowerCase();
  return {
    status: response.status,
    headers,
    setCookies,
    contentType,
    body,
    truncated,
    // Parsed whole when it fits MAX_PARSED_CHARS: a list too long to keep is the one a probe must count.
    json: parseJson(text.length <= MAX_PARSED_CHARS ? text : body, contentType),
  };
}

function parseJson(body: string, contentType: string): unknown {
  const trimmed = body.trim();
  if (!trimmed) return undefined;
  const looksJson = contentType.includes("json") || /^[[{]/.test(trimmed);
  if (!looksJson) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}
