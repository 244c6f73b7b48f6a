import { type ConnectionLoss, connectionLossOf, reachability } from "./connection-loss.ts";
import { TargetDownError } from "./http-client.ts";
import type { HttpExchange } from "./http-types.ts";

// Notices a target that stops answering in the middle of a run. One request that makes a server exit is
// a defect in itself (anyone can take the service down), and everything sent after it meets a closed port
// and finds nothing: without this, a run on a crashed target looks like a clean one.
//
// A lost connection alone proves little (a keep-alive socket closed by the server, a slow restart), so the
// target is declared down only when a second, independent request (its health path and its base URL) is
// refused too. Then a managed target is restarted and the requests that were in flight are replayed one at
// a time, alone, to find the one that kills it; an external target is left alone and the run stops sending.

/** One time the target stopped answering, and what the run learned and did about it. */
export interface TargetDeath {
  /** When the first lost connection was seen (ISO). */
  at: string;
  /** Requests in flight or just answered when it died, most likely culprit first. */
  suspects: HttpExchange[];
  /** The request that, replayed alone on a restarted target, took it down again. */
  culprit: HttpExchange | undefined;
  /** The replay of the culprit (its error or answer), when one was confirmed. */
  replay: HttpExchange | undefined;
  /** What the second signal saw: the health path and base URL, each refused. */
  checks: string[];
  /** Managed: the target was restarted and the run goes on. External or out of restarts: it stays down. */
  recovered: boolean;
  mode: "managed" | "external";
  /** Suspects sent again alone on the restarted target (0 when it could not be restarted). */
  replayed: number;
  /**
   * A request cut off by this death that went to an operation an earlier replay already showed to crash the
   * target: named as the likely cause without a replay, since confirming it again would only spend a restart.
   */
  knownCause?: HttpExchange;
}

export interface LivenessOptions {
  /** The target's origin: only requests to it are watched. */
  baseUrl: string;
  healthUrl: string;
  /** Brings a managed target up again (start and health); undefined for a target qaas cannot restart. */
  restart?: () => Promise<void>;
  /** Restarts allowed in one run, recovery and confirmation together (default 6: three confirmed crashes). */
  maxRestarts?: number;
  /** Suspects replayed to find the culprit, at most. */
  maxReplays?: number;
  /** Time given to a dying process before the health check is believed, in ms. */
  settleMs?: number;
}

/** Says what happened (a finding, a note in the run); called once per death, before requests resume. */
export type DeathReporter = (death: TargetDeath, liveness: TargetLiveness) => Promise<void> | void;

const FINISHED_KEPT = 32;
/** Times a request cut off by deaths another request caused is sent again. */
const INNOCENT_RESENDS = 3;
/** Answered requests kept as suspects: a server may die just after it answered (work done after the reply). */
const ANSWERED_SUSPECTS = 2;

/**
 * The run-wide watch over one target's liveness. The HTTP client tells it when a request starts, ends and
 * loses its connection; it answers whether a failed request may be sent again (the target was restarted)
 * and refuses new requests once the target is down for good.
 */
export class TargetLiveness {
  readonly deaths: TargetDeath[] = [];
  restarts = 0;
  /** Requests refused because the target was down. */
  skippedRequests = 0;
  /** Tool calls (clients) that met a down target at least once. */
  skippedCalls = 0;
  private answered = false;
  private state: "up" | "recovering" | "down" = "up";
  private recovery: Promise<void> | undefined;
  private readonly inFlight = new Map<number, HttpExchange>();
  private readonly finished: HttpExchange[] = [];
  private readonly origin: string;
  private readonly culprits = new Set<string>();
  /** Per operation that crashed: the inputs of the confirmed culprit that carried a crash-prone value. */
  private readonly crashTriggers = new Map<string, Map<string, Set<CrashTrigger>>>();
  /** Operations a replay showed to crash the target (`POST /login`). */
  private readonly crashedOperations = new Set<string>();

  constructor(private readonly options: LivenessOptions) {
    this.origin = new URL(options.baseUrl).origin;
  }

  get down(): boolean {
    return this.state === "down";
  }

  /** Whether `url` is on the watched target. */
  concerns(url: string): boolean {
    try {
      return new URL(url).origin === this.origin;
    } catch {
      return false;
    }
  }

