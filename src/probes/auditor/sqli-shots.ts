import type { PreparedRequest } from "../api/request-builder.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { PointBaseline } from "./point-request.ts";
import { sendPointChain, withValue } from "./point-request.ts";
import { signature } from "./response-signature.ts";
import type { SqlError } from "./sql-signatures.ts";
import { sqlErrorIn } from "./sql-signatures.ts";

// One input point under test: sends values at it, counts the requests, and compares answers by what they
// say once the request's own input (echoed back) and per-request noise are taken out.

/** One request at the point and what came back. */
export interface Shot {
  label: string;
  /** The whole value sent at the point (baseline value plus payload). */
  value: string;
  prepared: PreparedRequest;
  exchange: HttpExchange | undefined;
}

export class PointShots {
  requests = 0;
  /** Whether a quote changed the answer at all (set once the quotes were sent). */
  quoteChanged = false;
  /** The baseline answered differently when sent again (others' writes show in it, or it varies). */
  baselineMoved = false;
  /** The first shot answered by a redirect whose Location carries a database error. */
  redirectLeak: Shot | undefined;
  readonly baselineShot: Shot;

  constructor(
    private readonly run: ProbeRun,
    readonly baseline: PointBaseline,
  ) {
    this.baselineShot = {
      label: "baseline",
      value: baseline.value,
      prepared: baseline.prepared,
      exchange: baseline.exchange,
    };
    const ms = baseline.exchange.durationMs ?? 0;
    this.ordinary = { fastestMs: ms, slowestMs: ms };
  }

  /** How long the point's ordinary query takes: the fastest and slowest baseline answers (its jitter). */
  readonly ordinary: { fastestMs: number; slowestMs: number };

  noteOrdinaryAnswer(shot: Shot): void {
    const ms = shot.exchange?.durationMs;
    if (ms === undefined) return;
    this.ordinary.fastestMs = Math.min(this.ordinary.fastestMs, ms);
    this.ordinary.slowestMs = Math.max(this.ordinary.slowestMs, ms);
  }

  get value(): string {
    return this.baseline.value;
  }

  /** Sends the baseline value followed by `payload` (or, with `replace`, `payload` alone). */
  async send(label: string, payload: string, options: { replace?: boolean } = {}): Promise<Shot> {
    const value = options.replace ? payload : `${this.baseline.value}${payload}`;
    const prepared = withValue(this.baseline.prepared, this.baseline.point, value);
    this.requests += 1;
    const sent = await sendPointChain(this.run, this.baseline.user, prepared);
    const shot = { label, value, prepared, exchange: sent?.exchange };
    // A form post lands on the page a redirect named: the redirect itself is where an error may travel.
    const leaked = sent?.chain.find((exchange) => sqlErrorInRedirect(exchange));
    if (!this.redirectLeak && leaked) this.redirectLeak = { ...shot, exchange: leaked };
    return shot;
  }

  /** What an answer says, the shot's own value, its payload and the baseline value taken out. */
  signature(shot: Shot): string {
    const base = this.baseline.value;
    const payload = shot.value.startsWith(base) ? shot.value.slice(base.length) : undefined;
    // Short strings ("1", a lone quote) are not stripped: removing every "1" or every apostrophe from a
    // page would blur real differences.
    const strip = [shot.value, payload, base, shot.prepared.seed].filter(
      (item): item is string =>
        item !== undefined && (item.length >= 3 || (item.length === 2 && /[^A-Za-z0-9]/.test(item))),
    );
    return signature(shot.exchange, strip);
  }

  same(a: Shot, b: Shot): boolean {
    return this.signature(a) === this.signature(b);
  }

  sqlError(shot: Shot): SqlError | undefined {
    return shot.exchange?.response ? sqlErrorIn(shot.exchange.response.body) : undefined;
  }

  /** No answer, a 5xx, or a database error on the page. */
  failed(shot: Shot): boolean {
    const status = shot.exchange?.response?.status ?? 0;
    return status === 0 || status >= 500 || this.sqlError(shot) !== undefined;
  }

  status(shot: Shot): number {
    return shot.exchange?.response?.status ?? 0;
  }

  size(shot: Shot): number {
    return shot.exchange?.response?.body.length ?? 0;
  }
}

/** A database error in a redirect's URL-decoded Location (`/login?error=syntax error at or near …`). */
export function sqlErrorInRedirect(exchange: HttpExchange | undefined): SqlError | undefined {
  const response = exchange?.response;
  if (!response || response.status < 300 || response.status >= 400) return undefined;
  const location = response.headers.location;
  if (!location) return undefined;
  const plus = location.replace(/\+/g, " ");
  let decoded = plus;
  try {
    decoded = decodeURIComponent(plus);
  } catch {
    // A malformed escape: the raw text is what the browser shows anyway.
  }
  return sqlErrorIn(decoded);
}
