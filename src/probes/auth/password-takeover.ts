import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildRequest, requestSchema, toSpec } from "../api/request-builder.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { CredentialOperation } from "./credential-operations.ts";
import { isPasswordField, wordsOf } from "./credential-operations.ts";
import {
  accountKey,
  accountMakers,
  freshPassword,
  registerAccount,
  sendAsAccount,
  signInAs,
} from "./run-accounts.ts";

// Account takeover by password change (OWASP API1/API5, CWE-620/639): an operation that sets the password of
// the account its path names (`PUT /accounts/{name}/password`) must let only that account do it. Proven only
// on accounts the run registers itself: a victim and an attacker, both fresh. The attacker, signed in as
// itself, sets the victim's password; two independent signals then decide: the victim signs in with the new
// password, and no longer with the old one. A server that ignores the path and changes the caller's own
// password changes the attacker's (also the run's own), so no seeded account is ever touched.

const PASSWORD_WORDS = /pass(word)?|passwd|pwd|credential|secret/i;
const CURRENT_PASSWORD = /^(old|current|existing|previous)_?(pass(word)?|passwd|pwd)$/i;
const MAX_OPERATIONS = 3;

/**
 * Operations that set the password of an account named in their path: a write whose words name a password
 * and whose body takes one, with a path parameter for the account (and no reset token: that is a reset).
 */
export function passwordChangeOperations(
  operations: readonly Operation[],
  credentials: readonly CredentialOperation[],
): Array<{ operation: Operation; parameter: string; passwordFields: string[] }> {
  const taken = new Set(credentials.map((entry) => entry.operation));
  const found: Array<{ operation: Operation; parameter: string; passwordFields: string[] }> = [];
  for (const operation of operations) {
    const method = operation.method.toUpperCase();
    if (!["PUT", "PATCH", "POST"].includes(method) || operation.graphql || taken.has(operation)) continue;
    const parameters = pathParameterNames(operation.path);
    if (parameters.length === 0 || !PASSWORD_WORDS.test(wordsOf(operation))) continue;
    const schema = requestSchema(operation);
    const fields = schema ? Object.keys(propertiesOf(schema)) : [];
    const passwordFields = fields.filter((name) => isPasswordField(name) && !CURRENT_PASSWORD.test(name));
    if (passwordFields.length === 0 || fields.some((name) => /token|code|otp/i.test(name))) continue;
    found.push({ operation, parameter: parameters[parameters.length - 1]!, passwordFields });
  }
  return found;
}

export async function checkPasswordTakeover(
  run: ProbeRun,
  credentials: readonly CredentialOperation[],
  operations: readonly Operation[],
): Promise<EnvelopeDraft[]> {
  if (!run.target.writesAllowed) return [];
  const changes = passwordChangeOperations(operations, credentials).slice(0, MAX_OPERATIONS);
  if (changes.length === 0) return [];
  const makers = accountMakers(run, credentials);
  if (typeof makers === "string") {
    run.notes.push(`password change of another account not tried: ${makers}`);
    return [];
  }
  const { registration, signIn } = makers;
  const findings: EnvelopeDraft[] = [];
  for (const change of changes) {
    const victim = await registerAccount(run, registration, signIn);
    const attacker = victim && (await registerAccount(run, registration, signIn));
    if (!victim || !attacker) {
      run.notes.push(
        `${operationKey(change.operation)}: the run could not register and sign in its own accounts`,
      );
      return findings;
    }
    const key = accountKey(victim, change.parameter);
    if (key === undefined) continue;
    const newPassword = freshPassword();
    const prepared = buildRequest(change.operation, {
      seed: "takeover",
      pathValues: { [change.parameter]: key },
    });
    const body =
      prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body)
        ? (prepared.body as Record<string, unknown>)
        : {};
    for (const field of Object.keys(body)) if (CURRENT_PASSWORD.test(field)) body[field] = attacker.password;
    for (const field of change.passwordFields) body[field] = newPassword;
    prepared.body = body;
    const attempt = await sendAsAccount(run, attacker, toSpec(run.target.baseUrl, prepared));
    if (!attempt?.response) continue;
    // Both signals: the new password opens the victim's account, the old one no longer does.
    const withNew = await signInAs(run, signIn, { identity: victim.identity, password: newPassword });
    if (!withNew.accepted) continue;
    const withOld = await signInAs(run, signIn, victim);
    if (withOld.accepted || !withOld.exchange) continue;
    findings.push(
      finding(run, change.operation, attempt, [
        ...victim.exchanges.map((exchange, index) => ({
          label: `victim ${index ? "sign-in" : "registered"}`,
          exchange,
        })),
        { label: "attacker's password change of the victim", exchange: attempt },
        { label: "victim signs in with the attacker's password", exchange: withNew.exchange! },
        { label: "victim's own password refused", exchange: withOld.exchange },
      ]),
    );
  }
  return findings;
}

function finding(
  run: ProbeRun,
  operation: Operation,
  attempt: HttpExchange,
  exchanges: Array<{ label: string; exchange: HttpExchange }>,
): EnvelopeDraft {
  const key = operationKey(operation);
  return buildFinding(run, {
    domain: "security",
    defectClass: "missing-authorization",
    title: `${key} lets any signed-in user set another account's password`,
    summary: `The run registered two accounts of its own. Signed in as the second, it sent ${key} naming the first (answered ${attempt.response?.status}); the first account then signed in with the new password and no longer with its own. Any user can take over any account whose name or id they know.`,
    impact:
      "Account takeover: any signed-in user can lock out and impersonate any other user, admins included.",
    location: endpointLocation(operation),
    severity: "critical",
    confidence: 0.95,
    discriminator: "password-takeover",
    exchanges,
    suggestedFixArea: "authorization of account updates",
  });
}