  /** Waits out a recovery under way; throws TargetDownError when the target is down for good. */
  async admit(url: string): Promise<void> {
    if (this.state === "recovering") await this.recovery;
    if (this.state === "down") {
      this.skippedRequests += 1;
      const death = this.deaths.at(-1);
      throw new TargetDownError(
        `${new URL(url).pathname} not sent: the target stopped answering at ${death?.at ?? "an earlier request"}` +
          (death?.culprit || death?.suspects[0]
            ? ` after ${describeRequest((death.culprit ?? death.suspects[0])!)}`
            : ""),
      );
    }
  }

  begin(exchange: HttpExchange): void {
    this.inFlight.set(exchange.sequence, exchange);
  }

  end(exchange: HttpExchange): void {
    this.inFlight.delete(exchange.sequence);
    if (exchange.response) this.answered = true;
    // A refused request never reached the target: keeping it would only push real suspects out.
    if (exchange.connection === "refused") return;
    this.finished.push(exchange);
    if (this.finished.length > FINISHED_KEPT) this.finished.shift();
  }

  /** True for a request that was shown to take the target down: it is never sent again by a retry. */
  private isCulprit(exchange: HttpExchange): boolean {
    return this.culprits.has(requestKey(exchange));
  }

  /**
   * How often a request cut off by a death may be sent again in all. Never when it is a request shown to take
   * the target down. Up to three times when the death that cut it off was pinned on another request: it is
   * innocent, and a probe whose request keeps meeting a neighbour's crashes would otherwise lose its
   * verdict. Once when the cause is unknown, since it may be the request that kills the target.
   */
  resendsAllowed(exchange: HttpExchange): number {
    if (this.isCulprit(exchange)) return 0;
    const death = this.deaths.at(-1);
    const cause = death?.culprit ?? death?.knownCause;
    return cause && requestKey(cause) !== requestKey(exchange) ? INNOCENT_RESENDS : 1;
  }

  /**
   * Says why a request would most likely take the target down again, or undefined: it goes to an operation
   * already shown to crash, carrying in the same input the same kind of value that crashed it (control
   * characters, a huge value). One confirmed crash is the finding; crashing it again on each variant only
   * costs restarts. Other inputs of that operation are still probed.
   */
  wouldCrash(method: string, url: string, body: string | undefined): string | undefined {
    const crashed = this.crashTriggers.get(operationKey(method, url));
    if (!crashed) return undefined;
    for (const [input, triggers] of inputTriggers(url, body)) {
      const hit = triggers.find((trigger) => crashed.get(input)?.has(trigger));
      if (hit) {
        return `${method} ${new URL(url).pathname} not sent: its ${input} carries ${hit}, as in the request that crashed the target`;
      }
    }
    return undefined;
  }

  /**
   * A request to the target lost its connection. Answers `restarted` when the target had died and is up
   * again (the request may be sent again), `down` when it died and stays down, `alive` when the target
   * still answers (a lone lost connection).
   */
  async lost(
    exchange: HttpExchange,
    loss: ConnectionLoss,
    report?: DeathReporter,
  ): Promise<"alive" | "restarted" | "down"> {
    exchange.connection = loss;
    if (this.state === "up") {
      if (!this.answered) return "alive";
      this.recovery = this.investigate(exchange, report).finally(() => {
        this.recovery = undefined;
      });
    }
    if (this.state === "recovering" || this.recovery) await this.recovery;
    if (this.state === "down") return "down";
    // Up again: a restart happened if this request died before the latest recovery finished.
    const latest = this.deaths.at(-1);
    return latest && latest.at >= exchange.startedAt ? "restarted" : "alive";
  }

