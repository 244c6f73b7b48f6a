import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { QaasError } from "../../errors.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { AnswerShape } from "./answer-shape.ts";
import { sameShape, scrub, shapeOf } from "./answer-shape.ts";
import type { Attempt } from "./credential-attempt.ts";
import {
  attempt,
  identityOf,
  rightPassword,
  stepOf,
  unknownIdentity,
  wrongPassword,
} from "./credential-attempt.ts";
import type { CredentialOperation } from "./credential-operations.ts";

// Unlimited password guessing: a bounded burst of wrong passwords for ONE account name, never a profile
// user's (a throw-away user the probe registered, else a name nobody has — said so in the evidence). The
// operation must first be shown to check passwords (a profile user's right password gets a different answer
// than a wrong one). Any sign of a limit ends the burst and clears the operation: a 429/423/503, a
// Retry-After or a rate-limit counter, an answer that changes (a lockout message, a captcha), delays that
// grow. Unlimited means every wrong attempt answered alike, and afterwards the sign-in still worked.

export const BURST = 12;
const LIMIT_STATUS = new Set([423, 429, 503]);
const RATE_LIMIT_HEADER =
  /^(retry-after|x-ratelimit-limit|x-ratelimit-remaining|ratelimit-limit|ratelimit-remaining|ratelimit|ratelimit-policy|x-rate-limit-limit|x-rate-limit-remaining)$/i;

export async function checkBruteForce(
  run: ProbeRun,
  entries: readonly CredentialOperation[],
  users: readonly ProfileUser[],
): Promise<EnvelopeDraft[]> {
  const findings: EnvelopeDraft[] = [];
  for (const entry of entries) {
    if (entry.role !== "sign-in") continue;
    const finding = await burst(run, entry, users);
    if (finding) findings.push(finding);
  }
  return findings;
}

interface Account {
  identity: string;
  /** How the right password is tried afterwards; undefined for a name nobody has. */
  throwaway?: ProfileUser;
}

/**
 * How the operation was shown to check credentials: a profile user's right password let in where a wrong
 * one is not; or, when no profile user has a password (API-key profiles), a wrong password refused in words
 * ("invalid", "incorrect"…) with an answer unlike the one to empty fields, so a gateway's blanket 401 or a
 * validation error never passes for a sign-in.
 */
type PasswordCheck = { kind: "right-password"; right: Attempt } | { kind: "refusal"; empty: Attempt };

const REFUSAL_WORDS =
  /invalid|incorrect|wrong|credentials|unauthori[sz]ed|not match|mismatch|denied|failed|(unknown|no such) (user|account|e-?mail)/i;

/** A refusal that says the credentials themselves are wrong ("invalid email or password"). */
const CREDENTIAL_REFUSAL =
  /\b(invalid|incorrect|wrong|bad|unknown)\b[^.\n]{0,40}\b(password|credentials?|passphrase)\b|\b(password|credentials?)\b[^.\n]{0,30}\b(invalid|incorrect|wrong|not match|mismatch)/i;

async function burst(
  run: ProbeRun,
  entry: CredentialOperation,
  users: readonly ProfileUser[],
): Promise<EnvelopeDraft | undefined> {
  const checker = users.find((user) => identityOf(entry, user) !== undefined && user.password);
  const like = checker ?? users.find((user) => identityOf(entry, user) !== undefined);
  const account = await burstAccount(run, entry, like);
  const first = await attempt(run, entry, { identity: account.identity, password: wrongPassword() });
  if (!first || broken(first.exchange) || limited(first.exchange)) return undefined;
  const refusal = shape(first);
  const check = await checksPasswords(run, entry, checker, first);
  if (!check) return undefined;
  const attempts: Attempt[] = [first];
  for (let index = 1; index < BURST; index += 1) {
    const next = await attempt(run, entry, { identity: account.identity, password: wrongPassword() });
    if (!next) return undefined;
    attempts.push(next);
    if (limited(next.exchange) || !sameShape(shape(next), refusal)) return undefined;
  }
  if (growingDelays(attempts.map((item) => item.exchange.durationMs))) return undefined;
  const after =
    check.kind === "right-password" && checker
      ? await stillOpen(run, entry, account, checker, check.right)
      : await stillRefusedAlike(run, entry, account, refusal);
  if (!after) return undefined;
  return finding(run, entry, account, attempts, check, after);
}

