import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, lastStaticSegment } from "../api/operation-index.ts";
import { sendPaced } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { answer } from "../auditor/authz-support.ts";
import { carriesData, sameData } from "../auditor/same-data.ts";
import type { TokenForgery } from "../evidence/failing-test.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { slowOperationsFor } from "../http/slow-operations.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import { epochSeconds, hmacDigest, randomlySigned, signHmac, tamperedToken, unsignedToken } from "./jwt.ts";
import type { SessionJwt } from "./session-tokens.ts";
import { withForgedToken } from "./session-tokens.ts";
import type { ShortLivedToken } from "./short-lived-token.ts";
import { MAX_EXPIRY_WAIT_MS } from "./short-lived-token.ts";

// Per operation: does it take a token nobody signed, one signed with a guessable key, one whose claims
// were changed after signing, or one that has expired? Each forged token claims another user's identity
// when the operation answers users differently, and counts only when it gets exactly that user's answer
// (twice) while a control the server must refuse — the same claims under a random signature — is refused.

export type TechniqueKind = "alg-none" | "guessed-key" | "tampered" | "unverified" | "expired";

export interface AcceptedForgery {
  kind: TechniqueKind;
  label: string;
  /** Whose identity the forged token claimed (the owner's own when the operation answers everyone alike). */
  subject: string;
  /** The subject is another user, or an administrator. */
  impersonation: boolean;
  forgery: TokenForgery;
  exchange: HttpExchange;
  confirm: HttpExchange;
  /** What the server refused (a random signature, or the expired token re-signed at random). */
  control: HttpExchange;
  /** The subject's own answer, fetched with their real session. */
  rightful: HttpExchange;
  /** The guessed key, when one signed the token. */
  secret?: string;
}

export interface OperationVerdict {
  operation: Operation;
  prepared: PreparedRequest;
  ownerAnswer: HttpExchange;
  anonymous: HttpExchange;
  accepted: AcceptedForgery[];
}

export interface ForgeryContext {
  run: ProbeRun;
  owner: SessionJwt;
  others: readonly SessionJwt[];
  /** The key that signed the run's own tokens, when it was guessed offline. */
  issuerKey?: string;
  /** Keys tried online against operations that verify signatures, when the issuer's key is not guessable. */
  secrets: readonly string[];
  /** Requests left for online key guessing across all operations. */
  onlineBudget: { left: number };
  /** How far past its `exp` a token must be before its acceptance counts (clock-skew tolerance). */
  expiryLeewayMs: number;
}

const SELF_SEGMENT = /^(me|self|whoami|current|current-?user|profile|account|userinfo)$/i;
const ALG_NONE_SPELLINGS = ["none", "None", "NONE"];
const TIMING_CLAIMS = new Set(["iat", "exp", "nbf", "jti"]);
// Enough for an application of a hundred signed-in reads: a route that verifies tokens its own way (a
// router of its own, an older API version) is one among many, and a tighter cap left such a route out.
export const MAX_OPERATIONS = 100;

/** Authenticated reads without path parameters, the caller's own first: where a token's identity shows. */
export function forgeryTargets(operations: Iterable<Operation>): Operation[] {
  return [...operations]
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" &&
        operation.security !== "public" &&
        !operation.graphql &&
        !isAuthOperation(operation) &&
        pathParameterNames(operation.path).length === 0,
    )
    .sort((a, b) => Number(isSelf(b)) - Number(isSelf(a)))
    .slice(0, MAX_OPERATIONS);
}

/** The claims that say who someone is (everything but timing and token ids). */
export function identityClaims(payload: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(payload).filter(([name]) => !TIMING_CLAIMS.has(name)));
}

/** A forgery must not be refused for expiry: tokens may live a minute, and the check takes longer. */
const MIN_SECONDS_LEFT = 30;
/** The lifetime a refreshed forgery gets when its token does not say how long it lives. */
const DEFAULT_LIFETIME_SECONDS = 300;

/**
 * The payload with its timing claims moved to now when `exp` is near or past: the owner's token, signed in
 * a while ago, may have expired since, and a forgery refused as expired proves nothing about signatures.
 */
export function withLiveTiming(
  payload: Record<string, unknown>,
  now = epochSeconds(),
): Record<string, unknown> {
  const { exp, iat, nbf } = payload;
  if (typeof exp !== "number" || exp - now >= MIN_SECONDS_LEFT) return payload;
  const lifetime = typeof iat === "number" && exp > iat ? exp - iat : DEFAULT_LIFETIME_SECONDS;
  return {
    ...payload,
    ...(typeof iat === "number" ? { iat: now } : {}),
    ...(typeof nbf === "number" ? { nbf: now } : {}),
    exp: now + Math.max(lifetime, MIN_SECONDS_LEFT * 2),
  };
}