  private async investigate(first: HttpExchange, report: DeathReporter | undefined): Promise<void> {
    this.state = "recovering";
    const at = new Date().toISOString();
    const checks = await this.secondSignal();
    if (!checks) {
      this.state = "up";
      return;
    }
    const suspects = this.suspectsAt(at, first);
    const death: TargetDeath = {
      at,
      suspects,
      culprit: undefined,
      replay: undefined,
      checks,
      recovered: false,
      mode: this.options.restart ? "managed" : "external",
      replayed: 0,
    };
    this.deaths.push(death);
    if (this.options.restart && (await this.restartOnce())) {
      death.knownCause = suspects.find(
        (suspect) =>
          !suspect.response &&
          this.crashedOperations.has(operationKey(suspect.request.method, suspect.request.url)),
      );
      // Never retried either: it would most likely take the target down once more.
      if (death.knownCause) this.culprits.add(requestKey(death.knownCause));
      else await this.findCulprit(death);
      death.recovered = this.state === "recovering";
    }
    this.state = death.recovered ? "up" : "down";
    try {
      await report?.(death, this);
    } catch {
      // A failed report must not keep the run waiting on a recovery.
    }
  }

  /** Both the health path and the base URL refused: the process is gone, not one connection. */
  private async secondSignal(): Promise<string[] | undefined> {
    await sleep(this.options.settleMs ?? 300);
    const urls = [...new Set([this.options.healthUrl, new URL("/", this.options.baseUrl).toString()])];
    const checks: string[] = [];
    for (const url of urls) {
      const seen = await reachability(url);
      if (seen !== "refused") return undefined;
      checks.push(`GET ${new URL(url).pathname} → connection refused`);
    }
    return checks;
  }

  /**
   * Requests that reached the target before it died: those whose connection was reset or that were still
   * in flight first (the server died while handling them), then the last answered ones (a crash after the
   * answer). A refused request never reached it.
   */
  private suspectsAt(at: string, first: HttpExchange): HttpExchange[] {
    const candidates = new Map<number, HttpExchange>();
    for (const exchange of [first, ...this.inFlight.values(), ...this.finished]) {
      if (exchange.startedAt > at || exchange.connection === "refused") continue;
      if (exchange.error && !exchange.connection) continue;
      candidates.set(exchange.sequence, exchange);
    }
    // Cut off while being handled: those carrying input that often crashes servers first, then oldest
    // first (the server had it longest); then the last answered ones.
    const all = [...candidates.values()];
    const prone = (exchange: HttpExchange) =>
      inputTriggers(exchange.request.url, exchange.request.body).size > 0 ? 0 : 1;
    const cutOff = all
      .filter((exchange) => !exchange.response)
      .sort((a, b) => prone(a) - prone(b) || a.sequence - b.sequence);
    const answered = all
      .filter((exchange) => exchange.response)
      .sort((a, b) => b.sequence - a.sequence)
      .slice(0, ANSWERED_SUSPECTS);
    // What came before this death is never a suspect of the next one.
    this.finished.length = 0;
    return [...cutOff, ...answered].slice(0, this.options.maxReplays ?? 12);
  }

  private async restartOnce(): Promise<boolean> {
    if (!this.options.restart || this.restarts >= (this.options.maxRestarts ?? 6)) return false;
    this.restarts += 1;
    try {
      await this.options.restart();
      return true;
    } catch {
      return false;
    }
  }

  /** Replays each suspect alone on the restarted target; the one after which it is refused again is the culprit. */
  private async findCulprit(death: TargetDeath): Promise<void> {
    for (const suspect of death.suspects) {
      const replay = await replayAlone(suspect);
      death.replayed += 1;
      if (!(await this.staysDown())) continue;
      death.culprit = suspect;
      death.replay = replay;
      this.culprits.add(requestKey(suspect));
      this.crashedOperations.add(operationKey(suspect.request.method, suspect.request.url));
      const inputs = inputTriggers(suspect.request.url, suspect.request.body);
      if (inputs.size > 0) {
        const kept = new Map([...inputs].map(([input, triggers]) => [input, withKin(triggers)]));
        this.crashTriggers.set(operationKey(suspect.request.method, suspect.request.url), kept);
      }
      if (!(await this.restartOnce())) this.state = "down";
      return;
    }
  }

  /** Refused now and still refused a moment later (a dying process may answer one last time). */
  private async staysDown(): Promise<boolean> {
    await sleep(this.options.settleMs ?? 300);
    if ((await reachability(this.options.healthUrl)) !== "refused") return false;
    await sleep(this.options.settleMs ?? 300);
    return (await reachability(this.options.healthUrl)) === "refused";
  }
}

