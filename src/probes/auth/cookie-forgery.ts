import { randomBytes } from "node:crypto";
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
import { withForgedToken } from "./session-tokens.ts";
import type { SignedCookie, SigningScheme } from "./signed-cookie.ts";
import { crackSignedCookie, parseSignedCookie, signCookie } from "./signed-cookie.ts";
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
  name: string;
  value: string;
  cookie: SignedCookie;
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
  const session = await signedSessionCookie(run, users);
  if (!session) {
    run.notes.push(
      "no session cookie in the signed-cookie (itsdangerous) format: cookie forgery does not apply",
    );
    return { candidates: [], stats };
  }
  stats.signed_cookie = true;
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
  const cracked = crackSignedCookie(session.cookie, secrets);
  if (!cracked) return { candidates: [], stats };
  stats.secret_found = true;
  run.masker.addSecret(cracked.secret);
  const proof = await prove(run, session, cracked, operations);
  if (!proof) {
    run.notes.push(
      `the session cookie of ${session.user.name} is signed with a guessable secret, but no forged cookie could be shown accepted`,
    );
    return { candidates: [], stats };
  }
  const place = fromSource.find((secret) => secret.value === cracked.secret);
  return { candidates: [findingOf(run, session, cracked.scheme, place, proof, operations)], stats };
}

/** The first user's session cookie that has the signed-cookie shape, a non-administrator's first. */
async function signedSessionCookie(
  run: ProbeRun,
  users: readonly ProfileUser[],
): Promise<SessionCookie | undefined> {
  const ordered = [...users].sort((a, b) => Number(isAdminLike(a.role)) - Number(isAdminLike(b.role)));
  for (const user of ordered) {
    const credential = await run.sessions.signIn(user.name, run.client).catch(() => undefined);
    if (!credential) continue;
    for (const [name, value] of Object.entries(credential.cookies)) {
      const cookie = parseSignedCookie(value);
      if (cookie) return { user, name, value, cookie };
    }
  }
  return undefined;
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
  cracked: { secret: string; scheme: SigningScheme },
  operations: readonly Operation[],
): Promise<Proof | undefined> {
  const carrier = { kind: "cookie" as const, name: session.name };
  const forgedValue = signCookie(session.cookie.data, cracked.secret, cracked.scheme);
  const controlValue = signCookie(session.cookie.data, randomBytes(16).toString("hex"), cracked.scheme);
  // A cookie that signs in is a credential: never in evidence.
  run.masker.addSecret(forgedValue);
  run.masker.addSecret(session.value);
  const words = identityWords(session.user);
  for (const operation of readsFor(operations, session.user)) {
    const spec = toSpec(run.target.baseUrl, buildRequest(operation, { seed: uniqueSeed() }));
    const real = await send(run, session.user.name, spec);
    if (!real || !admitted(real)) continue;
    const anonymous = await send(run, undefined, spec);
    if (!anonymous || admitted(anonymous)) continue;
    const forged = await run.client.send(withForgedToken(run, carrier, forgedValue, spec), {
      user: "forged-cookie",
    });
    if (!admitted(forged) || forged.response?.status !== real.response?.status) continue;
    // Whose page it is: the words that name the user on their real page must name them on the forged one.
    const naming = words.filter(
      (word) => real.response!.body.includes(word) && !anonymous.response!.body.includes(word),
    );
    if (naming.length > 0 && !naming.every((word) => forged.response!.body.includes(word))) continue;
    const control = await run.client.send(withForgedToken(run, carrier, controlValue, spec), {
      user: "forged-cookie",
    });
    if (admitted(control)) continue;
    return { operation, spec, real, anonymous, forged, control };
  }
  return undefined;
}

function findingOf(
  run: ProbeRun,
  session: SessionCookie,
  scheme: SigningScheme,
  place: SourceSecret | undefined,
  proof: Proof,
  operations: readonly Operation[],
): EnvelopeDraft {
  const signIn = operations.find((operation) => signInEndpoint(run, operation));
  const read = operationKey(proof.operation);
  const where = place ? `written in ${place.file}:${place.line}` : "a well-known default";
  const related: Array<{ kind: LocationKind; value: string }> = [endpointLocation(proof.operation)];
  if (place) related.push({ kind: "file", value: place.file });
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: `Session cookies are signed with a secret ${place ? "written in the source" : "that is a well-known default"} (${place?.file ?? session.name}): anyone can forge a session`,
    summary: `The session cookie \`${session.name}\` of ${session.user.name} is signed (itsdangerous format, ${scheme.digest} HMAC, salt "${scheme.salt}") with a secret ${where}; checked offline against the run's own cookie. The same session data signed afresh with that secret was accepted on ${read} (${proof.forged.response?.status}, the user's own page, which anonymous callers get ${proof.anonymous.response?.status}), while the same data under a random secret got ${proof.control.response?.status}. Whoever reads the source, or tries the default, signs any session they like: another user's id, an administrator's.`,
    impact:
      "Complete authentication bypass: any account, administrators included, can be impersonated without a password.",
    location: signIn ? endpointLocation(signIn) : endpointLocation(proof.operation),
    related,
    severity: "critical",
    confidence: 0.95,
    discriminator: "session-cookie-forgery",
    exchanges: [
      { label: "forged cookie accepted", exchange: proof.forged },
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