/** Probes one operation; undefined when it cannot tell (no data for the owner, or open to anonymous callers). */
export async function probeOperation(
  context: ForgeryContext,
  operation: Operation,
): Promise<OperationVerdict | undefined> {
  const { run, owner } = context;
  const prepared = buildRequest(operation, { seed: uniqueSeed() });
  const spec = toSpec(run.target.baseUrl, prepared);
  const ownerAnswer = await sendPaced(run, operation, () => send(run, owner.user.name, spec));
  // A read that takes seconds would take them again for each of the dozen forgeries sent to it, and on a
  // single-threaded target every other probe would wait as long: its identity is read elsewhere.
  if (
    !ownerAnswer ||
    slowOperationsFor(run.context).isSlowAnswer(ownerAnswer.durationMs) ||
    !accepted(run, ownerAnswer) ||
    !carriesData(answer(ownerAnswer).json, answer(ownerAnswer).text)
  )
    return undefined;
  const anonymous = await send(run, undefined, spec);
  if (!anonymous || !refused(run, anonymous)) return undefined;
  const probe = new OperationProbe(context, prepared, ownerAnswer);
  const control = await probe.sendToken(randomlySigned(owner.jwt));
  const verdict: OperationVerdict = { operation, prepared, ownerAnswer, anonymous, accepted: [] };
  if (!control) return verdict;
  const subject = await probe.subject();
  if (refused(run, control)) {
    const verified = await probe.whenSignaturesAreVerified(subject, control);
    verdict.accepted.push(...verified);
  } else if (probe.matches(control, ownerAnswer)) {
    const unverified = await probe.whenSignaturesAreIgnored(subject, control);
    verdict.accepted.push(...unverified);
  }
  return verdict;
}

/** The expired-token check on operations already known to verify signatures and refuse forgeries. */
export async function probeExpiry(
  context: ForgeryContext,
  verdicts: readonly OperationVerdict[],
  shortLived: ShortLivedToken | undefined,
): Promise<void> {
  const { run } = context;
  if (context.issuerKey) {
    // With the issuer's key every forgery gets in anyway; what is left to learn is whether `exp` counts.
    await mapConcurrent(verdicts, 4, async (verdict) => {
      const probe = new OperationProbe(context, verdict.prepared, verdict.ownerAnswer);
      const found = await probe.expiredResigned(context.issuerKey!);
      if (found) verdict.accepted.push(found);
    });
  }
  const ready = verdicts.filter((verdict) => verdict.accepted.length === 0);
  if (!shortLived || ready.length === 0) return;
  const due = shortLived.expiresAt + context.expiryLeewayMs;
  const wait = due - Date.now();
  if (wait > MAX_EXPIRY_WAIT_MS) {
    run.notes.push(
      `the short-lived token expires too late to wait for (${Math.round(wait / 1000)} s): expiry not tested`,
    );
    return;
  }
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  await mapConcurrent(ready, 4, async (verdict) => {
    const probe = new OperationProbe(context, verdict.prepared, verdict.ownerAnswer);
    const found = await probe.expiredReplay(shortLived);
    if (found) verdict.accepted.push(found);
  });
}

class OperationProbe {
  private readonly rightful = new Map<string, HttpExchange | null>();

  constructor(
    private readonly context: ForgeryContext,
    private readonly prepared: PreparedRequest,
    private readonly ownerAnswer: HttpExchange,
  ) {
    this.rightful.set(context.owner.user.name, ownerAnswer);
  }

  private get run(): ProbeRun {
    return this.context.run;
  }

  async sendToken(token: string): Promise<HttpExchange | undefined> {
    const spec = withForgedToken(
      this.run,
      this.context.owner.carrier,
      token,
      toSpec(this.run.target.baseUrl, this.prepared),
    );
    // A forged token that works is a credential for someone else: never in evidence.
    if (token.includes(".ey")) this.run.masker.addSecret(token);
    return this.run.client.send(spec, { user: "forged-token" });
  }

  matches(exchange: HttpExchange, rightful: HttpExchange): boolean {
    return accepted(this.run, exchange) && sameData(answer(rightful), answer(exchange));
  }

