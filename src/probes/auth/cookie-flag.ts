import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildRequest, type PreparedRequest, toSpec } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { WriteNotAllowedError } from "../http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { sessionCookies, setAtSignIn } from "./session-cookie.ts";
import { withCookie, withCookies } from "./session-tokens.ts";

// Access decided by a flag the client keeps: the application sets a plain cookie — `admin=false`,
// `role=guest`, `env=console:disable`, `is_staff=0` — and later lets in whoever sends the other value. Any
// visitor can flip it in their own browser. Proven only where it matters: a read refused with the value as
// the application set it answers with the flipped value, and both answers repeat in the same order (a
// refusal that lifts once is the target's state changing, not the flag).

/** A cookie's value and the one that would grant more, word for word (`false` → `true`). */
const FLIPS: Record<string, string> = {
  false: "true",
  no: "yes",
  off: "on",
  disable: "enable",
  disabled: "enabled",
  deny: "allow",
  denied: "allowed",
  guest: "admin",
  anonymous: "admin",
  visitor: "admin",
  user: "admin",
  member: "admin",
  customer: "admin",
  viewer: "admin",
  readonly: "admin",
  basic: "admin",
};

/** Names under which a bare `0` is a flag rather than a count or an id. */
const ACCESS_NAME =
  /admin|role|auth|access|priv|staff|super|level|allow|enable|debug|grant|perm|^is_?[a-z]|mode|manager/i;

/** Reads visited once each to see which flags the application sets and which reads refuse. */
const MAX_READS = 80;
const MAX_FLAGS = 6;
const TRIES_PER_FLAG = 6;
/** Longer values are tokens or serialized state, not a flag a person sets. */
const MAX_FLAG_LENGTH = 40;

/**
 * The value that would grant more than `value` does, changing one word (case kept), or undefined when the
 * value is no recognisable flag.
 */
export function flippedFlag(name: string, value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_FLAG_LENGTH) return undefined;
  if (value === "0") return ACCESS_NAME.test(name) ? "1" : undefined;
  const words = value.split(/([^A-Za-z]+)/);
  const at = words.findIndex((word) => FLIPS[word.toLowerCase()] !== undefined);
  if (at < 0) return undefined;
  const word = words[at]!;
  const flipped = FLIPS[word.toLowerCase()]!;
  words[at] =
    word === word.toUpperCase() ? flipped.toUpperCase() : /^[A-Z]/.test(word) ? capital(flipped) : flipped;
  return words.join("");
}

const capital = (word: string) => `${word[0]!.toUpperCase()}${word.slice(1)}`;

/** Words of an answer that refuses the caller, in a short body that says so in place of the content. */
const REFUSAL =
  /access (is )?(denied|rejected|restricted)|not (allowed|authori[sz]ed|permitted)|forbidden|unauthori[sz]ed|permission denied|(admins?|administrators?) only|requires? (an )?admin|is disabled|log ?in required|sign ?in required/i;
const SHORT_REFUSAL = 2_000;

/** Refused: 401/403, a redirect to a sign-in, or a short answer that says so. */
export function refused(exchange: HttpExchange | undefined): boolean {
  const response = exchange?.response;
  if (!response) return false;
  if (response.status === 401 || response.status === 403) return true;
  if (response.status >= 300 && response.status < 400)
    return /log-?in|sign-?in|auth/i.test(response.headers.location ?? "");
  return response.status < 300 && response.body.length <= SHORT_REFUSAL && REFUSAL.test(response.body);
}

/** Served: a 2xx that refuses nothing and differs from the refusal. */
function served(exchange: HttpExchange | undefined, refusal: HttpExchange): boolean {
  const response = exchange?.response;
  if (!response || response.status < 200 || response.status >= 300 || refused(exchange)) return false;
  return response.body !== refusal.response?.body;
}

interface FlagCookie {
  name: string;
  value: string;
  flipped: string;
  /** Undefined: set on an anonymous visitor's answers. */
  user: ProfileUser | undefined;
  setBy: HttpExchange;
}

