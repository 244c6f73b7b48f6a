import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { CredentialOperation } from "../auth/credential-operations.ts";
import type { RunAccount } from "../auth/run-accounts.ts";
import { registerAccount, sendAsAccount } from "../auth/run-accounts.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { showsFormAgain } from "../session/form-submission.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { submitForm } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import type { PrivilegedField } from "./mass-assignment-fields.ts";
import { grantsAdmin, holds, privilegedFields, valuesFor } from "./mass-assignment-fields.ts";
import { isCallerPath, operationKey } from "./operation-index.ts";
import { endpointLocation } from "./probe-support.ts";
import { bodyKind, buildRequest, toSpec } from "./request-builder.ts";

// Mass assignment at sign-up (OWASP API3, CWE-915): a registration that copies an extra privilege field
// (`admin: true`, `role: "admin"`) from the body into the new account. Only accounts the run registers
// itself are made. Two signals: an account registered plainly reads back with another value of the field
// (from its own sign-in answer or a "me"-like read), and one registered with the field reads back with the
// value sent.

const MAX_FIELDS = 4;

export async function probeSignupMassAssignment(
  run: ProbeRun,
  registration: CredentialOperation,
  signIn: CredentialOperation | undefined,
): Promise<EnvelopeDraft[]> {
  if (!run.target.writesAllowed) return [];
  const plain = await registerAccount(run, registration, signIn);
  if (!plain) return [];
  const reads = selfReads(run.map.operations);
  const before = await selfView(run, plain, reads);
  const fields = accountFields(registration.operation, before.record);
  const findings: EnvelopeDraft[] = [];
  for (const field of fields) {
    const current = before.record[field.name];
    // Without the plain account's value there is no second signal: a field that reads back could be echoed.
    if (current === undefined) continue;
    const value = escalation(field, current);
    if (value === undefined) continue;
    const forced = await registerAccount(run, registration, signIn, { [field.name]: value });
    if (!forced) continue;
    const after = await selfView(run, forced, reads);
    if (!holds(after.record[field.name], value, field.kind)) continue;
    findings.push(
      finding(run, registration.operation, field, value, current, "sign-up", [
        { label: "plain sign-up", exchange: plain.exchanges[0]! },
        ...(before.exchange ? [{ label: "plain account reads itself", exchange: before.exchange }] : []),
        { label: "sign-up with the field", exchange: forced.exchanges[0]! },
        ...(after.exchange ? [{ label: "that account reads itself", exchange: after.exchange }] : []),
      ]),
    );
    break;
  }
  findings.push(...(await selfUpdateEscalation(run, plain, reads, before.record)));
  return findings;
}

/**
 * The same fields sent by the plain account on an update of itself (`PATCH /me`, `PUT /account`): a profile
 * form's handler that copies the body into the account lets its owner make itself an administrator. The
 * account is the run's own, so nothing anyone else holds changes; the value must read back, where the
 * account read itself with another before.
 */
async function selfUpdateEscalation(
  run: ProbeRun,
  account: RunAccount,
  reads: readonly Operation[],
  before: Record<string, unknown>,
): Promise<EnvelopeDraft[]> {
  const readPaths = new Set(reads.map((read) => read.path));
  // A server-rendered profile form posts to its own page; it is submitted in the account's session.
  const asForm = (operation: Operation) =>
    operation.method.toUpperCase() === "POST" && operation.form !== undefined && "user" in account.via;
  const updates = run.map.operations.filter(
    (operation) =>
      ((["PUT", "PATCH"].includes(operation.method.toUpperCase()) && bodyKind(operation) === "json") ||
        asForm(operation)) &&
      !operation.graphql &&
      pathParameterNames(operation.path).length === 0 &&
      (readPaths.has(operation.path) || isCallerPath(operation.path)),
  );
  for (const update of updates.slice(0, 3)) {
    for (const field of accountFields(update, before)) {
      const current = before[field.name];
      if (current === undefined) continue;
      const value = escalation(field, current);
      if (value === undefined) continue;
      const exchange = await sendUpdate(run, account, update, field.name, value);
      if (!exchange) continue;
      const after = await selfView(run, account, reads);
      if (!holds(after.record[field.name], value, field.kind)) continue;
      return [
        finding(run, update, field, value, current, "self-update", [
          { label: `${operationKey(update)} with the field, by the account itself`, exchange },
          ...(after.exchange ? [{ label: "the account reads itself", exchange: after.exchange }] : []),
        ]),
      ];
    }
  }
  return [];
}

/** The role and flag fields an account's write of itself may raise. */
function accountFields(operation: Operation, observed: Record<string, unknown>): PrivilegedField[] {
  return privilegedFields(operation, observed, { ownAccount: true })
    .filter((field) => field.kind === "role" || field.kind === "flag")
    .slice(0, MAX_FIELDS);
}

