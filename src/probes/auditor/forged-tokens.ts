import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, lastStaticSegment, operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { TokenForgery } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { severityFor } from "../severity.ts";
import { answer } from "./authz-support.ts";
import { carriesData, sameData } from "./same-data.ts";

// Forged session tokens: when the session token is a JWT, a token with `alg: none` and no signature, and
// one whose payload names another subject under the original signature, must both be refused. Each is
// replayed to an authenticated read the owner can make and anonymous callers cannot; the same data as the
// rightful user gets (twice) means the server trusts a token nobody signed.

interface Jwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  parts: [string, string, string];
}

const SELF_SEGMENT = /^(me|self|whoami|current|current-?user|profile|account|userinfo|session)$/i;
const SUBJECT_CLAIMS = ["sub", "user_id", "userId", "uid", "id", "email"];
const MAX_READS_TRIED = 4;

export function parseJwt(token: string | undefined): Jwt | undefined {
  const parts = token?.split(".");
  if (parts?.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8")) as unknown;
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as unknown;
    if (!isRecord(header) || typeof header.alg !== "string" || !isRecord(payload)) return undefined;
    return { header, payload, parts: parts as [string, string, string] };
  } catch {
    return undefined;
  }
}

/** The token `forgery` describes, built from a real one (the generated test builds it the same way). */
export function forgeToken(jwt: Jwt, forgery: Pick<TokenForgery, "kind" | "alg" | "claims">): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  if (forgery.kind === "alg-none")
    return `${encode({ ...jwt.header, alg: forgery.alg ?? "none" })}.${jwt.parts[1]}.`;
  return `${jwt.parts[0]}.${encode({ ...jwt.payload, ...(forgery.claims ?? {}) })}.${jwt.parts[2]}`;
}

interface Variant {
  label: string;
  forgery: TokenForgery;
  /** Whose real answer the forged one must not match. */
  rightful: string;
}

interface Accepted {
  variant: Variant;
  exchange: HttpExchange;
  confirm: HttpExchange;
}

/** The forged-token check on one read; [] when tokens are not JWTs or every forgery is refused. */
export async function checkForgedTokens(
  run: ProbeRun,
  users: readonly ProfileUser[],
  selected: ReadonlySet<Operation>,
): Promise<EnvelopeDraft[]> {
  const tokens = new Map<string, Jwt>();
  for (const user of users) {
    const credential = await run.sessions.signIn(user.name, run.client).catch(() => undefined);
    const jwt = parseJwt(credential?.token);
    if (jwt) tokens.set(user.name, jwt);
  }
  const owner = users.find((user) => tokens.has(user.name));
  if (!owner) {
    if (users.length > 0)
      run.notes.push("session tokens are not JWTs: the forged-token check does not apply");
    return [];
  }
  const jwt = tokens.get(owner.name)!;
  const reads = [...selected]
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" &&
        operation.security !== "public" &&
        !isAuthOperation(operation) &&
        pathParameterNames(operation.path).length === 0,
    )
    .sort((a, b) => Number(isSelf(b)) - Number(isSelf(a)))
    .slice(0, MAX_READS_TRIED);
  for (const operation of reads) {
    const prepared = buildRequest(operation, { seed: uniqueSeed() });
    const ownerAnswer = await send(run, owner.name, toSpec(run.target.baseUrl, prepared));
    if (
      !ownerAnswer ||
      !isSuccess(ownerAnswer) ||
      !carriesData(ownerAnswer.response?.json, ownerAnswer.response?.body ?? "")
    )
      continue;
    const anonymous = await send(run, undefined, toSpec(run.target.baseUrl, prepared));
    if (!anonymous || (statusOf(anonymous) !== 401 && statusOf(anonymous) !== 403)) continue;
    const rightfulAnswers = new Map<string, HttpExchange>([[owner.name, ownerAnswer]]);
    const accepted: Accepted[] = [];
    for (const variant of variantsFor(owner, jwt, users, tokens)) {
      let rightful = rightfulAnswers.get(variant.rightful);
      if (!rightful) {
        rightful = await send(run, variant.rightful, toSpec(run.target.baseUrl, prepared));
        if (!rightful || !isSuccess(rightful)) continue;
        rightfulAnswers.set(variant.rightful, rightful);
      }
      const token = forgeToken(jwt, variant.forgery);
      // The altered token keeps a real signature: it never appears in evidence.
      if (variant.forgery.kind === "claims") run.masker.addSecret(token);
      const forged = await sendForged(run, token, prepared);
      if (!forged || !isSuccess(forged) || !sameData(answer(rightful), answer(forged))) continue;
      const confirm = await sendForged(run, token, prepared);
      if (!confirm || !isSuccess(confirm) || !sameData(answer(rightful), answer(confirm))) continue;
      accepted.push({ variant, exchange: forged, confirm });
    }
    if (accepted.length === 0) return [];
    return [finding(run, operation, prepared, owner, ownerAnswer, anonymous, accepted)];
  }
  return [];
}