async function checksPasswords(
  run: ProbeRun,
  entry: CredentialOperation,
  checker: ProfileUser | undefined,
  wrong: Attempt,
): Promise<PasswordCheck | undefined> {
  if (checker) {
    const right = await rightPassword(run, entry, checker);
    if (!right || broken(right.exchange)) return undefined;
    const status = right.exchange.response?.status ?? 0;
    return status < 400 && !sameShape(shape(right), shape(wrong))
      ? { kind: "right-password", right }
      : undefined;
  }
  const response = wrong.exchange.response;
  if (!response || response.status < 400) return undefined;
  const text = scrub(response.body, [wrong.values.identity]);
  const empty = await attempt(run, entry, { identity: "", password: "" });
  if (!empty || broken(empty.exchange)) return undefined;
  // Either the refusal names the credentials as wrong, or it says no in words and empty fields get
  // another answer (a gateway's blanket "unauthorized" does neither).
  const named = CREDENTIAL_REFUSAL.test(text);
  if (!named && !(REFUSAL_WORDS.test(text) && !sameShape(shape(empty), shape(wrong)))) return undefined;
  run.notes.push(
    `${operationKey(entry.operation)}: no profile user has a password; the sign-in was judged by its refusal of a wrong one`,
  );
  return { kind: "refusal", empty };
}

/** Without a right password to try: after the burst, another wrong password is still refused as the first was. */
async function stillRefusedAlike(
  run: ProbeRun,
  entry: CredentialOperation,
  account: Account,
  refusal: AnswerShape,
): Promise<HttpExchange | undefined> {
  const again = await attempt(run, entry, { identity: account.identity, password: wrongPassword() });
  if (!again || limited(again.exchange) || !sameShape(shape(again), refusal)) return undefined;
  return again.exchange;
}

/** A throw-away user when sign-up allows one and this is the sign-in the profile uses; else a name nobody has. */
async function burstAccount(
  run: ProbeRun,
  entry: CredentialOperation,
  like: ProfileUser | undefined,
): Promise<Account> {
  const sample = like ? identityOf(entry, like) : undefined;
  if (entry.profileSignIn && run.target.profile?.auth?.signup?.allowed) {
    try {
      const throwaway = run.sessions.throwawayUsers()[0] ?? (await run.sessions.throwawayUser(run.client));
      const identity = throwaway.username ?? throwaway.name;
      if (!entry.identityIsEmail || identity.includes("@")) return { identity, throwaway };
    } catch (error) {
      if (!(error instanceof QaasError)) throw error;
      run.notes.push(
        `no throw-away user for the brute-force check (${error.message}): a name nobody has is used`,
      );
    }
  }
  return { identity: unknownIdentity(sample, entry.identityIsEmail) };
}

/**
 * After the burst the sign-in still works: the throw-away user signs in with its right password; with a
 * name nobody has, one more wrong attempt is refused as before and a profile user's right password is
 * still let in (no limit per address either).
 */
async function stillOpen(
  run: ProbeRun,
  entry: CredentialOperation,
  account: Account,
  checker: ProfileUser,
  right: Attempt,
): Promise<HttpExchange | undefined> {
  if (account.throwaway) {
    try {
      const credential = await run.sessions.signIn(account.throwaway.name, run.client, true);
      return credential.exchange;
    } catch (error) {
      if (error instanceof QaasError) return undefined;
      throw error;
    }
  }
  const again = await rightPassword(run, entry, checker);
  if (!again || broken(again.exchange) || !sameShape(shape(again), shape(right))) return undefined;
  return again.exchange;
}

