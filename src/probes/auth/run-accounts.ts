import { buildRequest, toSpec } from "../api/request-builder.ts";
import { isIdName } from "../auditor/access-slots.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { newThrowawayIdentity } from "../session/throwaway-users.ts";
import { findToken, stringAt } from "../session/token-search.ts";
import type { CredentialOperation } from "./credential-operations.ts";
import { isPasswordField } from "./credential-operations.ts";

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
  token: string;
  exchanges: HttpExchange[];
}

/** Registers a fresh account with the application's own sign-up and signs it in; undefined when either fails. */
export async function registerAccount(
  run: ProbeRun,
  registration: CredentialOperation,
  signIn: CredentialOperation,
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
  if (registration.encoding === "form") prepared.contentType = "application/x-www-form-urlencoded";
  const registered = await send(run, undefined, toSpec(run.target.baseUrl, prepared));
  if (!registered || !isSuccess(registered)) return undefined;
  const signedIn = await signInAs(run, signIn, identity, password);
  if (!signedIn.token || !signedIn.exchange) return undefined;
  run.masker.addSecret(signedIn.token);
  return {
    identity,
    password,
    token: signedIn.token,
    answers: [registered.response?.json, signedIn.exchange.response?.json],
    exchanges: [registered, signedIn.exchange],
  };
}

/** One sign-in; its session token when it was accepted (the profile's token place, else any token-like key). */
export async function signInAs(
  run: ProbeRun,
  signIn: CredentialOperation,
  identity: string,
  password: string,
): Promise<{ exchange?: HttpExchange; token?: string }> {
  const prepared = buildRequest(signIn.operation, { seed: "sign-in" });
  const body =
    prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body)
      ? { ...(prepared.body as Record<string, unknown>) }
      : {};
  body[signIn.identityField] = identity;
  if (signIn.passwordField) body[signIn.passwordField] = password;
  prepared.body = body;
  prepared.contentType =
    signIn.encoding === "form" ? "application/x-www-form-urlencoded" : "application/json";
  const exchange = await send(run, undefined, toSpec(run.target.baseUrl, prepared));
  if (!exchange || !isSuccess(exchange)) return { exchange };
  const json = exchange.response?.json;
  const place = run.target.profile?.auth?.login.token_from;
  const token =
    place?.startsWith("body:") && signIn.profileSignIn
      ? stringAt(json, place.slice(5))
      : findToken(json)?.token;
  return { exchange, token };
}

/** A strong password no account has yet. */
export function freshPassword(): string {
  return newThrowawayIdentity().password;
}

/** The application's sign-up and sign-in, which make the run's own accounts; or why there are none. */
export function accountMakers(
  credentials: readonly CredentialOperation[],
): { registration: CredentialOperation; signIn: CredentialOperation } | string {
  const registration = credentials.find((entry) => entry.role === "registration" && entry.passwordField);
  const signIn =
    credentials.find((entry) => entry.role === "sign-in" && entry.profileSignIn) ??
    credentials.find((entry) => entry.role === "sign-in");
  if (!registration) return "no registration operation to make the run's own accounts";
  if (!signIn) return "no sign-in operation to sign the run's own accounts in";
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