function variantsFor(
  owner: ProfileUser,
  jwt: Jwt,
  users: readonly ProfileUser[],
  tokens: ReadonlyMap<string, Jwt>,
): Variant[] {
  const variants: Variant[] = [
    { label: "alg none", forgery: { from: owner.name, kind: "alg-none", alg: "none" }, rightful: owner.name },
  ];
  const claim = SUBJECT_CLAIMS.find((name) => jwt.payload[name] !== undefined);
  const other = users.find((user) => {
    const theirs = tokens.get(user.name);
    return (
      user.name !== owner.name &&
      claim !== undefined &&
      theirs?.payload[claim] !== undefined &&
      JSON.stringify(theirs.payload[claim]) !== JSON.stringify(jwt.payload[claim]) &&
      user.tenant === owner.tenant
    );
  });
  if (claim && other) {
    // Only the subject changes: a server that checks signatures refuses it, one that does not answers as
    // the other user. Their tenant is the owner's, so tenant claims stay consistent.
    const claims = { [claim]: tokens.get(other.name)!.payload[claim] };
    variants.push({
      label: `payload naming ${other.name} under ${owner.name}'s signature`,
      forgery: { from: owner.name, kind: "claims", claims },
      rightful: other.name,
    });
  } else {
    variants.push({
      label: "payload altered under the original signature",
      forgery: { from: owner.name, kind: "claims", claims: { qaas_forged: true } },
      rightful: owner.name,
    });
  }
  return variants;
}

async function sendForged(
  run: ProbeRun,
  token: string,
  prepared: PreparedRequest,
): Promise<HttpExchange | undefined> {
  const spec = run.sessions.withToken(token, toSpec(run.target.baseUrl, prepared));
  return run.client.send(spec, { user: "forged-token" });
}

function finding(
  run: ProbeRun,
  operation: Operation,
  prepared: PreparedRequest,
  owner: ProfileUser,
  ownerAnswer: HttpExchange,
  anonymous: HttpExchange,
  accepted: Accepted[],
): EnvelopeDraft {
  const key = operationKey(operation);
  const first = accepted[0]!;
  const kinds = accepted.map((entry) => entry.variant.label);
  const forgedStep = { ...stepFromPrepared("forged", prepared, undefined), forge: first.variant.forgery };
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: `${key} accepts a forged session token (${kinds.join("; ")})`,
    summary: `${key} refuses anonymous callers (${statusOf(anonymous)}) but answered ${statusOf(first.exchange)} with the data of ${first.variant.rightful} to a token forged from ${owner.name}'s (${kinds.join("; ")}), twice. The server does not verify token signatures, so anyone can mint a session for any user.`,
    impact: "Anyone can forge a session for any user, administrators included, without a password.",
    location: endpointLocation(operation),
    severity: severityFor("broken-authentication"),
    confidence: 0.9,
    discriminator: "forged-token",
    exchanges: [
      { label: `forged (${first.variant.label})`, exchange: first.exchange },
      { label: "owner", exchange: ownerAnswer },
      { label: "anonymous", exchange: anonymous },
      { label: "confirm", exchange: first.confirm },
      ...accepted
        .slice(1)
        .map((entry) => ({ label: `forged (${entry.variant.label})`, exchange: entry.exchange })),
    ],
    repro: {
      title: `${key} refuses a forged session token`,
      steps: [forgedStep],
      assertions: [
        {
          kind: "status_in",
          step: "forged",
          values: [401, 403],
          message: `a token forged from ${owner.name}'s (${first.variant.label}) must be refused`,
        },
      ],
    },
    suggestedFixArea: "token verification",
  });
}

function isSelf(operation: Operation): boolean {
  return SELF_SEGMENT.test(lastStaticSegment(operation.path) ?? "");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === "object" && !Array.isArray(value);
}