/** The value that would raise the account, when one differs from what it holds (documented: admin only). */
function escalation(field: PrivilegedField, current: unknown): unknown {
  const [value] = valuesFor(field, current, undefined);
  if (value === undefined || holds(current, value, field.kind)) return undefined;
  return field.documented && !grantsAdmin(field, value) ? undefined : value;
}

/**
 * The account's update of itself with `name` set to `value`: a form as its page offers it (the page's own
 * values kept, a fresh CSRF token), anything else as built; the answer when it was taken.
 */
async function sendUpdate(
  run: ProbeRun,
  account: RunAccount,
  update: Operation,
  name: string,
  value: unknown,
): Promise<HttpExchange | undefined> {
  if (update.form && "user" in account.via) {
    const submitted = await submitForm(
      run,
      account.via.user,
      update,
      { [name]: typeof value === "string" ? value : JSON.stringify(value) },
      { followRedirects: false },
    );
    const posted = submitted?.exchange;
    return posted?.response && posted.response.status < 400 && !showsFormAgain(posted) ? posted : undefined;
  }
  const prepared = buildRequest(update, { seed: "self" });
  const body = prepared.body && typeof prepared.body === "object" ? prepared.body : {};
  prepared.body = { ...(body as Record<string, unknown>), [name]: value };
  const exchange = await sendAsAccount(run, account, toSpec(run.target.baseUrl, prepared));
  return exchange && isSuccess(exchange) ? exchange : undefined;
}

/** Reads without path parameters that answer about the caller (`/me`, `/account`). */
function selfReads(operations: readonly Operation[]): Operation[] {
  return operations
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" && !operation.graphql && isCallerPath(operation.path),
    )
    .slice(0, 3);
}

/**
 * What the account's own answers say about it, flattened to one record of top-level fields (a lone wrapped
 * object such as `{ data: {...} }` or `{ user: {...} }` is opened): "me"-like reads first, the sign-in answer
 * after.
 */
async function selfView(
  run: ProbeRun,
  account: RunAccount,
  reads: readonly Operation[],
): Promise<{ record: Record<string, unknown>; exchange?: HttpExchange }> {
  const record: Record<string, unknown> = {};
  let shown: HttpExchange | undefined;
  for (const read of reads) {
    const spec = toSpec(run.target.baseUrl, buildRequest(read, { seed: "self" }));
    const exchange = await sendAsAccount(run, account, spec);
    if (!exchange || !isSuccess(exchange)) continue;
    const fields = fieldsOf(exchange.response?.json);
    if (Object.keys(fields).length === 0) continue;
    shown ??= exchange;
    for (const [key, value] of Object.entries(fields)) if (!(key in record)) record[key] = value;
  }
  const signIn = fieldsOf(account.answers[1]);
  for (const [key, value] of Object.entries(signIn)) if (!(key in record)) record[key] = value;
  return { record, exchange: shown };
}

function fieldsOf(json: unknown, depth = 0): Record<string, unknown> {
  if (!json || typeof json !== "object" || Array.isArray(json) || depth > 2) return {};
  const record = json as Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value && typeof value === "object" && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(fieldsOf(value, depth + 1)))
        if (!(inner in fields)) fields[inner] = innerValue;
    } else fields[key] = value;
  }
  return fields;
}

function finding(
  run: ProbeRun,
  operation: Operation,
  field: PrivilegedField,
  value: unknown,
  before: unknown,
  how: "sign-up" | "self-update",
  exchanges: Array<{ label: string; exchange: HttpExchange }>,
): EnvelopeDraft {
  const key = operationKey(operation);
  const shown = JSON.stringify(value);
  const was = `${field.name} = ${JSON.stringify(before ?? null)}`;
  return buildFinding(run, {
    domain: "api",
    defectClass: "validation-missing",
    title:
      how === "sign-up"
        ? `${key} lets a new account set ${field.name} = ${shown} for itself (mass assignment)`
        : `${key} lets an account set its own ${field.name} = ${shown} (mass assignment)`,
    summary:
      how === "sign-up"
        ? `An account the run registered plainly reads itself back with ${was}; one registered with ${field.name} = ${shown} added to the body reads itself back with ${shown}. The sign-up copies a privilege field the client must not choose.`
        : `An account the run registered reads itself back with ${was}; after it sent ${key} with ${field.name} = ${shown} added to the body, it reads itself back with ${shown}. The update copies a privilege field the client must not choose.`,
    impact:
      how === "sign-up"
        ? "Anyone can register an account with privileges only the server should grant (an administrator)."
        : "Any account can grant itself privileges only the server should grant (an administrator).",
    location: endpointLocation(operation),
    severity: severityFor("validation-missing", { privileged: true }),
    confidence: 0.9,
    discriminator: `mass-assignment:${field.name}`,
    exchanges,
  });
}
