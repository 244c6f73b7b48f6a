import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { parseJwt, tamperedToken, unsignedToken } from "../auth/jwt.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { methodsFor, sendFor, stepOf } from "./finding-support.ts";
import { fieldValue } from "./graphql-answer.ts";
import { graphqlEffect } from "./graphql-effect.ts";
import { graphqlRequestBody } from "./graphql-request.ts";
import { askGraphql, type GraphqlAsked } from "./graphql-transport.ts";

// A JWT passed as a GraphQL argument (`me(token:)`, `viewer(jwt:)`, `session(accessToken:)`) and decoded
// without verifying its signature: anyone becomes anyone by writing the claims. Judged with the run's own
// sign-ins, sent anonymously so the argument alone carries the identity: user A's and user B's real tokens
// must get two different answers; then B's claims under A's signature, and B's claims with `alg: none`,
// must each get exactly B's answer, while a string that is no token gets neither answer.

const TOKEN_ARGUMENT = /^(?:(?:access|auth|id|session|bearer|refresh)?_?(?:token|jwt)|authorization)$/i;

interface TokenArgumentOperation {
  operation: Operation;
  field: string;
  argument: string;
}

/** Read-only root query fields whose only required input is one string argument named like a token. */
export function tokenArgumentOperations(operations: readonly Operation[]): TokenArgumentOperation[] {
  const found: TokenArgumentOperation[] = [];
  for (const operation of operations) {
    const graphql = operation.graphql;
    if (graphql?.kind !== "query" || graphqlEffect(graphql) !== "read") continue;
    const argument = graphql.arguments.find(
      (candidate) => TOKEN_ARGUMENT.test(candidate.name) && /^String!?$/.test(candidate.type),
    );
    if (!argument) continue;
    if (graphql.arguments.some((other) => other !== argument && other.required)) continue;
    found.push({ operation, field: graphql.field, argument: argument.name });
  }
  return found;
}

export async function checkTokenArguments(run: ProbeRun): Promise<EnvelopeDraft[]> {
  const targets = tokenArgumentOperations(run.map.operations);
  if (targets.length === 0) return [];
  const sessions = await sessionTokens(run);
  if (sessions.length < 2) return [];
  const drafts: EnvelopeDraft[] = [];
  for (const target of targets) {
    const draft = await checkOne(run, target, sessions);
    if (draft) drafts.push(draft);
  }
  return drafts;
}

interface SessionToken {
  user: string;
  role: string;
  token: string;
}

/** The JWT each profile user's sign-in returned (users without one are left out). */
async function sessionTokens(run: ProbeRun): Promise<SessionToken[]> {
  const tokens: SessionToken[] = [];
  for (const user of await usableUsers(run)) {
    const credential = await run.sessions.signIn(user.name, run.client).catch(() => undefined);
    if (credential?.token && parseJwt(credential.token))
      tokens.push({ user: user.name, role: user.role, token: credential.token });
  }
  return tokens;
}

