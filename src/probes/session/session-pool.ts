import { QaasError } from "../../errors.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { RunContext } from "../../tools/context.ts";
import { isAccountStep } from "../http/account-guard.ts";
import type { HttpClient } from "../http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { Masker } from "../http/masking.ts";
import { applyCredential } from "./apply-credential.ts";
import { CookieJar } from "./cookie-jar.ts";
import type {
  Credential,
  LoginRecipe,
  ProfileUser,
  SignInEnvironment,
  SignInMemory,
  SignupRecipe,
} from "./credential.ts";
import { DEFAULT_RECIPE, makeCredential, maskCookieValue } from "./credential.ts";
import { maskCsrfTokens, metaCsrf } from "./csrf.ts";
import { isHtml, parseHtmlPage } from "./html-forms.ts";
import { sendWithJar } from "./redirects.ts";
import { signIn } from "./sign-in.ts";
import { signedOutReason } from "./signed-out.ts";
import { newThrowawayIdentity, registerThrowaway } from "./throwaway-users.ts";

interface UserSession {
  user: ProfileUser;
  credential: Credential | undefined;
  /** Bumped on every sign-in, so concurrent signs of a dead session trigger one re-login, not one each. */
  generation: number;
  pending: Promise<Credential> | undefined;
  signIns: number;
  /** Re-logins whose retry still looked signed out: the endpoint refuses this user, the session was fine. */
  uselessRelogins: number;
  lastSignInAt: number;
  /** The target's restart count when this session signed in (see `signIn`). */
  restartsAtSignIn: number;
  /** A throw-away user's secrets, kept in memory only. */
  throwaway?: { password: string; email: string };
  /** An account a probe registered through the application's own sign-up: no check's peer. */
  runAccount?: boolean;
}

/** An account the run registered itself, by the names it signs in with. */
export interface AccountSecrets {
  username: string;
  email: string;
  password: string;
}

export interface SessionSummary {
  user: string;
  role: string;
  tenant: string | undefined;
  signed_in: boolean;
  sign_ins: number;
  expires_at: string | undefined;
  /** What the session travels as: a token, cookies (names only), or both. */
  credential?: { token: boolean; cookies: string[]; csrf: boolean };
  /** A user qaas registered itself (auth.signup). */
  throwaway?: boolean;
}

export interface SendOptions {
  /**
   * Anonymous sends only: a jar to keep cookies in across sends. Without one each anonymous send is a
   * fresh visitor: no cookie is kept between probes.
   */
  jar?: CookieJar;
  /** Signed-in unsafe requests carry the CSRF header the application's scripts would add (default true). */
  csrf?: boolean;
}

/** Refresh this long before a declared expiry, so a request never leaves with a token about to die. */
const EXPIRY_MARGIN_MS = 2000;
const RELOGIN_COOLDOWN_MS = 30_000;

/**
 * One session per profile user, shared by every agent and tool of a run (kept in `context.shared`), so a
 * matrix check never mixes identities. Signs in lazily, again before a declared expiry, and again when an
 * answer shows the session has ended (a 401, a redirect to the sign-in page, the sign-in form itself).
 * Every cookie the application sets on a user's answers is kept for that user.
 */
export class SessionPool {
  readonly masker = new Masker();
  /** What sign-ins learned about the application: where its sign-in form is. */
  readonly memory: SignInMemory = { signInPaths: new Set() };
  private readonly sessions = new Map<string, UserSession>();
  private readonly recipe: LoginRecipe | undefined;
  private readonly signup: SignupRecipe | undefined;
  private throwawayAttempts = 0;

  constructor(
    readonly profile: TargetProfile | undefined,
    readonly baseUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    this.recipe = profile?.auth?.login;
    this.signup = profile?.auth?.signup;
    for (const path of [this.recipe?.page, this.recipe?.endpoint?.trim().split(/\s+/)[1]]) {
      if (path) this.memory.signInPaths.add(path);
    }
    for (const user of profile?.users ?? []) {
      this.sessions.set(user.name, this.newSession(user));
      this.masker.addPublicName(user.name);
      this.masker.addPublicName(user.username);
    }
  }

  /** The profile's users (throw-away users are listed by `throwawayUsers`). */
  users(): ProfileUser[] {
    return [...this.sessions.values()].filter((session) => !session.throwaway).map((session) => session.user);
  }

  /** Throw-away users registered so far in this run. */
  throwawayUsers(): ProfileUser[] {
    return [...this.sessions.values()]
      .filter((session) => session.throwaway && !session.runAccount)
      .map((session) => session.user);
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
    if (
      !force &&
      session.credential &&
      !this.expired(session.credential) &&
      !this.outlived(session, client)
    ) {
      return session.credential;
    }
    return this.refresh(session, client, force ? undefined : session.generation);
  }

