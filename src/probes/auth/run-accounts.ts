import type { Operation } from "../../map/system-map.ts";
import { updatesCaller } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { isIdName } from "../auditor/access-slots.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { Credential } from "../session/credential.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, submitForm } from "../session/probe-run.ts";
import type { SessionPool } from "../session/session-pool.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { newThrowawayIdentity } from "../session/throwaway-users.ts";
import { findToken, stringAt } from "../session/token-search.ts";
import type { CredentialOperation } from "./credential-operations.ts";
import { credentialOperations, isPasswordField } from "./credential-operations.ts";

// Accounts the run makes for itself through the application's own sign-up, and sign-ins with any
// credentials: what checks that change or inspect an account use, so no seeded account is ever touched.
// Names are plainly qaas's; passwords are random and strong.

const ID_KEY = /^(id|_id|uuid|user_?id|userId|account_?id|accountId)$/;
const ACCOUNT_SEGMENT = /^(users?|accounts?|members?|profiles?|customers?|people|persons?)$/i;
const VERSION_SEGMENT = /^(v\d+(\.\d+)?|api)$/i;

export interface RunAccount {
  identity: string;
  password: string;
  /** The registration's and the sign-in's answers, where an account id may be read. */
  answers: unknown[];
  exchanges: HttpExchange[];
  /**
   * How its requests travel: as a session of the pool (cookies, CSRF header and re-sign-in, when the
   * profile's recipe signs accounts in), else with the session token its sign-in answered.
   */
  via: { user: string } | { token: string };
}

/** Registers a fresh account with the application's own sign-up and signs it in; undefined when either fails. */
export async function registerAccount(
  run: ProbeRun,
  registration: CredentialOperation,
  signIn: CredentialOperation | undefined,
  extra: Record<string, unknown> = {},
): Promise<RunAccount | undefined> {
  const { username, email, password } = newThrowawayIdentity();
  const identity = registration.identityIsEmail ? email : username;
  const prepared = buildRequest(registration.operation, { seed: username });
  const body =
    prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body)
      ? { ...(prepared.body as Record<string, unknown>) }
      : {};
  for (const field of registration.fields) {
    if (field === registration.identityField) body[field] = identity;
    else if (/e-?mail/i.test(field)) body[field] = email;
    else if (isPasswordField(field) || /confirm|repeat|again|password_?2|verify/i.test(field))
      body[field] = password;
  }
  prepared.body = { ...body, ...extra };
  const registered = await sendRegistration(run, registration, prepared);
  if (!registered) return undefined;
  const signedIn = await signInAs(run, signIn, { identity, password, email });
  if (!signedIn.accepted || !signedIn.exchange) return undefined;
  const secrets = { username: identity, email, password };
  const via = signedIn.credential
    ? { user: run.sessions.adoptAccount(secrets, signedIn.credential) }
    : { token: signedIn.token! };
  if ("token" in via) run.masker.addSecret(via.token);
  return {
    identity,
    password,
    via,
    answers: [registered.response?.json, signedIn.exchange.response?.json],
    exchanges: [registered, signedIn.exchange],
  };
}

/**
 * The registration as the application takes it: a form learned from a page is submitted as a browser would
 * (its page loaded first, so a CSRF token comes with it), anything else sent as built. A form answers a
 * failure with the form again, so only an error status counts against it here: the sign-in that follows
 * is what proves the account exists.
 */
async function sendRegistration(
  run: ProbeRun,
  registration: CredentialOperation,
  prepared: PreparedRequest,
): Promise<HttpExchange | undefined> {
  const body = prepared.body as Record<string, unknown>;
  if (registration.operation.form) {
    const fields = Object.fromEntries(Object.entries(body).map(([name, value]) => [name, String(value)]));
    const submitted = await submitForm(run, undefined, registration.operation, fields);
    const posted = submitted?.chain[0];
    return posted?.response && posted.response.status < 400 ? posted : undefined;
  }
  if (registration.encoding === "form") prepared.contentType = "application/x-www-form-urlencoded";
  const registered = await send(run, undefined, toSpec(run.target.baseUrl, prepared));
  return registered && isSuccess(registered) ? registered : undefined;
}

export interface SignInAttempt {
  /** The sign-in's request: the evidence either way. */
  exchange?: HttpExchange;
  accepted: boolean;
  /** The session the profile's recipe made (cookies, CSRF token), when it signed the account in. */
  credential?: Credential;
  /** The session token the answer carried, when the inventory's sign-in operation was used. */
  token?: string;
}

/**
 * One sign-in with any credentials: the way the profile's users sign in when its recipe takes a name and
 * password (a form with its CSRF token, a JSON login with its cookie), else the inventory's sign-in
 * operation, accepted when it answers a session token (the profile's token place, else any token-like key).
 */
