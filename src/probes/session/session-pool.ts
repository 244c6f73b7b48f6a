import { QaasError } from "../../errors.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { RunContext } from "../../tools/context.ts";
import type { HttpClient } from "../http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { Masker } from "../http/masking.ts";
import type { Credential, LoginRecipe, ProfileUser } from "./sign-in.ts";
import { DEFAULT_RECIPE, signIn } from "./sign-in.ts";

interface UserSession {
  user: ProfileUser;
  credential: Credential | undefined;
  /** Bumped on every sign-in, so concurrent 401s trigger one re-login, not one each. */
  generation: number;
  pending: Promise<Credential> | undefined;
  signIns: number;
  /** Re-logins whose retry still answered 401: the endpoint refuses this user, the token was fine. */
  uselessRelogins: number;
  lastSignInAt: number;
}

export interface SessionSummary {
  user: string;
  role: string;
  tenant: string | undefined;
  signed_in: boolean;
  sign_ins: number;
  expires_at: string | undefined;
}

/** Refresh this long before a declared expiry, so a request never leaves with a token about to die. */
const EXPIRY_MARGIN_MS = 2000;
const RELOGIN_COOLDOWN_MS = 30_000;

/**
 * One session per profile user, shared by every agent and tool of a run (kept in `context.shared`), so a
 * matrix check never mixes identities. Signs in lazily, again before a declared expiry, and again when a
 * request answers 401.
 */
export class SessionPool {
  readonly masker = new Masker();
  private readonly sessions = new Map<string, UserSession>();
  private readonly recipe: LoginRecipe | undefined;

  constructor(
    readonly profile: TargetProfile | undefined,
    readonly baseUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    this.recipe = profile?.auth?.login;
    for (const user of profile?.users ?? []) {
      this.sessions.set(user.name, {
        user,
        credential: undefined,
        generation: 0,
        pending: undefined,
        signIns: 0,
        uselessRelogins: 0,
        lastSignInAt: 0,
      });
    }
  }

  users(): ProfileUser[] {
    return [...this.sessions.values()].map((session) => session.user);
  }

  user(name: string): ProfileUser {
    const session = this.sessions.get(name);
    if (!session) {
      throw new QaasError(
        "UNKNOWN_USER",
        `no user "${name}" in the target profile; users: ${[...this.sessions.keys()].join(", ") || "(none)"}`,
      );
    }
    return session.user;
  }

  /** Signs in (or reuses a live session); `force` signs in again whatever the state. */
  async signIn(name: string, client: HttpClient, force = false): Promise<Credential> {
    const session = this.sessionOf(name);
    if (!force && session.credential && !this.expired(session.credential)) return session.credential;
    return this.refresh(session, client, force ? undefined : session.generation);
  }

  /**
   * Sends a request as `user` (undefined: anonymous). A signed-in request that answers 401 signs in again
   * once and is retried, unless re-logins for this user keep being refused (the endpoint denies them).
   */
  async send(client: HttpClient, user: string | undefined, spec: HttpRequestSpec): Promise<HttpExchange> {
    if (user === undefined) return client.send(spec);
    const session = this.sessionOf(user);
    const credential = await this.signIn(user, client);
    const generation = session.generation;
    const exchange = await client.send(this.apply(credential, spec), { user });
    if (exchange.response?.status !== 401 || !this.refreshable() || !this.mayRelogin(session))
      return exchange;
    const fresh = await this.refresh(session, client, generation);
    const retry = await client.send(this.apply(fresh, spec), { user });
    session.uselessRelogins = retry.response?.status === 401 ? session.uselessRelogins + 1 : 0;
    return retry;
  }

  /** The request as `user` would send it (credential applied), without sending it. */
  async prepare(client: HttpClient, user: string, spec: HttpRequestSpec): Promise<HttpRequestSpec> {
    return this.apply(await this.signIn(user, client), spec);
  }