  /**
   * Another user whose answer here differs from the owner's (so a forged identity shows), with that
   * answer; the owner when every other user gets the owner's answer.
   */
  async subject(): Promise<{ who: SessionJwt; rightful: HttpExchange }> {
    for (const other of this.context.others) {
      const theirs = await send(this.run, other.user.name, toSpec(this.run.target.baseUrl, this.prepared));
      if (!theirs || !accepted(this.run, theirs)) continue;
      const { json, text } = answer(theirs);
      if (!carriesData(json, text) || sameData(answer(this.ownerAnswer), answer(theirs))) continue;
      return { who: other, rightful: theirs };
    }
    return { who: this.context.owner, rightful: this.ownerAnswer };
  }

  /** The payload a forgery carries: the owner's timing claims with the subject's identity. */
  private payloadFor(subject: SessionJwt): Record<string, unknown> {
    return withLiveTiming({ ...this.context.owner.jwt.payload, ...identityClaims(subject.jwt.payload) });
  }

  private claimsFor(subject: SessionJwt): Record<string, unknown> | undefined {
    return subject === this.context.owner ? undefined : identityClaims(subject.jwt.payload);
  }

  /** Sends `token` twice; both must get the subject's answer (and not the owner's, when they differ). */
  private async acceptedTwice(
    token: string,
    subject: { who: SessionJwt; rightful: HttpExchange },
  ): Promise<{ exchange: HttpExchange; confirm: HttpExchange } | undefined> {
    const telling = (exchange: HttpExchange | undefined): exchange is HttpExchange =>
      exchange !== undefined &&
      this.matches(exchange, subject.rightful) &&
      (subject.who === this.context.owner || !sameData(answer(this.ownerAnswer), answer(exchange)));
    const exchange = await this.sendToken(token);
    if (!telling(exchange)) return undefined;
    const confirm = await this.sendToken(token);
    return telling(confirm) ? { exchange, confirm } : undefined;
  }

  private accept(
    kind: TechniqueKind,
    label: string,
    subject: { who: SessionJwt; rightful: HttpExchange },
    forgery: TokenForgery,
    sent: { exchange: HttpExchange; confirm: HttpExchange },
    control: HttpExchange,
    secret?: string,
  ): AcceptedForgery {
    const impersonation = subject.who !== this.context.owner || isAdminLike(subject.who.user.role);
    return {
      kind,
      label,
      subject: subject.who.user.name,
      impersonation,
      forgery,
      ...sent,
      control,
      rightful: subject.rightful,
      ...(secret !== undefined ? { secret } : {}),
    };
  }

  /** The operation refuses a random signature: try the forgeries that get past a verifier. */
  async whenSignaturesAreVerified(
    subject: { who: SessionJwt; rightful: HttpExchange },
    control: HttpExchange,
  ): Promise<AcceptedForgery[]> {
    const { owner } = this.context;
    const from = owner.user.name;
    const claims = this.claimsFor(subject.who);
    const payload = this.payloadFor(subject.who);
    const found: AcceptedForgery[] = [];
    for (const alg of ALG_NONE_SPELLINGS) {
      const sent = await this.acceptedTwice(unsignedToken(owner.jwt, payload, alg), subject);
      if (!sent) continue;
      found.push(
        this.accept(
          "alg-none",
          `alg "${alg}" with no signature`,
          subject,
          { from, kind: "alg-none", alg, claims },
          sent,
          control,
        ),
      );
      break;
    }
    if (subject.who !== owner) {
      const sent = await this.acceptedTwice(tamperedToken(owner.jwt, payload), subject);
      if (sent)
        found.push(
          this.accept(
            "tampered",
            "claims changed under the original signature",
            subject,
            { from, kind: "claims", claims },
            sent,
            control,
          ),
        );
    }
    // Guessing costs a request per key: only when nothing simpler got in, or the issuer's key is known.
    const key =
      found.length === 0 || this.context.issuerKey !== undefined
        ? await this.guessKey(subject, payload)
        : undefined;
    if (key) {
      found.push(
        this.accept(
          "guessed-key",
          `signed with the guessable key "${key.secret}"`,
          subject,
          { from, kind: "hmac", secret: key.secret, claims },
          key.sent,
          control,
          key.secret,
        ),
      );
    }
    return found;
  }

  /** A key from the list that signs a token this operation accepts: the issuer's, else guessed online. */
  private async guessKey(
    subject: { who: SessionJwt; rightful: HttpExchange },
    payload: Record<string, unknown>,
  ): Promise<{ secret: string; sent: { exchange: HttpExchange; confirm: HttpExchange } } | undefined> {
    const { owner, issuerKey, secrets, onlineBudget } = this.context;
    const header = hmacDigest(owner.jwt.header.alg)
      ? owner.jwt.header
      : { ...owner.jwt.header, alg: "HS256" };
    const candidates = issuerKey !== undefined ? [issuerKey] : secrets;
    for (const secret of candidates) {
      if (issuerKey === undefined) {
        if (onlineBudget.left <= 0) return undefined;
        onlineBudget.left -= 1;
      }
      const sent = await this.acceptedTwice(signHmac(header, payload, secret), subject);
      if (sent) return { secret, sent };
    }
    return undefined;
  }

