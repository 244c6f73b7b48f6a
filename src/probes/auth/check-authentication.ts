import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { probeSignupMassAssignment } from "../api/mass-assignment-signup.ts";
import { selectOperations } from "../api/operation-index.ts";
import { credentialValues } from "../session/credential.ts";
import type { ProbeOutcome, ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { checkBruteForce } from "./brute-force.ts";
import { checkCsrf } from "./check-csrf.ts";
import { checkTokenForgery } from "./check-token-forgery.ts";
import { checkCookieFlags } from "./cookie-flag.ts";
import { checkCookieForgery } from "./cookie-forgery.ts";
import { settleEncoding } from "./credential-encoding.ts";
import type { CredentialOperation } from "./credential-operations.ts";
import { credentialOperations, describeOperation } from "./credential-operations.ts";
import { discoverFields, fieldless } from "./field-discovery.ts";
import { checkPasswordTakeover } from "./password-takeover.ts";
import { checkResetTokenExposure } from "./reset-token-exposure.ts";
import { accountMakers } from "./run-accounts.ts";
import { checkSessionCookie } from "./session-cookie.ts";
import { checkUserEnumeration } from "./user-enumeration.ts";

// check_authentication: the ways sign-in itself breaks. Forged session tokens on every authenticated read,
// signed session cookies whose secret is in the source or a default, plain cookies whose flipped value lets
// a caller in (`admin=false`), and a session cookie set readable by scripts or kept for months;
// then, on every operation that takes credentials, reset tokens handed back, answers that tell accounts
// apart, another account's password set through an operation that names it, and unlimited password guessing — last, since a limit it trips may slow the sign-ins after it.
// Cross-site request forgery on the state changes a cookie session authorises comes before them too.
// The token check waits for a short-lived token to expire; the others run meanwhile.

export const AUTH_CHECKS = [
  "token-forgery",
  "cookie-forgery",
  "cookie-flag",
  "session-cookie",
  "csrf",
  "reset-token-exposure",
  "user-enumeration",
  "password-takeover",
  "sign-up-mass-assignment",
  "brute-force",
] as const;
export type AuthCheck = (typeof AUTH_CHECKS)[number];

export interface AuthCheckOptions {
  checks?: readonly AuthCheck[];
  /** Only this operation (`METHOD /path`, a path or an operation id). */
  operation?: string;
  /** Clock-skew tolerance before an expired token counts (default 65 s; tests shorten it). */
  expiryLeewayMs?: number;
}

export async function checkAuthentication(
  run: ProbeRun,
  options: AuthCheckOptions = {},
): Promise<ProbeOutcome> {
  const wanted = new Set(options.checks ?? AUTH_CHECKS);
  const candidates: EnvelopeDraft[] = [];
  const stats: Record<string, unknown> = { checks: [...wanted] };
  const selected = selectOperations(run.map, options.operation);
  const exhausted = await untilBudget(run, async () => {
    const users = await usableUsers(run);
    const profileUsers = run.sessions.users();
    const forgery = wanted.has("token-forgery")
      ? checkTokenForgery(run, users, selected, { expiryLeewayMs: options.expiryLeewayMs }).then((result) => {
          stats.token_forgery = result.stats;
          return result.candidates;
        })
      : Promise.resolve([]);
    const credentials = credentialOperations({ ...run.map, operations: selected }, run.target.profile);
    const known = new Set(credentials.map((entry) => entry.operation));
    const unknown = selected.filter((operation) => !known.has(operation));
    credentials.push(...(await withDiscoveredFields(run, unknown, profileUsers)));
    for (const [index, entry] of credentials.entries()) {
      credentials[index] = await settleEncoding(run, entry, profileUsers);
    }
    stats.credential_operations = credentials.map(describeOperation);
    const credentialTaking = new Set(credentials.map((entry) => entry.operation));
    const forgeable = selected.filter((operation) => !credentialTaking.has(operation));
    const others = (async () => {
      const forged = wanted.has("csrf") ? await checkCsrf(run, users, forgeable) : undefined;
      if (forged) stats.csrf = forged.stats;
      return [
        ...(forged?.candidates ?? []),
        ...(await runCredentialChecks(run, wanted, credentials, profileUsers, users, selected)),
      ];
    })();
    const cookies = wanted.has("cookie-forgery")
      ? checkCookieForgery(run, users, selected).then((result) => {
          stats.cookie_forgery = result.stats;
          return result.candidates;
        })
      : Promise.resolve([]);
    const sessionCookie = wanted.has("session-cookie")
      ? checkSessionCookie(run, users, selected).then((result) => {
          stats.session_cookie = result.stats;
          return result.candidates;
        })
      : Promise.resolve([]);
    const flags = wanted.has("cookie-flag")
      ? checkCookieFlags(run, users, selected).then((result) => {
          stats.cookie_flag = result.stats;
          return result.candidates;
        })
      : Promise.resolve([]);
    const [forged, signed, flagged, kept, found] = await Promise.all([
      forgery,
      cookies,
      flags,
      sessionCookie,
      others,
    ]);
    candidates.push(...forged, ...signed, ...flagged, ...kept, ...found);
  });
  return { candidates, stats: { ...stats, budget_exhausted: exhausted } };
}

const MAX_FIELDLESS = 20;

/** Credential operations whose fields had to be found by trying the usual names. */
async function withDiscoveredFields(
  run: ProbeRun,
  selected: readonly Operation[],
  users: readonly ProfileUser[],
): Promise<CredentialOperation[]> {
  const candidates = fieldless(run.map, selected).slice(0, MAX_FIELDLESS);
  const user = users.find((candidate) => candidate.password);
  if (candidates.length === 0 || !user) return [];
  const { password } = credentialValues(
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
  const template = run.target.profile?.auth?.login.body ?? {};
  const preferred = Object.keys(template).find((key) => /\{(username|email)\}/.test(template[key]!));
  const found: CredentialOperation[] = [];
  for (const operation of candidates) {
    const discovered = await discoverFields(run, operation, user, password, preferred);
    if (discovered) found.push(discovered);
  }
  return found;
}

async function runCredentialChecks(
  run: ProbeRun,
  wanted: ReadonlySet<AuthCheck>,
  credentials: readonly CredentialOperation[],
  users: readonly ProfileUser[],
  signedIn: readonly ProfileUser[],
  operations: readonly Operation[],
): Promise<EnvelopeDraft[]> {
  const found: EnvelopeDraft[] = [];
  if (wanted.has("reset-token-exposure"))
    found.push(...(await checkResetTokenExposure(run, credentials, users)));
  // Accounts known to exist right now are the ones that just signed in: a profile account whose address
  // changed during the run would otherwise pass for an unknown one.
  const existing = signedIn.length > 0 ? signedIn : users;
  if (wanted.has("user-enumeration")) found.push(...(await checkUserEnumeration(run, credentials, existing)));
  // On accounts the run registers itself, before the sign-in burst can slow their sign-ins.
  if (wanted.has("password-takeover"))
    found.push(...(await checkPasswordTakeover(run, credentials, operations)));
  if (wanted.has("sign-up-mass-assignment")) found.push(...(await signupMassAssignment(run, credentials)));
  if (wanted.has("brute-force")) found.push(...(await checkBruteForce(run, credentials, users)));
  return found;
}

/** Mass assignment on the application's own sign-up, proven on accounts the run registers. */
async function signupMassAssignment(
  run: ProbeRun,
  credentials: readonly CredentialOperation[],
): Promise<EnvelopeDraft[]> {
  const makers = accountMakers(run, credentials);
  const found: EnvelopeDraft[] = [];
  if (typeof makers === "string") return found;
  for (const registration of credentials.filter((entry) => entry.role === "registration").slice(0, 2))
    found.push(...(await probeSignupMassAssignment(run, registration, makers.signIn)));
  return found;
}
