import { randomBytes } from "node:crypto";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { QaasError } from "../../errors.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import type { ReproAssertion } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Attempt } from "./credential-attempt.ts";
import { attempt, identityOf, stepOf } from "./credential-attempt.ts";
import type { CredentialOperation } from "./credential-operations.ts";
import type { TokenSighting } from "./reset-token-sightings.ts";
import { tokenSightings } from "./reset-token-sightings.ts";

// A password-reset request must only mail the token. Asked twice for one account (a throw-away user's
// when sign-up allows one, else a profile user's — asking changes no password), the answer is searched for
// a token: a token-named field, a link carrying one, a token-named hidden field. It counts when the same
// place holds a token-shaped value both times and the two values differ (a fresh token per request, not a
// constant); with a throw-away user and a reset confirmation, the token must also be accepted there where
// a random one is refused.

export async function checkResetTokenExposure(
  run: ProbeRun,
  entries: readonly CredentialOperation[],
  users: readonly ProfileUser[],
): Promise<EnvelopeDraft[]> {
  const findings: EnvelopeDraft[] = [];
  const confirmations = entries.filter((entry) => entry.role === "reset-confirm");
  for (const entry of entries) {
    if (entry.role !== "reset-request") continue;
    const account = await accountFor(run, entry, users);
    if (!account) {
      run.notes.push(
        `${operationKey(entry.operation)}: no account name fits ${entry.identityField}: reset not tested`,
      );
      continue;
    }
    const first = await attempt(run, entry, { identity: account.identity });
    const second = await attempt(run, entry, { identity: account.identity });
    if (!first || !second || !granted(first.exchange) || !granted(second.exchange)) continue;
    const exposed = freshToken(
      tokenSightings(first.exchange, [account.identity]),
      tokenSightings(second.exchange, [account.identity]),
    );
    if (!exposed) continue;
    run.masker.addSecret(exposed.first.value);
    run.masker.addSecret(exposed.second.value);
    const confirmed = account.throwaway
      ? await confirmOnThrowaway(run, confirmations, account.identity, exposed.second.value)
      : undefined;
    if (confirmed === false) continue;
    findings.push(finding(run, entry, account, [first, second], exposed, confirmed));
  }
  return findings;
}

interface Account {
  identity: string;
  throwaway: boolean;
}

async function accountFor(
  run: ProbeRun,
  entry: CredentialOperation,
  users: readonly ProfileUser[],
): Promise<Account | undefined> {
  if (run.target.profile?.auth?.signup?.allowed) {
    try {
      const throwaway = run.sessions.throwawayUsers()[0] ?? (await run.sessions.throwawayUser(run.client));
      const identity = identityOf(entry, throwaway);
      if (identity) return { identity, throwaway: true };
    } catch (error) {
      if (!(error instanceof QaasError)) throw error;
    }
  }
  for (const user of users) {
    const identity = identityOf(entry, user);
    if (identity) return { identity, throwaway: false };
  }
  return undefined;
}

/** The request was taken (a 2xx or a redirect): a refusal hands nothing out. */
function granted(exchange: HttpExchange): boolean {
  const status = exchange.response?.status ?? 0;
  return status >= 200 && status < 400;
}

/** A place that holds a token in both answers, with two different values. */
export function freshToken(
  first: readonly TokenSighting[],
  second: readonly TokenSighting[],
): { first: TokenSighting; second: TokenSighting } | undefined {
  for (const sighting of first) {
    const again = second.find((other) => other.place === sighting.place);
    if (again && again.value !== sighting.value) return { first: sighting, second: again };
  }
  return undefined;
}

/**
 * The token sets a new password for the throw-away account where a random token of the same shape is
 * refused; undefined when there is no confirmation to try it on.
 */
async function confirmOnThrowaway(
  run: ProbeRun,
  confirmations: readonly CredentialOperation[],
  identity: string,
  token: string,
): Promise<boolean | undefined> {
  const entry = confirmations[0];
  if (!entry) return undefined;
  const password = `Qa9!reset-${randomBytes(6).toString("hex")}`;
  run.masker.addSecret(password);
  const forged = lookalike(token);
  const control = await attempt(run, entry, { identity, password, token: forged });
  if (!control || granted(control.exchange)) return undefined;
  const real = await attempt(run, entry, { identity, password, token });
  return real ? granted(real.exchange) : undefined;
}

/** A random value of the token's length and alphabet (digits stay digits). */
export function lookalike(token: string): string {
  const digits = /^\d+$/.test(token);
  const alphabet = digits ? "0123456789" : "abcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(token.length);
  let result = "";
  for (const byte of bytes) result += alphabet[byte % alphabet.length];
  return result === token ? lookalike(token) : result;
}

function finding(
  run: ProbeRun,
  entry: CredentialOperation,
  account: Account,
  attempts: readonly Attempt[],
  exposed: { first: TokenSighting; second: TokenSighting },
  confirmed: boolean | undefined,
): EnvelopeDraft {
  const key = operationKey(entry.operation);
  const where = exposed.first.description;
  const assertion: ReproAssertion =
    exposed.first.jsonPath !== undefined
      ? {
          kind: "json_lacks",
          step: "reset",
          path: exposed.first.jsonPath,
          message: "the reset answer must not carry the reset token",
        }
      : {
          kind: "body_not_matches",
          step: "reset",
          pattern: exposed.first.pattern,
          flags: "i",
          message: "the reset answer must not carry the reset token",
        };
  return buildFinding(run, {
    domain: "security",
    defectClass: "broken-authentication",
    title: `${key} hands the password-reset token back to whoever asks (${where})`,
    summary: `Asked twice to reset the password of ${account.throwaway ? "a throw-away account qaas registered" : `the account ${account.identity}`}, ${key} answered ${attempts.map((item) => item.exchange.response?.status).join(" and ")} with a fresh token-shaped value in ${where} each time (two different values)${confirmed ? ", and that token set a new password on the throw-away account where a random one was refused" : ""}. Whoever asks for a reset gets the token meant for the account's mailbox, and can take the account over.`,
    impact: "Anyone who knows an account's name or e-mail address can reset its password and take it over.",
    location: endpointLocation(entry.operation),
    severity: "critical",
    confidence: confirmed ? 0.95 : 0.85,
    discriminator: "reset-token",
    exchanges: attempts.map((item, index) => ({
      label: `reset request ${index + 1}`,
      exchange: item.exchange,
    })),
    notes: account.throwaway
      ? []
      : ["the reset was asked for a profile user: asking changes no password, and the token was not used"],
    repro: {
      title: `${key} answers without the reset token`,
      steps: [stepOf("reset", attempts[0]!.exchange)],
      assertions: [assertion],
    },
    suggestedFixArea: "password reset",
  });
}
