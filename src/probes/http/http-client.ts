import type { Semaphore } from "./concurrency.ts";
import { isGraphqlRead } from "./graphql-read.ts";
import type { HttpExchange, HttpRequestSpec, HttpResponseRecord } from "./http-types.ts";
import { isWriteMethod } from "./http-types.ts";
import { signOutReason, signOutRefusal } from "./sign-out.ts";
import { stateResetReason } from "./state-reset.ts";

const MAX_BODY_CHARS = 512 * 1024;

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
  override readonly name = "BudgetExhaustedError";
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
  limiter: Semaphore;
  budget: RequestBudget;
  writesAllowed: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
}

let sequence = 0;

/**
 * The only way probes reach a target: every request waits for a run-wide concurrency slot, is charged to a
 * budget, and respects the write policy. Node's fetch keeps connections alive, so nothing is pooled here.
 */
export class HttpClient {
  readonly stats: HttpClientStats = {
    sent: 0,
    failed: 0,
    skipped_writes: 0,
    refused_sign_outs: 0,
    by_status: {},
  };

  constructor(private readonly options: HttpClientOptions) {}

  get writesAllowed(): boolean {
    return this.options.writesAllowed;
  }

  remaining(): number {
    return this.options.budget.remaining();
  }

  /**
   * Sends one request. `signIn` marks the sign-in layer's own exchanges (sign-in, sign-up of a throw-away
   * user, their pages and redirects): exempt from the write policy and the sign-out guard, since they change
   * no data a probe cares about and nothing else can be probed without them.
   */
  async send(spec: HttpRequestSpec, extra: { signIn?: boolean; user?: string } = {}): Promise<HttpExchange> {
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
    const refused = this.options.refuse?.(method, spec.url);
    if (refused) {
      this.stats.skipped_writes += 1;
      throw new WriteNotAllowedError(refused);
    }
    if (this.options.signal?.aborted) throw new BudgetExhaustedError("the run was stopped");
    if (!this.options.budget.take()) {
      throw new BudgetExhaustedError(`request budget of ${this.options.budget.max} spent`);
    }
    const release = await this.options.limiter.acquire();
    sequence += 1;
    const exchange: HttpExchange = {
      sequence,
      startedAt: new Date().toISOString(),
      request: { method, url: spec.url, headers: { ...(spec.headers ?? {}) }, body: spec.body },
      response: undefined,
      durationMs: 0,
      user: extra.user,
    };
    const started = performance.now();
    try {
      const timeout = AbortSignal.timeout(spec.timeoutMs ?? this.options.timeoutMs ?? 10_000);
      const signal = this.options.signal ? AbortSignal.any([timeout, this.options.signal]) : timeout;
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
    return exchange;
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
    json: parseJson(body, contentType),
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