  /**
   * Sends a request as `user` (undefined: anonymous). A signed-in request whose answer shows the session
   * ended signs in again once and is retried, unless re-logins for this user keep changing nothing.
   */
  async send(
    client: HttpClient,
    user: string | undefined,
    spec: HttpRequestSpec,
    options: SendOptions = {},
  ): Promise<HttpExchange> {
    if (user === undefined) return options.jar ? sendWithJar(client, options.jar, spec) : client.send(spec);
    const session = this.sessionOf(user);
    const credential = await this.signIn(user, client);
    const generation = session.generation;
    const exchange = await this.sendOnce(client, session, credential, spec, options);
    if (!this.refreshable() || !this.endedSession(exchange) || !this.mayRelogin(session)) return exchange;
    const fresh = await this.refresh(session, client, generation);
    const retry = await this.sendOnce(client, session, fresh, spec, options);
    session.uselessRelogins = this.endedSession(retry) ? session.uselessRelogins + 1 : 0;
    return retry;
  }

  /** The request as `user` would send it (credential, cookies and CSRF header applied), without sending it. */
  async prepare(client: HttpClient, user: string, spec: HttpRequestSpec): Promise<HttpRequestSpec> {
    return applyCredential(this.recipe ?? DEFAULT_RECIPE, await this.signIn(user, client), spec);
  }

  /**
   * The request carrying `token` where the recipe puts a session token, and nothing else of any session:
   * how a probe replays a forged or altered token.
   */
  withToken(token: string, spec: HttpRequestSpec): HttpRequestSpec {
    const credential = makeCredential({
      token,
      jar: new CookieJar(this.now),
      obtainedAt: 0,
      expiresAt: undefined,
    });
    return applyCredential(this.recipe ?? DEFAULT_RECIPE, credential, spec);
  }

  /** Whether the profile's recipe signs any account in with a name and password (a JSON or form login). */
  signsInByPassword(): boolean {
    return this.refreshable();
  }

  /**
   * One sign-in of an account the run registered, as the profile's users sign in: the credential, or why
   * it was refused; either way every exchange it sent, in order. No session is kept (see `adoptAccount`).
   */
  async signInWith(
    client: HttpClient,
    account: AccountSecrets,
  ): Promise<{ credential?: Credential; exchanges: HttpExchange[] }> {
    const exchanges: HttpExchange[] = [];
    const user = { name: `account-${account.username}`, role: "user", username: account.username };
    this.masker.addSecret(account.password);
    try {
      const credential = await signIn(user, this.recipe, {
        ...this.signInEnvironment(client, account),
        sent: exchanges,
      });
      return { credential, exchanges };
    } catch (error) {
      // A refused sign-in is the answer asked for; its exchanges are the evidence.
      if (!(error instanceof QaasError)) throw error;
      return { exchanges };
    }
  }

  /**
   * Keeps a signed-in account the run registered as a session of its own, so its requests carry its
   * cookies and CSRF header and sign in again when the session ends; answers its name for `send`.
   */
  adoptAccount(account: AccountSecrets, credential: Credential): string {
    const name = `account-${account.username}`;
    const session = this.newSession({ name, role: "user", username: account.username });
    session.throwaway = { password: account.password, email: account.email };
    session.runAccount = true;
    session.credential = credential;
    session.generation = 1;
    session.signIns = 1;
    session.lastSignInAt = this.now();
    this.sessions.set(name, session);
    return name;
  }

  /** Why an answer shows the session has ended (see signed-out.ts), or undefined. */
  endedSession(exchange: HttpExchange): string | undefined {
    return signedOutReason(exchange, this.memory);
  }

  /**
   * Registers a throw-away user (auth.signup, when allowed) of `role` (the sign-up's role when omitted),
   * signs it in and answers it. At most auth.signup.max_users attempts per run.
   */
  async throwawayUser(client: HttpClient, role?: string): Promise<ProfileUser> {
    const signup = this.signup;
    if (!signup?.allowed) {
      throw new QaasError(
        "SIGNUP_NOT_ALLOWED",
        signup
          ? "auth.signup is declared with allowed: false: no throw-away user may be registered"
          : "the profile has no auth.signup: add one (endpoint, kind, body, allowed: true) to let qaas register throw-away users",
      );
    }
    if (role !== undefined && role.toLowerCase() !== signup.role.toLowerCase()) {
      throw new QaasError(
        "SIGNUP_ROLE",
        `auth.signup registers "${signup.role}" users, not "${role}"; set auth.signup.role if that is wrong`,
      );
    }
    if (this.throwawayAttempts >= signup.max_users) {
      throw new QaasError(
        "SIGNUP_LIMIT",
        `already tried ${this.throwawayAttempts} throw-away users this run (auth.signup.max_users: ${signup.max_users})`,
      );
    }
    this.throwawayAttempts += 1;
    const identity = newThrowawayIdentity();
    this.masker.addSecret(identity.password);
    const { loginName } = await registerThrowaway(identity, signup, {
      baseUrl: this.baseUrl,
      client,
      now: this.now,
    });
    const session = this.newSession({ name: identity.name, role: signup.role, username: loginName });
    session.throwaway = { password: identity.password, email: identity.email };
    this.sessions.set(identity.name, session);
    await this.signIn(identity.name, client);
    return session.user;
  }

