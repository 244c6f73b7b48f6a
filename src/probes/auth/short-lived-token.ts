import type { Operation } from "../../map/system-map.ts";
import { requestSchema } from "../api/request-builder.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl, matchesTemplate } from "../http/target-url.ts";
import { propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import { CookieJar } from "../session/cookie-jar.ts";
import { credentialValues, fillTemplate, parseEndpoint } from "../session/credential.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { findToken } from "../session/token-search.ts";
import { tokenFromChain } from "../session/token-source.ts";
import type { Jwt } from "./jwt.ts";
import { expiresAt, parseJwt } from "./jwt.ts";
import type { SessionJwt } from "./session-tokens.ts";

// A token the server signed itself that has already expired: the only honest way to ask whether an
// operation checks `exp` when the signing key is unknown. Either the run's own token lives briefly (some
// applications issue one-minute tokens), or the sign-in lets the client choose a lifetime (`ttl`,
// `expires_in`…) and the probe asks for the shortest one. Nothing is waited for beyond a bound.

/** Longest a probe waits, from now, for a token to be expired beyond the leeway. */
export const MAX_EXPIRY_WAIT_MS = 130_000;
/**
 * How far past `exp` a token must be before its acceptance counts: verifiers commonly allow some clock
 * skew (a minute in several frameworks), which is tolerance, not a defect.
 */
export const EXPIRY_LEEWAY_MS = 65_000;

const LIFETIME_FIELD =
  /^(ttl|expires?_?in|expiry|expiration|lifetime|life_?time|duration|max_?age|valid_?for|validity|exp(_?seconds)?|timeout)$/i;

export interface ShortLivedToken {
  token: string;
  jwt: Jwt;
  expiresAt: number;
  /** How it was had, for the evidence. */
  how: string;
  /** The sign-in exchange that asked for a short lifetime, when one was sent. */
  exchange?: HttpExchange;
  /** The lifetime field and value sent, for the reproduction. */
  lifetime?: { field: string; value: number };
}

/** A token of `owner`'s that expires soon enough to wait for, or undefined (with the reason in the notes). */
export async function shortLivedToken(
  run: ProbeRun,
  owner: SessionJwt,
  leewayMs: number = EXPIRY_LEEWAY_MS,
): Promise<ShortLivedToken | undefined> {
  const now = Date.now();
  const own = expiresAt(owner.jwt);
  if (own !== undefined && waitable(own, now, leewayMs)) {
    return { token: owner.token, jwt: owner.jwt, expiresAt: own, how: "the run's own session token" };
  }
  const recipe = run.target.profile?.auth?.login;
  if (recipe?.kind !== "json" || !recipe.endpoint || owner.carrier.kind !== "recipe") return undefined;
  const endpoint = parseEndpoint(owner.user.name, recipe.endpoint, "auth.login.endpoint");
  const operation = run.map.operations.find(
    (candidate) =>
      candidate.method.toUpperCase() === endpoint.method &&
      matchesTemplate(candidate.path, endpoint.path) !== undefined,
  );
  const field = operation ? lifetimeField(operation) : undefined;
  if (!field) return undefined;
  const values = credentialValues(owner.user, signInEnvironment(run), true);
  const body = {
    ...fillTemplate(recipe.body ?? { username: "{username}", password: "{password}" }, values),
    [field.name]: field.shortest,
  };
  const exchange = await run.client.send(
    {
      method: endpoint.method,
      url: joinUrl(run.target.baseUrl, endpoint.path),
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    },
    { signIn: true, user: owner.user.name },
  );
  const token = recipe.token_from
    ? tokenFromChain(recipe.token_from, [exchange], new CookieJar())
    : findToken(exchange.response?.json)?.token;
  const jwt = parseJwt(token);
  const expiry = jwt ? expiresAt(jwt) : undefined;
  if (!token || !jwt || expiry === undefined) return undefined;
  run.masker.addSecret(token);
  if (!waitable(expiry, Date.now(), leewayMs)) {
    run.notes.push(
      `the sign-in's ${field.name}=${field.shortest} still gave a token living ${Math.round((expiry - Date.now()) / 1000)} s: expiry not tested`,
    );
    return undefined;
  }
  return {
    token,
    jwt,
    expiresAt: expiry,
    how: `a sign-in asking for ${field.name}=${field.shortest}`,
    exchange,
    lifetime: { field: field.name, value: field.shortest },
  };
}

function waitable(expiry: number, now: number, leewayMs: number): boolean {
  return expiry + leewayMs - now <= MAX_EXPIRY_WAIT_MS;
}

/** The sign-in body's integer lifetime property and the shortest value its schema allows (at least 1). */
export function lifetimeField(operation: Operation): { name: string; shortest: number } | undefined {
  const schema = requestSchema(operation);
  if (!schema) return undefined;
  for (const [name, property] of Object.entries(propertiesOf(schema))) {
    const type = schemaType(property);
    if ((type !== "integer" && type !== "number") || !LIFETIME_FIELD.test(name)) continue;
    const minimum = typeof property.minimum === "number" ? property.minimum : 1;
    return { name, shortest: Math.max(1, Math.ceil(minimum)) };
  }
  return undefined;
}

function signInEnvironment(run: ProbeRun) {
  return {
    baseUrl: run.target.baseUrl,
    client: run.client,
    now: Date.now,
    masker: run.masker,
    memory: run.sessions.memory,
  };
}