  /**
   * The operation answers a random signature as it answers the owner: it does not verify signatures. The
   * proof is another user's claims under the owner's own signature getting that user's answer; when
   * everyone gets the same answer, a token that is no JWT at all must at least be refused.
   */
  async whenSignaturesAreIgnored(
    subject: { who: SessionJwt; rightful: HttpExchange },
    randomSignature: HttpExchange,
  ): Promise<AcceptedForgery[]> {
    const { owner } = this.context;
    const garbage = await this.sendToken("qaas.not-a-token.x");
    if (!garbage || !refused(this.run, garbage)) return [];
    const from = owner.user.name;
    if (subject.who !== owner) {
      const sent = await this.acceptedTwice(tamperedToken(owner.jwt, this.payloadFor(subject.who)), subject);
      if (!sent) return [];
      return [
        this.accept(
          "tampered",
          "claims changed under the original signature (signatures are not verified)",
          subject,
          { from, kind: "claims", claims: this.claimsFor(subject.who) },
          sent,
          garbage,
        ),
      ];
    }
    const confirm = await this.sendToken(randomlySigned(owner.jwt));
    if (!confirm || !this.matches(confirm, this.ownerAnswer)) return [];
    return [
      this.accept(
        "unverified",
        "a random signature (signatures are not verified)",
        subject,
        { from, kind: "random-signature" },
        { exchange: randomSignature, confirm },
        garbage,
      ),
    ];
  }

  /** The owner's claims with `exp` an hour ago, signed with the issuer's guessed key. */
  async expiredResigned(key: string): Promise<AcceptedForgery | undefined> {
    const { owner } = this.context;
    const now = epochSeconds();
    const claims = { iat: now - 7200, exp: now - 3600 };
    const subject = { who: owner, rightful: this.ownerAnswer };
    const control = await this.sendToken(randomlySigned(owner.jwt, { ...owner.jwt.payload, ...claims }));
    if (!control || !refused(this.run, control)) return undefined;
    const sent = await this.acceptedTwice(
      signHmac(owner.jwt.header, { ...owner.jwt.payload, ...claims }, key),
      subject,
    );
    if (!sent) return undefined;
    return this.accept(
      "expired",
      `expired an hour ago (re-signed with the guessable key "${key}")`,
      subject,
      { from: owner.user.name, kind: "hmac", secret: key, claims },
      sent,
      control,
      key,
    );
  }

  /** The server's own token, past its `exp` by more than the usual clock-skew leeway. */
  async expiredReplay(token: ShortLivedToken): Promise<AcceptedForgery | undefined> {
    const { owner } = this.context;
    if (Date.now() < token.expiresAt + this.context.expiryLeewayMs) return undefined;
    const subject = { who: owner, rightful: this.ownerAnswer };
    const control = await this.sendToken(randomlySigned(token.jwt));
    if (!control || !refused(this.run, control)) return undefined;
    const sent = await this.acceptedTwice(token.token, subject);
    if (!sent) return undefined;
    const seconds = Math.round((Date.now() - token.expiresAt) / 1000);
    return this.accept(
      "expired",
      `the server's own token ${seconds} s after its exp (${token.how})`,
      subject,
      {
        from: owner.user.name,
        kind: "expired",
        ...(token.lifetime ? { lifetime: token.lifetime } : {}),
        waitMs: this.context.expiryLeewayMs + 2000,
      },
      sent,
      control,
    );
  }
}

/** A 2xx answer that is not the sign-in page: the caller was let in. */
export function accepted(run: ProbeRun, exchange: HttpExchange): boolean {
  return isSuccess(exchange) && run.sessions.endedSession(exchange) === undefined;
}

/** Refused: no 2xx, or the sign-in page instead of the answer. */
export function refused(run: ProbeRun, exchange: HttpExchange): boolean {
  return exchange.response !== undefined && !accepted(run, exchange);
}

/** Whether the operation answers about the caller (`/me`, `/profile`…): where a person looks first. */
export function isSelf(operation: Operation): boolean {
  return SELF_SEGMENT.test(lastStaticSegment(operation.path) ?? "");
}