  /**
   * Another user of `name`'s role who can sign in: one from the profile (same tenant), else a throw-away user
   * already made, else a new one when sign-up allows that role; undefined when none can be had.
   */
  async peerOf(name: string, client: HttpClient): Promise<ProfileUser | undefined> {
    const user = this.user(name);
    const sameRole = (other: ProfileUser) =>
      other.name !== name && other.role.toLowerCase() === user.role.toLowerCase();
    const candidates = [
      ...this.users().filter((other) => sameRole(other) && other.tenant === user.tenant),
      ...this.throwawayUsers().filter(sameRole),
    ];
    for (const candidate of candidates) {
      try {
        await this.signIn(candidate.name, client);
        return candidate;
      } catch (error) {
        // A peer who cannot sign in is no peer; the reason stays with whoever signs it in next.
        if (!(error instanceof QaasError)) throw error;
      }
    }
    if (!this.signup?.allowed || this.signup.role.toLowerCase() !== user.role.toLowerCase()) return undefined;
    return this.throwawayUser(client, user.role);
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
      credential: session.credential
        ? {
            token: session.credential.token !== undefined,
            cookies: Object.keys(session.credential.cookies),
            csrf: session.credential.metaCsrf !== undefined,
          }
        : undefined,
      ...(session.throwaway ? { throwaway: true } : {}),
    }));
  }

  private newSession(user: ProfileUser): UserSession {
    return {
      user,
      credential: undefined,
      generation: 0,
      pending: undefined,
      signIns: 0,
      uselessRelogins: 0,
      lastSignInAt: 0,
      restartsAtSignIn: 0,
    };
  }

  private sessionOf(name: string): UserSession {
    this.user(name);
    return this.sessions.get(name)!;
  }

  /** One request with the session applied; whatever cookies the answer sets join the session. */
  private async sendOnce(
    client: HttpClient,
    session: UserSession,
    credential: Credential,
    spec: HttpRequestSpec,
    options: SendOptions,
  ): Promise<HttpExchange> {
    const applied = applyCredential(this.recipe ?? DEFAULT_RECIPE, credential, spec, {
      csrf: options.csrf !== false,
    });
    const exchange = await client.send(applied, { user: session.user.name });
    const response = exchange.response;
    if (!response) return exchange;
    // A registration that signs the new account in (or a sign-in form posted by a probe) would turn this
    // user's session into another account for the rest of the run: its cookies stay out of the session.
    if (!isAccountStep(spec.method ?? "GET", spec.url))
      for (const name of credential.jar.absorb(response.setCookies, spec.url)) {
        const value = credential.jar.get(name);
        if (value) maskCookieValue(this.masker, name, value);
      }
    // Pages of a server-rendered application carry a fresh CSRF token for its scripts.
    if (/csrf/i.test(response.body) && isHtml(response.contentType, response.body)) {
      const parsed = parseHtmlPage(response.body, spec.url);
      const meta = metaCsrf(parsed.meta);
      if (meta) credential.metaCsrf = meta;
      for (const form of parsed.forms) maskCsrfTokens(this.masker, form, parsed.meta);
    }
    return exchange;
  }

  private refreshable(): boolean {
    return this.recipe?.kind === "json" || this.recipe?.kind === "form";
  }

  private mayRelogin(session: UserSession): boolean {
    return session.uselessRelogins < 2 || this.now() - session.lastSignInAt > RELOGIN_COOLDOWN_MS;
  }

  /**
   * The target was restarted since this session signed in: a server that keeps sessions in memory (or signs
   * tokens with a key made at start) has forgotten it, and every request would be answered as nobody.
   */
  private outlived(session: UserSession, client: HttpClient): boolean {
    return this.refreshable() && client.targetRestarts > session.restartsAtSignIn;
  }

  private expired(credential: Credential): boolean {
    return credential.expiresAt !== undefined && this.now() >= credential.expiresAt - EXPIRY_MARGIN_MS;
  }

  /** Where a sign-in runs; `secrets` stand in for users[].password (a throw-away or run account's). */
  private signInEnvironment(
    client: HttpClient,
    secrets: { password: string; email: string } | undefined,
  ): SignInEnvironment {
    return {
      baseUrl: this.baseUrl,
      client,
      now: this.now,
      masker: this.masker,
      memory: this.memory,
      password: secrets?.password,
      email: secrets?.email,
    };
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
    const restarts = client.targetRestarts;
    const pending = signIn(session.user, this.recipe, this.signInEnvironment(client, session.throwaway))
      .then((credential) => {
        session.credential = credential;
        session.generation += 1;
        session.signIns += 1;
        session.lastSignInAt = this.now();
        session.restartsAtSignIn = restarts;
        return credential;
      })
      .finally(() => {
        session.pending = undefined;
      });
    session.pending = pending;
    return pending;
  }
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