function limited(exchange: HttpExchange): boolean {
  const response = exchange.response;
  if (!response) return true;
  if (LIMIT_STATUS.has(response.status)) return true;
  return Object.keys(response.headers).some((name) => RATE_LIMIT_HEADER.test(name));
}

/** A tarpit: the last answers of the burst take much longer than the first. */
export function growingDelays(durations: readonly number[]): boolean {
  if (durations.length < 6) return false;
  const average = (values: readonly number[]) =>
    values.reduce((sum, value) => sum + value, 0) / values.length;
  const early = average(durations.slice(0, 3));
  const late = average(durations.slice(-3));
  return late > early * 3 && late - early > 400;
}

function broken(exchange: HttpExchange): boolean {
  const status = exchange.response?.status ?? 0;
  return status === 0 || status >= 500;
}

function shape(item: Attempt): AnswerShape {
  const { identity, password } = item.values;
  return shapeOf(item.exchange, [identity, ...(password ? [password] : [])]);
}

function finding(
  run: ProbeRun,
  entry: CredentialOperation,
  account: Account,
  attempts: readonly Attempt[],
  check: PasswordCheck,
  after: HttpExchange,
): EnvelopeDraft {
  const key = operationKey(entry.operation);
  const status = attempts[0]!.exchange.response?.status ?? 0;
  const who = account.throwaway
    ? `the throw-away account ${account.identity} (registered by qaas)`
    : `the account name ${account.identity}, which no one has (no throw-away user could be registered, and profile users are never locked out on purpose)`;
  const afterwards = account.throwaway
    ? "the right password still signed in"
    : check.kind === "right-password"
      ? "a profile user's right password was still let in"
      : "one more wrong password was still refused exactly as the first (the operation refuses wrong passwords in words and answers empty fields differently, so it does check them)";
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: `${key} never limits failed sign-ins (${attempts.length} wrong passwords in a row, all answered ${status})`,
    summary: `${attempts.length} wrong passwords in a row for ${who} were all answered alike (${status}), with no 429, lockout, captcha, rate-limit header or growing delay; afterwards ${afterwards}. Passwords can be guessed without limit.`,
    impact: "Passwords can be guessed or stuffed at full speed: weak and reused passwords fall.",
    location: endpointLocation(entry.operation),
    severity: "medium",
    confidence: account.throwaway ? 0.85 : check.kind === "right-password" ? 0.75 : 0.7,
    discriminator: "brute-force",
    exchanges: [
      { label: "first wrong password", exchange: attempts[0]!.exchange },
      { label: `wrong password ${attempts.length}`, exchange: attempts.at(-1)!.exchange },
      check.kind === "right-password"
        ? { label: "right password before", exchange: check.right.exchange }
        : { label: "empty fields (answered unlike a wrong password)", exchange: check.empty.exchange },
      {
        label: check.kind === "right-password" ? "sign-in after the burst" : "wrong password after the burst",
        exchange: after,
      },
    ],
    notes: [
      `all ${attempts.length} attempts used ${account.throwaway ? "a throw-away account" : "one account name that does not exist"}; durations ${attempts.map((item) => Math.round(item.exchange.durationMs)).join(", ")} ms`,
    ],
    repro: {
      title: `${key} limits repeated failed sign-ins`,
      steps: attempts.map((item, index) => stepOf(`attempt${index + 1}`, item.exchange)),
      assertions: [
        {
          kind: "status_in",
          step: `attempt${attempts.length}`,
          values: [423, 429, 503],
          message: `after ${attempts.length} failed sign-ins for one account the next must be limited (429, 423 or 503)`,
        },
      ],
    },
    suggestedFixArea: "sign-in rate limiting",
  });
}
