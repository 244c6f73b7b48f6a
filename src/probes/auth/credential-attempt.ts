import { randomBytes } from "node:crypto";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { credentialValues } from "../session/credential.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, submitForm } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { CredentialOperation } from "./credential-operations.ts";

// One anonymous attempt at a credential operation, as a fresh visitor: the account name (and password, or
// reset token) in the fields the operation takes, every other field valid. A form is submitted as a
// browser would (its page first, for a fresh CSRF token); redirects are not followed, so where the
// application sends the visitor stays part of the answer.

export interface AttemptValues {
  identity: string;
  password?: string;
  token?: string;
}

export interface Attempt {
  values: AttemptValues;
  exchange: HttpExchange;
}

export async function attempt(
  run: ProbeRun,
  entry: CredentialOperation,
  values: AttemptValues,
): Promise<Attempt | undefined> {
  const fields: Record<string, string> = { [entry.identityField]: values.identity };
  if (entry.passwordField && values.password !== undefined) fields[entry.passwordField] = values.password;
  if (entry.tokenField && values.token !== undefined) fields[entry.tokenField] = values.token;
  if (entry.operation.form) {
    const submitted = await submitForm(run, undefined, entry.operation, fields, { followRedirects: false });
    return submitted ? { values, exchange: submitted.exchange } : undefined;
  }
  const prepared = buildRequest(entry.operation, { seed: uniqueSeed() });
  const body =
    prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body) ? prepared.body : {};
  prepared.body = { ...(body as Record<string, unknown>), ...fields };
  if (entry.encoding === "form") prepared.contentType = "application/x-www-form-urlencoded";
  else if (entry.encoding === "json" || !prepared.contentType) prepared.contentType = "application/json";
  const exchange = await send(run, undefined, toSpec(run.target.baseUrl, prepared));
  return exchange ? { values, exchange } : undefined;
}

/** A profile user's right password at a sign-in: a request the application is meant to accept. */
export async function rightPassword(
  run: ProbeRun,
  entry: CredentialOperation,
  user: ProfileUser,
): Promise<Attempt | undefined> {
  const { username, password } = credentialValues(
    user,
    {
      baseUrl: run.target.baseUrl,
      client: run.client,
      now: Date.now,
      masker: run.masker,
      memory: run.sessions.memory,
    },
    true,
  );
  run.masker.addPassword(password);
  return attempt(run, entry, { identity: identityOf(entry, user) ?? username, password });
}

/** The name a profile user signs in with in `entry`'s account field; undefined when it does not fit. */
export function identityOf(entry: CredentialOperation, user: ProfileUser): string | undefined {
  const name = user.username ?? user.name;
  if (entry.identityIsEmail && !name.includes("@")) return undefined;
  return name;
}

/** An account name nobody has, shaped like `like` (an address at the same domain when it is one). */
export function unknownIdentity(like: string | undefined, emailField: boolean): string {
  const id = randomBytes(5).toString("hex");
  const domain = like?.includes("@")
    ? like.slice(like.lastIndexOf("@") + 1)
    : emailField
      ? "example.com"
      : undefined;
  return domain ? `qaas.nobody.${id}@${domain}` : `qaasnobody${id}`;
}

/** A password nobody has: strong enough for any complexity rule, so it is refused for being wrong only. */
export function wrongPassword(): string {
  return `Qa9!wrong-${randomBytes(6).toString("hex")}`;
}

/** A reproduction step that sends what `exchange` sent, anonymously (a form's CSRF token as it was). */
export function stepOf(name: string, exchange: HttpExchange): ReproStep {
  const url = new URL(exchange.request.url);
  const contentType = Object.entries(exchange.request.headers).find(
    ([header]) => header.toLowerCase() === "content-type",
  )?.[1];
  return {
    name,
    method: exchange.request.method,
    path: `${url.pathname}${url.search}`,
    ...(exchange.request.body !== undefined ? { body: exchange.request.body } : {}),
    ...(contentType ? { contentType } : {}),
  };
}