interface Proof {
  flag: FlagCookie;
  operation: Operation;
  prepared: PreparedRequest;
  asSet: HttpExchange;
  flipped: HttpExchange;
}

export async function checkCookieFlags(
  run: ProbeRun,
  users: readonly ProfileUser[],
  operations: readonly Operation[],
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const reads = operations
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" &&
        !operation.graphql &&
        !isAuthOperation(operation) &&
        pathParameterNames(operation.path).length === 0,
    )
    .slice(0, MAX_READS);
  const visits: Visit[] = [];
  for (const operation of reads) {
    const spec = toSpec(run.target.baseUrl, buildRequest(operation, { seed: uniqueSeed() }));
    const exchange = await sendAs(run, spec, "cookie-flag");
    if (exchange) visits.push({ operation, exchange });
  }
  const flags = [...anonymousFlags(visits), ...(await signInFlags(run, users))].slice(0, MAX_FLAGS);
  // Only a read that refuses can show a flag letting someone in: those an anonymous visitor was refused,
  // the ones whose own answer set the flag first.
  const refusing = visits.filter((visit) => refused(visit.exchange));
  const stats: Record<string, unknown> = {
    reads: reads.length,
    refused_anonymously: refusing.length,
    flags: flags.map((flag) => `${flag.name}=${flag.value} (${flag.user?.name ?? "anonymous"})`),
  };
  const candidates: EnvelopeDraft[] = [];
  for (const flag of flags) {
    const setsIt = (visit: Visit) => Number(visit.exchange === flag.setBy);
    const tries = [...refusing].sort((a, b) => setsIt(b) - setsIt(a)).slice(0, TRIES_PER_FLAG);
    const proof = await proveFlag(
      run,
      flag,
      tries.map((visit) => visit.operation),
    );
    if (proof) candidates.push(findingOf(run, proof));
  }
  return { candidates, stats };
}

interface Visit {
  operation: Operation;
  exchange: HttpExchange;
}

/** Flag cookies the application set on an anonymous visitor's answers, each name once. */
function anonymousFlags(visits: readonly Visit[]): FlagCookie[] {
  const found = new Map<string, FlagCookie>();
  for (const { exchange } of visits) {
    for (const line of exchange.response?.setCookies ?? []) {
      const flag = flagOf(line, undefined, exchange);
      if (flag && !found.has(flag.name)) found.set(flag.name, flag);
    }
  }
  return [...found.values()];
}

/** Flag cookies a non-administrator's sign-in sets beside the session. */
async function signInFlags(run: ProbeRun, users: readonly ProfileUser[]): Promise<FlagCookie[]> {
  const user = users.find((candidate) => !isAdminLike(candidate.role));
  if (!user) return [];
  const credential = await run.sessions.signIn(user.name, run.client).catch(() => undefined);
  if (!credential) return [];
  const session = new Set(sessionCookies(run, credential));
  return [...setAtSignIn(credential).entries()]
    .filter(([name]) => !session.has(name))
    .flatMap(([, { line, exchange }]) => flagOf(line, user, exchange) ?? []);
}

function flagOf(line: string, user: ProfileUser | undefined, setBy: HttpExchange): FlagCookie | undefined {
  const pair = line.split(";", 1)[0]!;
  const at = pair.indexOf("=");
  if (at <= 0) return undefined;
  const name = pair.slice(0, at).trim();
  let value = pair.slice(at + 1).trim();
  try {
    value = decodeURIComponent(value.replace(/^"(.*)"$/, "$1"));
  } catch {
    return undefined;
  }
  if (/csrf|xsrf|session|sid$/i.test(name)) return undefined;
  const flipped = flippedFlag(name, value);
  return flipped === undefined ? undefined : { name, value, flipped, user, setBy };
}

