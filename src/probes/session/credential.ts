import { QaasError } from "../../errors.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { HttpClient } from "../http/http-client.ts";
import { BudgetExhaustedError } from "../http/http-client.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { Masker } from "../http/masking.ts";
import type { CookieJar } from "./cookie-jar.ts";
import type { MetaCsrf } from "./csrf.ts";
import { resolveSecretReference } from "./secret-reference.ts";

export type ProfileUser = TargetProfile["users"][number];
export type LoginRecipe = NonNullable<TargetProfile["auth"]>["login"];
export type SignupRecipe = NonNullable<NonNullable<TargetProfile["auth"]>["signup"]>;

/**
 * recipe: the profile's auth.login; secret: a password or token variable; page: loading the sign-in page or
 * its form; request: the sign-in request itself; verify: the application answered but did not sign the
 * user in; token: signed in, but no credential could be taken from the answer; signup: registering a
 * throw-away user.
 */
export type SignInStep = "recipe" | "secret" | "page" | "request" | "verify" | "token" | "signup";

/** Names the user and the step, so a person knows which credential or which part of the recipe to fix. */
export class SignInError extends QaasError {
  constructor(
    readonly user: string,
    readonly step: SignInStep,
    detail: string,
  ) {
    super("SIGN_IN_FAILED", `sign-in as user "${user}" failed at step "${step}": ${detail}`);
  }
}

/** What a successful sign-in yields; applied to every request sent as that user. */
export interface Credential {
  /** The token placed by `apply_as`; undefined when the session cookies are the whole credential. */
  token: string | undefined;
  /** The session's cookies now: a live view of `jar`. */
  readonly cookies: Record<string, string>;
  /** Every cookie the application set for this session (sign-in, redirects, later rotations). */
  jar: CookieJar;
  /** The cookie the token came from: the token follows it when the application rotates it. */
  tokenCookie?: string;
  /** The CSRF token the application's pages hand their scripts, refreshed from later pages. */
  metaCsrf?: MetaCsrf;
  obtainedAt: number;
  expiresAt: number | undefined;
  /** The sign-in request's exchange, for evidence of how the session was obtained (undefined for static tokens). */
  exchange?: HttpExchange;
  /** Every exchange of the sign-in in order: the page, the post, the redirects. */
  chain?: HttpExchange[];
}

/** What the sign-in layer remembers between sign-ins of one run. */
export interface SignInMemory {
  /**
   * The URL whose page showed the sign-in form, once found: later sign-ins load it first; null once every
   * candidate page was tried without one (later sign-ins post straight to the endpoint).
   */
  formPage?: string | null;
  /** Paths of the sign-in page, its form's action and the endpoint: landing there means "signed out". */
  signInPaths: Set<string>;
}

export interface SignInEnvironment {
  baseUrl: string;
  client: HttpClient;
  now: () => number;
  /** Every secret met on the way (tokens, cookies, in-memory passwords) is registered here. */
  masker: Masker;
  memory: SignInMemory;
  /** An in-memory password (a throw-away user's), used instead of users[].password. */
  password?: string;
  /** The user's e-mail address for `{email}` (a throw-away user's); else the username. */
  email?: string;
  /** When given, every exchange the sign-in sends is appended: the evidence of a refused sign-in. */
  sent?: HttpExchange[];
}

export const DEFAULT_RECIPE: LoginRecipe = {
  kind: "bearer",
  apply_as: "header:Authorization",
  scheme: "Bearer",
};

export function makeCredential(fields: Omit<Credential, "cookies">): Credential {
  const credential = { ...fields } as Credential;
  Object.defineProperty(credential, "cookies", { get: () => fields.jar.values(), enumerable: true });
  return credential;
}

/** `METHOD /path` split, or a recipe error naming the field. */
export function parseEndpoint(
  user: string,
  value: string | undefined,
  field: string,
): { method: string; path: string } {
  const match = (value ?? "").trim().match(/^([A-Za-z]+)\s+(\S+)$/);
  if (!match) {
    throw new SignInError(
      user,
      "recipe",
      `${field} must be "METHOD /path", got ${JSON.stringify(value ?? null)}`,
    );
  }
  return { method: match[1]!.toUpperCase(), path: match[2]! };
}

/** The user's credentials by placeholder; the password is read only when `needsPassword`. */
export function credentialValues(
  user: ProfileUser,
  environment: SignInEnvironment,
  needsPassword: boolean,
): { username: string; password: string; email: string } {
  const username = user.username ?? user.name;
  let password = "";
  if (needsPassword) {
    if (environment.password !== undefined) password = environment.password;
    else if (user.password) password = resolveSecret(user, user.password, `users[${user.name}].password`);
    else {
      throw new SignInError(
        user.name,
        "secret",
        `the sign-in needs a password but users[${user.name}].password is not set; add password: secret_ref:NAME`,
      );
    }
    environment.masker.addPassword(password);
  }
  return { username, password, email: environment.email ?? username };
}

/** Fills `{username}`, `{password}` and `{email}` in each value of a body template. */
export function fillTemplate(
  template: Record<string, string>,
  values: { username: string; password: string; email: string },
): Record<string, string> {
  const filled: Record<string, string> = {};
  for (const [key, value] of Object.entries(template)) {
    filled[key] = value
      .split("{username}")
      .join(values.username)
      .split("{email}")
      .join(values.email)
      .split("{password}")
      .join(values.password);
  }
  return filled;
}

export function templateNeedsPassword(template: Record<string, string> | undefined): boolean {
  return template === undefined || Object.values(template).some((value) => value.includes("{password}"));
}

/**
 * A failure of the sign-in's own requests as a SignInError of `step`; a spent budget stays what it is, so
 * the probe stops instead of recording a sign-in failure.
 */
export function stepError(user: string, step: SignInStep, error: unknown): Error {
  if (error instanceof BudgetExhaustedError) return error;
  return new SignInError(user, step, error instanceof Error ? error.message : String(error));
}

export function resolveSecret(user: ProfileUser, reference: string, where: string): string {
  try {
    return resolveSecretReference(reference, where);
  } catch (error) {
    throw new SignInError(user.name, "secret", error instanceof Error ? error.message : String(error));
  }
}

/** A declared TTL wins; else a JWT's own `exp`; else the session lives until the application ends it. */
export function expiryOf(
  token: string | undefined,
  ttlSeconds: number | undefined,
  now: number,
): number | undefined {
  if (ttlSeconds !== undefined) return now + ttlSeconds * 1000;
  const parts = token?.split(".") ?? [];
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { exp?: unknown };
    return typeof payload.exp === "number" ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** Registers every value of the session's cookies that could be a secret. */
export function maskCookies(masker: Masker, jar: CookieJar): void {
  for (const [name, value] of Object.entries(jar.values())) maskCookieValue(masker, name, value);
}

const SESSION_COOKIE = /sess|sid|auth|token|jwt|remember|login|user|xsrf|csrf/i;

export function maskCookieValue(masker: Masker, name: string, value: string): void {
  if (value.length >= 16 || (value.length >= 6 && SESSION_COOKIE.test(name))) masker.addSecret(value);
}