  /**
   * The request carrying `token` where the recipe puts a session token, and nothing else of any session:
   * how a probe replays a forged or altered token.
   */
  withToken(token: string, spec: HttpRequestSpec): HttpRequestSpec {
    return this.apply({ token, cookies: {}, obtainedAt: 0, expiresAt: undefined }, spec);
  }

  summaries(): SessionSummary[] {
    return [...this.sessions.values()].map((session) => ({
      user: session.user.name,
      role: session.user.role,
      tenant: session.user.tenant,
      signed_in: session.credential !== undefined,
      sign_ins: session.signIns,
      expires_at: session.credential?.expiresAt
        ? new Date(session.credential.expiresAt).toISOString()
        : undefined,
    }));
  }

  private sessionOf(name: string): UserSession {
    this.user(name);
    return this.sessions.get(name)!;
  }

  private refreshable(): boolean {
    return this.recipe?.kind === "json" || this.recipe?.kind === "form";
  }

  private mayRelogin(session: UserSession): boolean {
    return session.uselessRelogins < 2 || this.now() - session.lastSignInAt > RELOGIN_COOLDOWN_MS;
  }

  private expired(credential: Credential): boolean {
    return credential.expiresAt !== undefined && this.now() >= credential.expiresAt - EXPIRY_MARGIN_MS;
  }

  /** Single-flight: callers that saw the same generation share one sign-in. */
  private refresh(
    session: UserSession,
    client: HttpClient,
    seenGeneration: number | undefined,
  ): Promise<Credential> {
    if (seenGeneration !== undefined && session.generation !== seenGeneration && session.credential) {
      return Promise.resolve(session.credential);
    }
    if (session.pending) return session.pending;
    const pending = signIn(session.user, this.recipe, this.baseUrl, client, this.now())
      .then((credential) => {
        session.credential = credential;
        session.generation += 1;
        session.signIns += 1;
        session.lastSignInAt = this.now();
        this.masker.addSecret(credential.token);
        for (const value of Object.values(credential.cookies)) this.masker.addSecret(value);
        return credential;
      })
      .finally(() => {
        session.pending = undefined;
      });
    session.pending = pending;
    return pending;
  }

  private apply(credential: Credential, spec: HttpRequestSpec): HttpRequestSpec {
    const recipe = this.recipe ?? DEFAULT_RECIPE;
    const headers = { ...(spec.headers ?? {}) };
    const token = credential.token ?? "";
    const [kind, name = ""] = splitOnce(recipe.apply_as, ":");
    let url = spec.url;
    if (kind === "cookie") {
      const jar = { ...credential.cookies, [name]: token };
      headers.cookie = Object.entries(jar)
        .map(([cookie, value]) => `${cookie}=${value}`)
        .join("; ");
    } else if (kind === "query") {
      const separator = url.includes("?") ? "&" : "?";
      url = `${url}${separator}${encodeURIComponent(name)}=${encodeURIComponent(token)}`;
    } else {
      const header = name || "Authorization";
      // A scheme only makes sense in Authorization; custom headers (X-Api-Key) carry the bare token.
      headers[header.toLowerCase()] =
        header.toLowerCase() === "authorization" ? `${recipe.scheme} ${token}` : token;
    }
    return { ...spec, url, headers };
  }
}

function splitOnce(value: string, separator: string): [string, string | undefined] {
  const index = value.indexOf(separator);
  return index < 0 ? [value, undefined] : [value.slice(0, index), value.slice(index + 1)];
}

/** The run's session pool (created on first use) for the target at `baseUrl`. */
export function sessionPoolFor(context: RunContext, baseUrl: string): SessionPool {
  const key = `session:pool:${baseUrl}`;
  let pool = context.shared.get(key) as SessionPool | undefined;
  if (!pool) {
    pool = new SessionPool(context.target?.profile, baseUrl);
    context.shared.set(key, pool);
  }
  return pool;
}