/** Sends one recorded request again, outside any budget: part of diagnosing a death, not a probe. */
async function replayAlone(original: HttpExchange): Promise<HttpExchange> {
  const { method, url, headers, body } = original.request;
  const replay: HttpExchange = {
    sequence: original.sequence,
    startedAt: new Date().toISOString(),
    request: { method, url, headers: { ...headers }, body },
    response: undefined,
    durationMs: 0,
    user: original.user,
  };
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method,
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    const answered: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      answered[name] = value;
    });
    replay.response = {
      status: response.status,
      headers: answered,
      setCookies: response.headers.getSetCookie(),
      contentType: (answered["content-type"] ?? "").toLowerCase(),
      body: text.slice(0, 64 * 1024),
      truncated: text.length > 64 * 1024,
      json: undefined,
    };
  } catch (error) {
    replay.connection = connectionLossOf(error);
    replay.error =
      (error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : undefined) ??
      String(error);
  } finally {
    replay.durationMs = Math.round(performance.now() - started);
  }
  return replay;
}

/** `POST /login/auth` with its body's first characters: how a death names the request it followed. */
export function describeRequest(exchange: HttpExchange): string {
  const { method, url } = exchange.request;
  const parsed = new URL(url);
  return `${method} ${parsed.pathname}${parsed.search.length > 1 ? parsed.search.slice(0, 80) : ""}`;
}

type CrashTrigger = "CR/LF" | "a NUL byte" | "non-ASCII characters" | "a huge value";

const HUGE_VALUE = 4096;

/**
 * The inputs of a request (`query q`, `body user.name`) that carry values which most often crash a
 * server: CR/LF, NUL and non-ASCII characters reaching a response header (Node, for one, throws on
 * them), and huge values.
 */
function inputTriggers(url: string, body: string | undefined): Map<string, CrashTrigger[]> {
  const inputs: [string, string][] = [];
  for (const [name, value] of new URL(url).searchParams) inputs.push([`query ${name}`, value]);
  if (body) inputs.push(...bodyInputs(body));
  const found = new Map<string, CrashTrigger[]>();
  for (const [input, value] of inputs) {
    const triggers: CrashTrigger[] = [];
    if (/[\r\n]/.test(value)) triggers.push("CR/LF");
    if (value.includes("\u0000")) triggers.push("a NUL byte");
    if ([...value].some((character) => (character.codePointAt(0) ?? 0) > 0x7e))
      triggers.push("non-ASCII characters");
    if (value.length > HUGE_VALUE) triggers.push("a huge value");
    if (triggers.length > 0) found.set(input, [...(found.get(input) ?? []), ...triggers]);
  }
  return found;
}

/** A JSON body's leaves by path, a form body's fields, or else the whole body as one input. */
function bodyInputs(body: string): [string, string][] {
  try {
    const leaves: [string, string][] = [];
    const walk = (value: unknown, at: string) => {
      if (value !== null && typeof value === "object") {
        for (const [key, child] of Object.entries(value)) walk(child, at ? `${at}.${key}` : key);
      } else leaves.push([`body ${at}`, String(value)]);
    };
    walk(JSON.parse(body), "");
    return leaves;
  } catch {
    if (/^[^=&\s]+=/.test(body))
      return [...new URLSearchParams(body)].map(([name, value]) => [`body ${name}`, value]);
    return [["body", body]];
  }
}

/**
 * A crash on one character a response header refuses (CR/LF, NUL, non-ASCII) stands for all three: a
 * server that copies input into a header unchecked (Node's setHeader throws on each) dies on any of them.
 */
const HEADER_BREAKERS: readonly CrashTrigger[] = ["CR/LF", "a NUL byte", "non-ASCII characters"];

function withKin(triggers: CrashTrigger[]): Set<CrashTrigger> {
  const kin = triggers.some((trigger) => HEADER_BREAKERS.includes(trigger)) ? HEADER_BREAKERS : [];
  return new Set([...triggers, ...kin]);
}

function operationKey(method: string, url: string): string {
  return `${method.toUpperCase()} ${new URL(url).pathname.replace(/\/+$/, "")}`;
}

function requestKey(exchange: HttpExchange): string {
  const { method, url, body } = exchange.request;
  return `${method} ${url}\u0000${body ?? ""}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