/** A read refused with the value as set and served with the flipped one, twice in the same order. */
async function proveFlag(
  run: ProbeRun,
  flag: FlagCookie,
  reads: readonly Operation[],
): Promise<Proof | undefined> {
  for (const operation of reads) {
    const prepared = buildRequest(operation, { seed: uniqueSeed() });
    const spec = toSpec(run.target.baseUrl, prepared);
    const asSet = await sendWith(run, flag, spec, flag.value);
    if (!asSet || !refused(asSet)) continue;
    const flipped = await sendWith(run, flag, spec, flag.flipped);
    if (!served(flipped, asSet)) continue;
    const asSetAgain = await sendWith(run, flag, spec, flag.value);
    if (!refused(asSetAgain)) continue;
    const flippedAgain = await sendWith(run, flag, spec, flag.flipped);
    if (!served(flippedAgain, asSet) || flippedAgain?.response?.status !== flipped!.response!.status)
      continue;
    return { flag, operation, prepared, asSet, flipped: flipped! };
  }
  return undefined;
}

/** The request as the flag's owner sends it, the flag cookie holding `value`. */
async function sendWith(
  run: ProbeRun,
  flag: FlagCookie,
  spec: HttpRequestSpec,
  value: string,
): Promise<HttpExchange | undefined> {
  const encoded = encodeURIComponent(value);
  if (!flag.user) return sendAs(run, withCookies(spec, { [flag.name]: encoded }), "cookie-flag");
  const signedIn = await run.sessions.prepare(run.client, flag.user.name, spec).catch(() => undefined);
  if (!signedIn) return undefined;
  return sendAs(run, withCookie(signedIn, flag.name, encoded), flag.user.name);
}

/**
 * The request exactly as built (the session layer would put the flag back as the jar holds it); undefined
 * when the client refuses it (a read that looks like signing out, a write the target does not allow).
 */
async function sendAs(
  run: ProbeRun,
  spec: HttpRequestSpec,
  label: string,
): Promise<HttpExchange | undefined> {
  try {
    return await run.client.send(spec, { user: label });
  } catch (error) {
    if (error instanceof WriteNotAllowedError) return undefined;
    throw error;
  }
}

function findingOf(run: ProbeRun, proof: Proof): EnvelopeDraft {
  const { flag, operation } = proof;
  const read = operationKey(operation);
  const who = flag.user ? flag.user.name : "an anonymous visitor";
  const statusOf = (exchange: HttpExchange) => exchange.response?.status ?? 0;
  return buildFinding(run, {
    domain: "security",
    defectClass: "missing-authorization",
    title: `${read} lets in whoever sets the cookie ${flag.name} to ${JSON.stringify(flag.flipped)} (the application sets ${JSON.stringify(flag.value)})`,
    summary: `The application set the cookie ${flag.name}=${flag.value} on ${who}'s answers (${flag.setBy.request.method} ${new URL(flag.setBy.request.url).pathname}). ${read} refused ${who} with that value (${statusOf(proof.asSet)}) and answered ${statusOf(proof.flipped)} once the cookie said ${flag.flipped}, twice in a row each: the decision rests on a value the client keeps and can change.`,
    impact:
      "Anyone can grant themselves the access the flag stands for by editing a cookie in their browser: no credential, no exploit.",
    location: endpointLocation(operation),
    severity: "high",
    confidence: 0.9,
    discriminator: `cookie-flag:${flag.name}`,
    exchanges: [
      { label: "cookie as the application set it: refused", exchange: proof.asSet },
      { label: "cookie flipped: served", exchange: proof.flipped },
    ],
    ...(flag.user
      ? {}
      : {
          repro: {
            title: `${read} decides access on the server, not on the cookie ${flag.name}`,
            steps: [
              stepFromPrepared("as-set", withHeader(proof.prepared, flag.name, flag.value), undefined),
              stepFromPrepared("flipped", withHeader(proof.prepared, flag.name, flag.flipped), undefined),
            ],
            assertions: [
              {
                kind: "same_response" as const,
                steps: ["as-set", "flipped"] as [string, string],
                message: `changing the cookie ${flag.name} must not change what the server lets the caller do`,
              },
            ],
          },
        }),
    suggestedFixArea:
      "keep roles and feature access on the server (the session or the user record); treat every cookie as input",
  });
}

function withHeader(prepared: PreparedRequest, name: string, value: string): PreparedRequest {
  return { ...prepared, headers: { ...prepared.headers, cookie: `${name}=${encodeURIComponent(value)}` } };
}
