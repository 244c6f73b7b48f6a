import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { LocationKind } from "../../envelope/taxonomy.ts";
import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { candidateSecrets } from "./guessable-secrets.ts";
import { withCookies } from "./session-tokens.ts";
import { randomSecret, type SignedSessionCookie, signedSessionCookies } from "./signed-sessions.ts";
import type { SourceSecret } from "./source-secrets.ts";
import { secretsInSource } from "./source-secrets.ts";

// A session cookie signed with a secret anyone can know: one written in the application's source (a
// literal, or the fallback of an environment read) or a well-known default. The run's own session cookie is
// checked offline against each candidate; a match is proven by signing the same session data afresh with
// that secret and seeing the server accept it as the user on a page anonymous callers cannot read, while
// the same data under a random secret is refused. Whoever holds the secret can sign any session: another
// user's id, an administrator's role.

/** Defaults people leave in session-signing configuration (framework docs, tutorials, generators). */
const SESSION_DEFAULTS = [
  "dev",
  "development key",
  "development",
  "secret key",
  "super secret key",
  "super-secret-key",
  "my secret key",
  "change-me-in-production",
  "changeme-in-production",
  "insecure-secret-key",
  "not-so-secret",
  "keyboard cat",
  "your secret key",
  "secret123",
  "flask-secret",
  "flask-secret-key",
  "session-secret",
  "cookie-secret",
];

const MAX_READS = 8;

interface SessionCookie {
  user: ProfileUser;
  cookie: SignedSessionCookie;
}

interface Proof {
  operation: Operation;
  spec: HttpRequestSpec;
  real: HttpExchange;
  anonymous: HttpExchange;
  forged: HttpExchange;
  control: HttpExchange;
}

export async function checkCookieForgery(
  run: ProbeRun,
  users: readonly ProfileUser[],
  operations: readonly Operation[],
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const stats: Record<string, unknown> = { signed_cookie: false, candidates_tried: 0, secret_found: false };
  const sessions = await signedSessions(run, users);
  if (sessions.length === 0) {
    run.notes.push(
      "no session cookie signed in a format qaas reads (itsdangerous, cookie-signature, Keygrip): cookie forgery does not apply",
    );
    return { candidates: [], stats };
  }
  stats.signed_cookie = true;
  stats.formats = sessions.map((session) => session.cookie.format);
  const fromSource = secretsInSource(run.context.target?.root);
  const names = [run.target.profile?.name, run.map.openapi?.title, run.map.target];
  const secrets = [
    ...new Set([
      ...fromSource.map((secret) => secret.value),
      ...SESSION_DEFAULTS,
      ...candidateSecrets(names).offline,
    ]),
  ];
  stats.candidates_tried = secrets.length;
  for (const session of sessions) {
    const cracked = session.cookie.crack(secrets);
    if (!cracked) continue;
    stats.secret_found = true;
    run.masker.addSecret(cracked.secret);
    const proof = await prove(run, session, cracked.secret, operations);
    if (!proof) {
      run.notes.push(
        `the session cookie of ${session.user.name} (${session.cookie.format}) is signed with a guessable secret, but no cookie signed with it could be shown accepted`,
      );
      continue;
    }
    const place = fromSource.find((secret) => secret.value === cracked.secret);
    return { candidates: [findingOf(run, session, cracked.scheme, place, proof, operations)], stats };
  }
  return { candidates: [], stats };
}

/** Each signed cookie of the first user who has one, a non-administrator's first. */
async function signedSessions(run: ProbeRun, users: readonly ProfileUser[]): Promise<SessionCookie[]> {
  const ordered = [...users].sort((a, b) => Number(isAdminLike(a.role)) - Number(isAdminLike(b.role)));
  for (const user of ordered) {
    const credential = await run.sessions.signIn(user.name, run.client).catch(() => undefined);
    if (!credential) continue;
    const found = signedSessionCookies(credential.cookies);
    if (found.length > 0) return found.map((cookie) => ({ user, cookie }));
  }
  return [];
}

/** Reads without path parameters the user's role reaches, the caller's own pages first. */
export function readsFor(operations: readonly Operation[], user: ProfileUser): Operation[] {
  const role = user.role.toLowerCase();
  return operations
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" &&
        !operation.graphql &&
        !isAuthOperation(operation) &&
        pathParameterNames(operation.path).length === 0 &&
        (operation.roles === undefined ||
          operation.roles.some((name) => name.toLowerCase() === role) ||
          operation.roles.length === 0) &&
        !(operation.roles ?? []).includes("anonymous"),
    )
    .sort((a, b) => ownScore(b) - ownScore(a))
    .slice(0, MAX_READS);
}

function ownScore(operation: Operation): number {
  return /\/(me|my|profile|account|self|dashboard)(\/|$)/i.test(toTemplateForm(operation.path)) ? 1 : 0;
}

export function admitted(exchange: HttpExchange | undefined): boolean {
  const status = exchange?.response?.status ?? 0;
  return status >= 200 && status < 300;
}