export async function signInAs(
  run: ProbeRun,
  signIn: CredentialOperation | undefined,
  account: { identity: string; password: string; email?: string },
): Promise<SignInAttempt> {
  if (run.sessions.signsInByPassword()) {
    const attempt = await run.sessions.signInWith(run.client, {
      username: account.identity,
      email: account.email ?? account.identity,
      password: account.password,
    });
    const exchange =
      attempt.credential?.exchange ??
      attempt.exchanges.find((sent) => sent.request.method !== "GET") ??
      attempt.exchanges.at(-1);
    return { exchange, accepted: attempt.credential !== undefined, credential: attempt.credential };
  }
  if (!signIn) return { accepted: false };
  const prepared = buildRequest(signIn.operation, { seed: "sign-in" });
  const body =
    prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body)
      ? { ...(prepared.body as Record<string, unknown>) }
      : {};
  body[signIn.identityField] = account.identity;
  if (signIn.passwordField) body[signIn.passwordField] = account.password;
  prepared.body = body;
  prepared.contentType =
    signIn.encoding === "form" ? "application/x-www-form-urlencoded" : "application/json";
  const exchange = await send(run, undefined, toSpec(run.target.baseUrl, prepared));
  if (!exchange || !isSuccess(exchange)) return { exchange, accepted: false };
  const json = exchange.response?.json;
  const place = run.target.profile?.auth?.login.token_from;
  const token =
    place?.startsWith("body:") && signIn.profileSignIn
      ? stringAt(json, place.slice(5))
      : findToken(json)?.token;
  return { exchange, accepted: token !== undefined, token };
}

/** Sends `spec` as the run's own account. */
export function sendAsAccount(
  run: ProbeRun,
  account: RunAccount,
  spec: HttpRequestSpec,
): Promise<HttpExchange | undefined> {
  return "user" in account.via
    ? send(run, account.via.user, spec)
    : send(run, undefined, run.sessions.withToken(account.via.token, spec));
}

// Keyed on the run's session pool, which every tool of a run shares: one account serves them all.
const ownAccounts = new WeakMap<SessionPool, Promise<ProfileUser | undefined>>();

/**
 * One signed-in account the run made itself, for requests that change the caller's own account (a profile
 * form, `PATCH /api/me`): a throw-away user of the profile's sign-up, else an account registered through
 * the application's own. One per run; undefined when neither can be made, and then a later tool tries
 * again (the first may have met a spent budget or a busy server).
 */
export function ownAccountUser(run: ProbeRun): Promise<ProfileUser | undefined> {
  let pending = ownAccounts.get(run.sessions);
  if (!pending) {
    const made = makeOwnAccount(run).catch(() => undefined);
    ownAccounts.set(run.sessions, made);
    void made.then((user) => {
      if (!user) ownAccounts.delete(run.sessions);
    });
    pending = made;
  }
  return pending;
}

async function makeOwnAccount(run: ProbeRun): Promise<ProfileUser | undefined> {
  if (run.target.profile?.auth?.signup?.allowed) return run.sessions.throwawayUser(run.client);
  const makers = accountMakers(run, credentialOperations(run.map, run.target.profile));
  if (typeof makers === "string") return undefined;
  const account = await registerAccount(run, makers.registration, makers.signIn);
  return account && "user" in account.via ? run.sessions.user(account.via.user) : undefined;
}

/**
 * Who may send `operation`: the run's own account for an update of the caller itself (undefined when the
 * run has none: nobody may send it), else `users` (none: anonymously).
 */
export async function sendersOf(
  run: ProbeRun,
  operation: Operation,
  users: readonly ProfileUser[],
): Promise<readonly ProfileUser[] | undefined> {
  if (!updatesCaller(operation)) return users;
  const own = await ownAccountUser(run);
  return own ? [own] : undefined;
}

/** A strong password no account has yet. */
export function freshPassword(): string {
  return newThrowawayIdentity().password;
}

/**
 * The application's sign-up and the sign-in that opens what it registers (none needed when the profile's
 * recipe signs accounts in); or why the run can make no account of its own.
 */
export function accountMakers(
  run: ProbeRun,
  credentials: readonly CredentialOperation[],
): { registration: CredentialOperation; signIn: CredentialOperation | undefined } | string {
  const registration = credentials.find((entry) => entry.role === "registration" && entry.passwordField);
  const signIn =
    credentials.find((entry) => entry.role === "sign-in" && entry.profileSignIn) ??
    credentials.find((entry) => entry.role === "sign-in");
  if (!registration) return "no registration operation to make the run's own accounts";
  if (!signIn && !run.sessions.signsInByPassword())
    return "no sign-in operation to sign the run's own accounts in";
  return { registration, signIn };
}

/**
 * The path parameter that names an account, when it is the path's only one and follows a segment that
 * says so (`/users/v1/{username}/email`, `/api/accounts/{id}`): where an account's own settings live.
 */
export function accountParameter(path: string): string | undefined {
  const names = pathParameterNames(path);
  if (names.length !== 1) return undefined;
  const segments = toTemplateForm(path).split("/").filter(Boolean);
  const index = segments.indexOf(`{${names[0]}}`);
  const before = segments.slice(0, Math.max(index, 0)).filter((segment) => !VERSION_SEGMENT.test(segment));
  const last = before.at(-1);
  return last && ACCOUNT_SEGMENT.test(last) ? names[0] : undefined;
}

/** The account's key for a path: its id when the parameter names one and an answer gives it, else its name. */
export function accountKey(account: RunAccount, parameter: string): string | undefined {
  if (!isIdName(parameter)) return account.identity;
  for (const answer of account.answers) {
    const id = idIn(answer, 0);
    if (id !== undefined) return id;
  }
  return undefined;
}

function idIn(value: unknown, depth: number): string | undefined {
  if (depth > 2 || !value || typeof value !== "object" || Array.isArray(value)) return undefined;
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (ID_KEY.test(key) && (typeof inner === "number" || (typeof inner === "string" && inner.length <= 64)))
      return String(inner);
  }
  for (const inner of Object.values(value as Record<string, unknown>)) {
    const found = idIn(inner, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
