import { QaasError } from "../../errors.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { HttpClient } from "../http/http-client.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import { resolveSecretReference } from "./secret-reference.ts";

export type ProfileUser = TargetProfile["users"][number];
export type LoginRecipe = NonNullable<TargetProfile["auth"]>["login"];

export type SignInStep = "recipe" | "secret" | "request" | "token";

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
  token: string | undefined;
  /** Cookies set by the sign-in response, sent along when the token travels as a cookie. */
  cookies: Record<string, string>;
  obtainedAt: number;
  expiresAt: number | undefined;
  /** The sign-in exchange, for evidence of how the session was obtained (undefined for static tokens). */
  exchange?: HttpExchange;
}

const TOKEN_KEYS = [
  "token",
  "access_token",
  "accessToken",
  "jwt",
  "id_token",
  "auth_token",
  "authToken",
  "session",
];

export const DEFAULT_RECIPE: LoginRecipe = {
  kind: "bearer",
  apply_as: "header:Authorization",
  scheme: "Bearer",
};

export async function signIn(
  user: ProfileUser,
  recipe: LoginRecipe | undefined,
  baseUrl: string,
  client: HttpClient,
  now: number,
): Promise<Credential> {
  if (!recipe || recipe.kind === "bearer" || recipe.kind === "api_key") {
    if (!user.token) {
      throw new SignInError(
        user.name,
        "recipe",
        recipe
          ? `auth.login.kind is ${recipe.kind} but users[${user.name}].token is not set; add token: secret_ref:NAME`
          : "the profile has no auth.login recipe and the user has no token; add auth.login (json, form, bearer or api_key)",
      );
    }
    const token = resolve(user, user.token, `users[${user.name}].token`);
    return { token, cookies: {}, obtainedAt: now, expiresAt: expiryOf(token, recipe?.ttl_seconds, now) };
  }
  const endpoint = (recipe.endpoint ?? "").trim().match(/^([A-Za-z]+)\s+(\S+)$/);
  if (!endpoint) {
    throw new SignInError(
      user.name,
      "recipe",
      `auth.login.endpoint must be "METHOD /path" for a ${recipe.kind} login, got ${JSON.stringify(recipe.endpoint ?? null)}`,
    );
  }
  const username = user.username ?? user.name;
  const template = recipe.body ?? { username: "{username}", password: "{password}" };
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(template)) {
    let filled = value.split("{username}").join(username);
    if (filled.includes("{password}")) {
      if (!user.password) {
        throw new SignInError(
          user.name,
          "secret",
          `the login body uses {password} but users[${user.name}].password is not set`,
        );
      }
      filled = filled.split("{password}").join(resolve(user, user.password, `users[${user.name}].password`));
    }
    fields[key] = filled;
  }
  const body =
    recipe.kind === "json"
      ? JSON.stringify(fields)
      : Object.entries(fields)
          .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
          .join("&");
  let exchange: HttpExchange;
  try {
    exchange = await client.send(
      {
        method: endpoint[1]!.toUpperCase(),
        url: joinUrl(baseUrl, endpoint[2]!),
        headers: {
          "content-type": recipe.kind === "json" ? "application/json" : "application/x-www-form-urlencoded",
          accept: "application/json, text/html;q=0.9, */*;q=0.8",
        },
        body,
      },
      { signIn: true, user: user.name },
    );
  } catch (error) {
    throw new SignInError(user.name, "request", error instanceof Error ? error.message : String(error));
  }
  const response = exchange.response;
  if (!response) {
    throw new SignInError(
      user.name,
      "request",
      `${recipe.endpoint} did not answer (${exchange.error ?? "no response"})`,
    );
  }
  if (response.status >= 400) {
    throw new SignInError(
      user.name,
      "request",
      `${recipe.endpoint} answered ${response.status}; check the username and the password variable, and auth.login.body`,
    );
  }
  const cookies = parseSetCookies(response.setCookies);
  const token = extractToken(recipe, exchange, cookies);
  if (token === undefined) {
    throw new SignInError(
      user.name,
      "token",
      recipe.token_from
        ? `no token at ${recipe.token_from} in the ${response.status} answer of ${recipe.endpoint}`
        : `could not find a token in the answer of ${recipe.endpoint} (tried body keys ${TOKEN_KEYS.join(", ")}, the Authorization header and cookies); set auth.login.token_from`,
    );
  }
  return { token, cookies, obtainedAt: now, expiresAt: expiryOf(token, recipe.ttl_seconds, now), exchange };
}

function resolve(user: ProfileUser, reference: string, where: string): string {
  try {
    return resolveSecretReference(reference, where);
  } catch (error) {
    throw new SignInError(user.name, "secret", error instanceof Error ? error.message : String(error));
  }
}

export function parseSetCookies(setCookies: readonly string[]): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const line of setCookies) {
    const first = line.split(";")[0] ?? "";
    const index = first.indexOf("=");
    if (index > 0) cookies[first.slice(0, index).trim()] = first.slice(index + 1).trim();
  }
  return cookies;
}

function extractToken(
  recipe: LoginRecipe,
  exchange: HttpExchange,
  cookies: Record<string, string>,
): string | undefined {
  const response = exchange.response!;
  const from = recipe.token_from?.match(/^(body|header|cookie):(.+)$/);
  if (from) {
    const [, source, name] = from as unknown as [string, string, string];
    if (source === "body") return stringAt(response.json, name);
    if (source === "header") return stripScheme(response.headers[name.toLowerCase()]);
    return cookies[name];
  }
  const applyCookie = recipe.apply_as.match(/^cookie:(.+)$/)?.[1];
  if (applyCookie && cookies[applyCookie]) return cookies[applyCookie];
  for (const key of TOKEN_KEYS) {
    const found = stringAt(response.json, key) ?? stringAt(response.json, `data.${key}`);
    if (found) return found;
  }
  const header = stripScheme(response.headers.authorization);
  if (header) return header;
  const [firstCookie] = Object.values(cookies);
  return firstCookie;
}

function stripScheme(value: string | undefined): string | undefined {
  if (!value) return undefined;
  return value.replace(/^(Bearer|Token)\s+/i, "").trim() || undefined;
}

/** `a.b.0.c` into a parsed JSON value; only a non-empty string (or number) counts as a token. */
export function stringAt(value: unknown, path: string): string | undefined {
  let current: unknown = value;
  for (const part of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  if (typeof current === "string" && current.length > 0) return current;
  if (typeof current === "number") return String(current);
  return undefined;
}

/** A declared TTL wins; else a JWT's own `exp`; else the session lives until a 401 says otherwise. */
function expiryOf(token: string, ttlSeconds: number | undefined, now: number): number | undefined {
  if (ttlSeconds !== undefined) return now + ttlSeconds * 1000;
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { exp?: unknown };
    return typeof payload.exp === "number" ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