/** Words that show whose page it is: the user's sign-in name and profile name. */
function identityWords(user: ProfileUser): string[] {
  return [user.username, user.name].filter((word): word is string => Boolean(word) && word!.length >= 4);
}

async function prove(
  run: ProbeRun,
  session: SessionCookie,
  secret: string,
  operations: readonly Operation[],
): Promise<Proof | undefined> {
  const forgedCookies = session.cookie.forge(secret);
  const controlCookies = session.cookie.forge(randomSecret());
  // A cookie that signs in is a credential: never in evidence.
  for (const value of [...Object.values(forgedCookies), ...Object.values(session.cookie.cookies)])
    run.masker.addSecret(value);
  const words = identityWords(session.user);
  for (const operation of readsFor(operations, session.user)) {
    const spec = toSpec(run.target.baseUrl, buildRequest(operation, { seed: uniqueSeed() }));
    const real = await send(run, session.user.name, spec);
    if (!real || !admitted(real)) continue;
    const anonymous = await send(run, undefined, spec);
    if (!anonymous || admitted(anonymous)) continue;
    const forged = await run.client.send(withCookies(spec, forgedCookies), { user: "forged-cookie" });
    if (!admitted(forged) || forged.response?.status !== real.response?.status) continue;
    // Whose page it is: the words that name the user on their real page must name them on the forged one.
    const naming = words.filter(
      (word) => real.response!.body.includes(word) && !anonymous.response!.body.includes(word),
    );
    if (naming.length > 0 && !naming.every((word) => forged.response!.body.includes(word))) continue;
    const control = await run.client.send(withCookies(spec, controlCookies), { user: "forged-cookie" });
    if (admitted(control)) continue;
    return { operation, spec, real, anonymous, forged, control };
  }
  return undefined;
}

function findingOf(
  run: ProbeRun,
  session: SessionCookie,
  scheme: string,
  place: SourceSecret | undefined,
  proof: Proof,
  operations: readonly Operation[],
): EnvelopeDraft {
  const signIn = operations.find((operation) => signInEndpoint(run, operation));
  const read = operationKey(proof.operation);
  const where = place ? `written in ${place.file}:${place.line}` : "a well-known default";
  const related: Array<{ kind: LocationKind; value: string }> = [endpointLocation(proof.operation)];
  if (place) related.push({ kind: "file", value: place.file });
  const names = Object.keys(session.cookie.cookies)
    .map((name) => `\`${name}\``)
    .join(" and ");
  const forgeable = session.cookie.carriesData;
  const secretWords = place ? "written in the source" : "that is a well-known default";
  const signed = `The session cookie ${names} of ${session.user.name} is signed (${session.cookie.format}, ${scheme}) with a secret ${where}; checked offline against the run's own cookie.`;
  const answers = `${read} answered it ${proof.forged.response?.status} (the user's own page, which anonymous callers get ${proof.anonymous.response?.status}), while the same ${forgeable ? "data" : "id"} under a random secret got ${proof.control.response?.status}.`;
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: forgeable
      ? `Session cookies are signed with a secret ${secretWords} (${place?.file ?? names}): anyone can forge a session`
      : `The session id cookie is signed with a secret ${secretWords} (${place?.file ?? names}): its signature protects nothing`,
    summary: forgeable
      ? `${signed} The same session data written afresh and signed with that secret was accepted: ${answers} Whoever reads the source, or tries the default, signs any session they like: another user's id, an administrator's.`
      : `${signed} The cookie carries an opaque session id, and the signature is what keeps anyone from presenting an id the server never issued to them: ${answers} Whoever reads the source, or tries the default, can sign any session id they learn (from a log, a shared store, a referrer) and the server will take it.`,
    impact: forgeable
      ? "Complete authentication bypass: any account, administrators included, can be impersonated without a password."
      : "The secret no longer protects sessions: a leaked or guessed session id becomes a working cookie, and every cookie this app signed can be minted by anyone with its source.",
    location: signIn ? endpointLocation(signIn) : endpointLocation(proof.operation),
    related,
    severity: forgeable ? "critical" : "medium",
    confidence: 0.95,
    discriminator: "session-cookie-forgery",
    exchanges: [
      {
        label: forgeable ? "forged cookie accepted" : "cookie signed with the found secret accepted",
        exchange: proof.forged,
      },
      { label: "random-secret control refused", exchange: proof.control },
      { label: "anonymous", exchange: proof.anonymous },
    ],
    suggestedFixArea:
      "the session secret: read it from the environment with no fallback, fail at start-up when it is missing, rotate it",
  });
}

/** Whether `operation` is the profile's sign-in endpoint. */
export function signInEndpoint(run: ProbeRun, operation: Operation): boolean {
  const endpoint = run.target.profile?.auth?.login?.endpoint?.trim().match(/^([A-Za-z]+)\s+(\S+)$/);
  return Boolean(
    endpoint &&
      endpoint[1]!.toUpperCase() === operation.method.toUpperCase() &&
      toTemplateForm(endpoint[2]!) === toTemplateForm(operation.path),
  );
}
