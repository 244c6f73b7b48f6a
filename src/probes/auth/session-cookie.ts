import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { Credential } from "../session/credential.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { admitted, readsFor, signInEndpoint } from "./cookie-forgery.ts";
import { withForgedToken } from "./session-tokens.ts";

// The cookie that carries a signed-in session, as the sign-in sets it: readable by every script on the
// page (no HttpOnly: one XSS anywhere and the session is the attacker's), kept by the browser for months
// or years (a stolen or forgotten session that never ends), or sent over plain HTTP by an HTTPS site (no
// Secure). Two signals before a finding: the attribute as the sign-in set it, and proof that the cookie is
// the session — a page anonymous callers are refused answers with that cookie alone.

/** Longest a session cookie may be kept (Flask's permanent sessions default to 31 days). */
export const MAX_SESSION_DAYS = 31;

export interface SessionCookieFlaw {
  attribute: "HttpOnly" | "Secure" | "lifetime";
  /** What the sign-in set, in words that follow "is set": `without HttpOnly`, `to last 1157 days`. */
  found: string;
}

/** What is wrong with a session cookie's Set-Cookie line, at `now` and for a site at `baseUrl`. */
export function sessionCookieFlaws(line: string, baseUrl: string, now = Date.now()): SessionCookieFlaw[] {
  const attributes = line
    .split(";")
    .slice(1)
    .map((part) => part.trim().toLowerCase());
  const flaws: SessionCookieFlaw[] = [];
  if (!attributes.includes("httponly")) flaws.push({ attribute: "HttpOnly", found: "without HttpOnly" });
  if (baseUrl.startsWith("https:") && !attributes.includes("secure"))
    flaws.push({ attribute: "Secure", found: "without Secure on an HTTPS site" });
  const days = lifetimeDays(line, now);
  if (days !== undefined && days > MAX_SESSION_DAYS)
    flaws.push({ attribute: "lifetime", found: `to last ${Math.round(days)} days` });
  return flaws;
}

/** Days the browser keeps the cookie (Max-Age wins over Expires); undefined for a browser-session cookie. */
export function lifetimeDays(line: string, now = Date.now()): number | undefined {
  const maxAge = line.match(/;\s*max-age\s*=\s*(-?\d+)/i);
  if (maxAge) return Number(maxAge[1]) / 86_400;
  const expires = line.match(/;\s*expires\s*=\s*([^;]+)/i);
  if (!expires) return undefined;
  const at = Date.parse(expires[1]!.trim());
  return Number.isNaN(at) ? undefined : (at - now) / 86_400_000;
}

interface SessionCookie {
  user: ProfileUser;
  name: string;
  value: string;
  line: string;
  signIn: HttpExchange;
}

export async function checkSessionCookie(
  run: ProbeRun,
  users: readonly ProfileUser[],
  operations: readonly Operation[],
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const cookie = await sessionCookieOf(run, users);
  if (!cookie) return { candidates: [], stats: { session_cookie: null } };
  const flaws = sessionCookieFlaws(cookie.line, run.target.baseUrl);
  const stats: Record<string, unknown> = {
    session_cookie: cookie.name,
    flaws: flaws.map((flaw) => flaw.found),
  };
  if (flaws.length === 0) return { candidates: [], stats };
  const proof = await carriesSession(run, cookie, operations);
  stats.proven = proof !== undefined;
  if (!proof) {
    run.notes.push(
      `the cookie ${cookie.name} set at sign-in has ${flaws.map((flaw) => flaw.found).join(", ")}, but no page showed it is the session (accepted alone, refused without it)`,
    );
    return { candidates: [], stats };
  }
  return { candidates: [findingOf(run, cookie, flaws, proof, operations)], stats };
}

/** The cookie a non-administrator's sign-in set that carries the session, when exactly one does. */
async function sessionCookieOf(
  run: ProbeRun,
  users: readonly ProfileUser[],
): Promise<SessionCookie | undefined> {
  const ordered = [...users].sort((a, b) => Number(isAdminLike(a.role)) - Number(isAdminLike(b.role)));
  for (const user of ordered) {
    const credential = await run.sessions.signIn(user.name, run.client).catch(() => undefined);
    if (!credential) continue;
    const names = sessionCookies(run, credential);
    if (names.length !== 1) return undefined;
    const name = names[0]!;
    const found = setAtSignIn(credential).get(name);
    const value = credential.cookies[name] ?? credential.token;
    if (!found || !value) continue;
    return { user, name, value, line: found.line, signIn: found.exchange };
  }
  return undefined;
}

/** The cookies that carry the session: the one the recipe names, else every cookie when no token travels apart. */
export function sessionCookies(run: ProbeRun, credential: Credential): string[] {
  const [kind, name] = (run.target.profile?.auth?.login.apply_as ?? "").split(":");
  if (kind === "cookie" && name) return [name];
  if (credential.token !== undefined) return [];
  return Object.keys(credential.cookies).filter((cookie) => !/csrf|xsrf/i.test(cookie));
}