async function checkOne(
  run: ProbeRun,
  target: TokenArgumentOperation,
  sessions: readonly SessionToken[],
): Promise<EnvelopeDraft | undefined> {
  const ask = (token: string) =>
    askGraphql(
      sendFor(run, undefined),
      `${run.target.baseUrl.replace(/\/$/, "")}${target.operation.path}`,
      graphqlRequestBody(target.operation, { [target.argument]: token }),
      methodsFor(run),
    );
  const answeredValue = (asked: GraphqlAsked | undefined) => {
    const value = fieldValue(asked?.answer, target.field);
    return value === undefined || value === null ? undefined : JSON.stringify(value);
  };
  // Two users whose real tokens get two different, non-empty answers.
  const answered: Array<{ session: SessionToken; asked: GraphqlAsked; value: string }> = [];
  for (const session of sessions) {
    const asked = await ask(session.token);
    const value = answeredValue(asked);
    if (asked && value && !answered.some((other) => other.value === value))
      answered.push({ session, asked, value });
    if (answered.length === 2) break;
  }
  if (answered.length < 2) return undefined;
  const [holder, victim] = answered as [(typeof answered)[number], (typeof answered)[number]];
  const holderJwt = parseJwt(holder.session.token)!;
  const victimClaims = parseJwt(victim.session.token)!.payload as Record<string, unknown>;
  const control = await ask("qaas-not-a-token");
  const controlValue = answeredValue(control);
  if (!control || controlValue === holder.value || controlValue === victim.value) return undefined;
  const forgeries = [
    { label: "tampered", token: tamperedToken(holderJwt, victimClaims) },
    { label: "alg-none", token: unsignedToken(holderJwt, victimClaims, "none") },
  ];
  const accepted: Array<{ label: string; asked: GraphqlAsked }> = [];
  for (const forgery of forgeries) {
    const asked = await ask(forgery.token);
    if (asked && answeredValue(asked) === victim.value) accepted.push({ label: forgery.label, asked });
  }
  if (accepted.length < 2) return undefined;
  const [first, second] = accepted as [(typeof accepted)[number], (typeof accepted)[number]];
  const path = target.operation.path;
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: `GraphQL ${target.field}(${target.argument}:) at ${path} accepts JWTs whose signature is not verified`,
    summary: `${target.field}(${target.argument}:) answered ${holder.session.user}'s and ${victim.session.user}'s real tokens differently. ${victim.session.user}'s claims under ${holder.session.user}'s signature got exactly ${victim.session.user}'s answer, and so did the same claims with alg "none" and no signature; a string that is no token got neither answer. Sent without any session: the argument alone decides who the caller is.`,
    impact: `Anyone can write a token claiming any identity (${victim.session.role === "admin" ? "an administrator's included" : "any user's"}) and read what ${target.field} answers that user.`,
    location: { kind: "endpoint", value: `POST ${path}` },
    severity: severityFor("broken-authentication"),
    confidence: 0.9,
    discriminator: `graphql-token-argument:${target.field}`,
    exchanges: [
      { label: "holder", exchange: holder.asked.exchange },
      { label: "victim", exchange: victim.asked.exchange },
      { label: first.label, exchange: first.asked.exchange },
      { label: second.label, exchange: second.asked.exchange },
      { label: "not-a-token", exchange: control.exchange },
    ],
    repro: {
      title: `GraphQL ${target.field}(${target.argument}:) refuses a token whose signature was not made by the server`,
      steps: [stepOf("forged", second.asked.exchange)],
      assertions: [
        {
          kind: "json_not_equals",
          step: "forged",
          ...identifyingValue(target.field, JSON.parse(holder.value), JSON.parse(victim.value)),
          message: `an unsigned token claiming ${victim.session.user} must not get ${victim.session.user}'s answer`,
        },
      ],
    },
    suggestedFixArea: `the ${target.field} resolver (verify the token's signature and algorithm before trusting its claims)`,
  });
}

const SECRET_KEY = /pass|secret|token|hash|key|salt|otp|pin/i;
const IDENTIFYING_KEY = /^(id|uuid|username|user_?name|login|email|name)$/i;

/**
 * What the test compares: the field of the victim's answer that tells the two users apart (an id, a user
 * name), never a secret. The whole answer may hold the victim's password, which evidence masks: an
 * assertion against a masked value never matches, and the test would pass while the defect exists.
 */
export function identifyingValue(
  field: string,
  holder: unknown,
  victim: unknown,
): { path: string; value: unknown } {
  if (!isRecord(holder) || !isRecord(victim)) return { path: `data.${field}`, value: victim };
  const telling = Object.keys(victim).filter(
    (key) =>
      !SECRET_KEY.test(key) &&
      ["string", "number"].includes(typeof victim[key]) &&
      JSON.stringify(victim[key]) !== JSON.stringify(holder[key]),
  );
  const key = telling.find((name) => IDENTIFYING_KEY.test(name)) ?? telling[0];
  return key === undefined
    ? { path: `data.${field}`, value: victim }
    : { path: `data.${field}.${key}`, value: victim[key] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