/** Each cookie's last Set-Cookie line in the sign-in's answers, with the answer that carried it. */
export function setAtSignIn(credential: Credential): Map<string, { line: string; exchange: HttpExchange }> {
  const set = new Map<string, { line: string; exchange: HttpExchange }>();
  for (const exchange of credential.chain ?? (credential.exchange ? [credential.exchange] : [])) {
    for (const line of exchange.response?.setCookies ?? [])
      set.set(line.split("=", 1)[0]!.trim(), { line, exchange });
  }
  return set;
}

interface Proof {
  operation: Operation;
  alone: HttpExchange;
  anonymous: HttpExchange;
}

/** A page anonymous callers are refused that answers the user's request carrying only the cookie. */
async function carriesSession(
  run: ProbeRun,
  cookie: SessionCookie,
  operations: readonly Operation[],
): Promise<Proof | undefined> {
  for (const operation of readsFor(operations, cookie.user)) {
    const spec = toSpec(run.target.baseUrl, buildRequest(operation, { seed: uniqueSeed() }));
    const anonymous = await send(run, undefined, spec);
    if (!anonymous) continue;
    const refused =
      run.sessions.endedSession(anonymous) !== undefined ||
      [401, 403].includes(anonymous.response?.status ?? 0);
    if (!refused) continue;
    const alone = await run.client.send(
      withForgedToken(run, { kind: "cookie", name: cookie.name }, cookie.value, spec),
      {
        user: cookie.user.name,
      },
    );
    if (!admitted(alone) || run.sessions.endedSession(alone) !== undefined) continue;
    return { operation, alone, anonymous };
  }
  return undefined;
}

function findingOf(
  run: ProbeRun,
  cookie: SessionCookie,
  flaws: readonly SessionCookieFlaw[],
  proof: Proof,
  operations: readonly Operation[],
): EnvelopeDraft {
  const signIn = operations.find((operation) => signInEndpoint(run, operation));
  const found = flaws.map((flaw) => flaw.found).join(", ");
  const httpOnly = flaws.some((flaw) => flaw.attribute === "HttpOnly");
  const secure = flaws.some((flaw) => flaw.attribute === "Secure");
  const lifetime = flaws.find((flaw) => flaw.attribute === "lifetime");
  const risks = [
    httpOnly
      ? "any script on the site's pages can read it, so one cross-site scripting flaw hands the session to an attacker"
      : undefined,
    secure ? "the browser also sends it over plain HTTP, where anyone on the network reads it" : undefined,
    lifetime
      ? `the browser keeps it ${lifetime.found.replace(/^to last /, "")} (more than ${MAX_SESSION_DAYS}), so a session left on a shared computer or stolen once stays usable long after`
      : undefined,
  ].filter(Boolean);
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `The session cookie ${cookie.name} is set ${found}`,
    summary: `Signing in as ${cookie.user.name} sets \`${cookie.name}\` ${found}. It is the session: ${proof.operation.method} ${proof.operation.path} answered ${proof.alone.response?.status} to a request carrying that cookie alone, and ${proof.anonymous.response?.status} without it. ${risks.join("; ")}.`,
    impact: "Session theft: whoever gets the cookie is the user until it ends.",
    location: signIn ? endpointLocation(signIn) : endpointLocation(proof.operation),
    related: [endpointLocation(proof.operation)],
    severity: httpOnly || secure ? "medium" : "low",
    confidence: 0.9,
    discriminator: "session-cookie-attributes",
    exchanges: [
      { label: "sign-in sets the cookie", exchange: cookie.signIn },
      { label: "the cookie alone is the session", exchange: proof.alone },
      { label: "refused without it", exchange: proof.anonymous },
    ],
    repro: {
      title: `The session cookie ${cookie.name} is HttpOnly${secure ? ", Secure" : ""} and kept at most ${MAX_SESSION_DAYS} days`,
      steps: [],
      assertions: [
        {
          kind: "sign_in_cookie",
          as: cookie.user.name,
          cookie: cookie.name,
          httpOnly: httpOnly || undefined,
          secure: secure || undefined,
          maxDays: lifetime ? MAX_SESSION_DAYS : undefined,
          message: `the session cookie must be set with ${[httpOnly ? "HttpOnly" : "", secure ? "Secure" : "", lifetime ? `a lifetime of at most ${MAX_SESSION_DAYS} days` : ""].filter(Boolean).join(", ")}`,
        },
      ],
    },
    suggestedFixArea:
      "the session cookie's options (httpOnly, secure, maxAge) in the session middleware's configuration",
  });
}
