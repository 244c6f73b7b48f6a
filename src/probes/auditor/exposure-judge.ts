import type { DefectClass, Severity } from "../../envelope/taxonomy.ts";
import { isAuthOperation } from "../api/operation-index.ts";
import { responseSchemaFor } from "../api/probe-support.ts";
import { toTemplateForm } from "../http/target-url.ts";
import type { Disclosure } from "./exposure-errors.ts";
import { disclosuresIn } from "./exposure-errors.ts";
import type { ExcessField } from "./exposure-excessive.ts";
import { privateFieldsIn, undeclaredPaths } from "./exposure-excessive.ts";
import type { PasswordExposure } from "./exposure-hashes.ts";
import { passwordHashesInText, passwordsInJson } from "./exposure-hashes.ts";
import type { Observed } from "./exposure-observe.ts";
import type { SecretExposure } from "./exposure-secrets.ts";
import { secretsInJson, shapedSecretsIn } from "./exposure-secrets.ts";
import { csvRecords } from "./exposure-walk.ts";
import { emailsIn, findEnvironment } from "./sensitive-patterns.ts";

// One observed answer judged for every kind of exposure scan_exposure reports. Each rule names its two
// signals: a value's shape and the field that holds it, a field and the contract that leaves it out, a
// trace's structure and an answer that repeats it.

export type ExposureDiscriminator =
  | "password-hash"
  | "credential"
  | "environment"
  | "excessive-data"
  | "personal-data"
  | "error-disclosure";

export interface ExposureCandidate {
  defectClass: DefectClass;
  discriminator: ExposureDiscriminator;
  /** What leaked, for the title: `bcrypt password hash`, `Python traceback`. */
  what: string;
  /** A JSON path (`items[0].password_hash`) or `text`. */
  path: string;
  /** The leaked value, masked in every artifact. */
  value: string;
  observed: Observed;
  severity: Severity;
  confidence: number;
  note: string;
  /** For error disclosures: the pattern the generated test asserts is gone. */
  pattern?: string;
  disclosure?: Disclosure;
}

/** Who is asking, to tell the caller's own record from other people's. */
export interface CallerFacts {
  /** The caller's sign-in name and email addresses, lower-case. */
  identities: Set<string>;
  isAdmin: boolean;
  /** Whether the operation is meant for privileged users (then others' data is expected). */
  adminOperation: (observed: Observed) => boolean;
  /** Values of the caller's own credentials (its token, API key, cookies): never a finding. */
  ownCredentials: Set<string>;
  /** Email addresses of the profile's users, to name whose they are. */
  knownEmails: Map<string, string>;
}

const SELF_SEGMENT = /^(me|my|self|profile|account|whoami|current|current[-_]?user|userinfo|session)$/i;

/** An operation that answers about the caller itself (`/api/me`, `/account/profile`). */
export function isSelfOperation(observed: Observed): boolean {
  const segments = toTemplateForm(observed.operation.path).split("/").filter(Boolean);
  return (
    segments.some((segment) => SELF_SEGMENT.test(segment)) &&
    !segments.some((segment) => segment.startsWith("{"))
  );
}

/** Whether a record is the caller's own: it names the caller, or it is the one object a "me" answer holds. */
function isOwnRecord(
  record: Record<string, unknown> | undefined,
  inList: boolean | undefined,
  observed: Observed,
  caller: CallerFacts,
): boolean {
  if (observed.user === undefined || observed.ofAnother) return false;
  if (record)
    for (const value of Object.values(record))
      if (typeof value === "string" && caller.identities.has(value.toLowerCase())) return true;
  return !inList && isSelfOperation(observed);
}

/** Whether the answer is plainly about other people: another user's record, a list, or anonymous. */
function aboutOthers(observed: Observed, inList: boolean | undefined): boolean {
  return observed.ofAnother === true || inList === true || observed.user === undefined;
}

export function judgeObserved(observed: Observed, caller: CallerFacts): ExposureCandidate[] {
  const response = observed.exchange.response;
  if (!response) return [];
  const csv = response.json === undefined ? csvRecords(response.body, response.contentType) : undefined;
  const json = response.json ?? csv;
  return [
    ...passwordCandidates(observed, caller, json),
    ...secretCandidates(observed, caller, json),
    ...environmentCandidates(observed, json),
    ...excessCandidates(observed, caller, json),
    ...errorCandidates(observed),
  ];
}

function passwordCandidates(observed: Observed, caller: CallerFacts, json: unknown): ExposureCandidate[] {
  const response = observed.exchange.response!;
  const found: PasswordExposure[] =
    json !== undefined ? passwordsInJson(json) : passwordHashesInText(response.body);
  const candidates: ExposureCandidate[] = [];
  for (const exposure of found) {
    // A sign-in answer that echoes what was typed is the caller's own business, and plaintext needs a record.
    if (exposure.kind === "plaintext" && (isAuthOperation(observed.operation) || json === undefined))
      continue;
    if (caller.ownCredentials.has(exposure.value)) continue;
    const own = isOwnRecord(exposure.record, exposure.inList, observed, caller);
    candidates.push({
      defectClass: "sensitive-data-exposure",
      discriminator: "password-hash",
      what: exposure.what,
      path: exposure.path,
      value: exposure.value,
      observed,
      severity: own ? "medium" : "high",
      confidence: exposure.kind === "plaintext" ? 0.8 : 0.9,
      note: `${exposure.what} at ${exposure.path}${own ? " (the caller's own record)" : ""}`,
    });
  }
  return candidates;
}

function secretCandidates(observed: Observed, caller: CallerFacts, json: unknown): ExposureCandidate[] {
  const response = observed.exchange.response!;
  const found: SecretExposure[] = json !== undefined ? secretsInJson(json) : shapedSecretsIn(response.body);
  const auth = isAuthOperation(observed.operation);
  const errorAnswer = response.status >= 400;
  const schema = json !== undefined ? responseSchemaFor(observed.operation, response.status) : undefined;
  const undeclared = new Set(schema ? undeclaredPaths(json, schema) : []);
  const candidates: ExposureCandidate[] = [];
  for (const exposure of found) {
    if (
      caller.ownCredentials.has(exposure.value) ||
      [...caller.ownCredentials].some((own) => own.length > 12 && exposure.value.includes(own))
    )
      continue;
    const own = isOwnRecord(exposure.record, exposure.inList, observed, caller);
    // Sign-in and token endpoints hand out credentials by design; a live service key there still counts.
    if (auth && !exposure.live) continue;
    const telling = aboutOthers(observed, exposure.inList) || errorAnswer || undeclared.has(exposure.path);
    if (exposure.live ? own && isSelfOperation(observed) : own || !telling) continue;
    candidates.push({
      defectClass: "secret-exposure",
      discriminator: "credential",
      what: exposure.what,
      path: exposure.path,
      value: exposure.value,
      observed,
      severity: exposure.live && !errorAnswer ? "critical" : "high",
      confidence: exposure.shaped ? 0.9 : undeclared.has(exposure.path) ? 0.85 : 0.8,
      note: `${exposure.what} at ${exposure.path}${undeclared.has(exposure.path) ? " (a field the documented answer does not declare)" : ""}`,
    });
  }
  return candidates;
}

function environmentCandidates(observed: Observed, json: unknown): ExposureCandidate[] {
  if (json === undefined) return [];
  const environment = findEnvironment(json);
  if (!environment) return [];
  return [
    {
      defectClass: "secret-exposure",
      discriminator: "environment",
      what: environment.what,
      path: environment.path,
      value: environment.value,
      observed,
      severity: "high",
      confidence: 0.85,
      note: environment.what,
    },
  ];
}

function excessCandidates(observed: Observed, caller: CallerFacts, json: unknown): ExposureCandidate[] {
  const response = observed.exchange.response!;
  if (json === undefined || response.status < 200 || response.status >= 300) return [];
  if (caller.isAdmin || caller.adminOperation(observed)) return [];
  const schema = responseSchemaFor(observed.operation, response.status);
  const fields = privateFieldsIn(json, schema).filter(
    (field) =>
      !isOwnRecord(field.record, field.inList, observed, caller) && aboutOthers(observed, field.inList),
  );
  const documented = fields.filter((field) => field.declared === false);
  const candidates: ExposureCandidate[] = [];
  if (documented.length > 0)
    candidates.push(excessCandidate(observed, documented, 0.85, "the documented answer does not declare"));
  else {
    // Without a contract only the most sensitive data of several other people counts.
    const records = new Set(
      fields.filter((field) => field.declared === undefined && field.high).map((field) => field.record),
    );
    const strong = fields.filter((field) => field.declared === undefined && field.high);
    if (records.size >= 2 && !schema)
      candidates.push(excessCandidate(observed, strong, 0.75, "no document describes"));
  }
  if (candidates.length === 0 && json !== undefined) {
    const personal = otherPeoplesEmails(observed, caller, json);
    if (personal) candidates.push(personal);
  }
  return candidates;
}

function excessCandidate(
  observed: Observed,
  fields: ExcessField[],
  confidence: number,
  why: string,
): ExposureCandidate {
  const names = [...new Set(fields.map((field) => field.key))];
  const categories = [...new Set(fields.map((field) => field.category))];
  const first = fields[0]!;
  return {
    defectClass: "sensitive-data-exposure",
    discriminator: "excessive-data",
    what: `other people's ${categories.join(", ")} (${names.join(", ")})`,
    path: first.path,
    value: String(first.value),
    observed,
    severity: "medium",
    confidence,
    note: `${names.join(", ")} of ${new Set(fields.map((field) => field.record)).size} other record(s), fields ${why}, e.g. at ${first.path}`,
  };
}

/** Email addresses of other people: the profile's other users, anyone's when anonymous, or many. */
function otherPeoplesEmails(
  observed: Observed,
  caller: CallerFacts,
  json: unknown,
): ExposureCandidate | undefined {
  if (observed.ofAnother) return undefined;
  const others = emailsIn(json).filter((email) => !caller.identities.has(email.value));
  const ofProfileUsers = others.filter((email) => caller.knownEmails.has(email.value));
  const distinct = new Set(others.map((email) => email.value));
  if (
    !(ofProfileUsers.length > 0 || (observed.user === undefined && distinct.size > 0) || distinct.size >= 3)
  )
    return undefined;
  const first = ofProfileUsers[0] ?? others[0]!;
  return {
    defectClass: "sensitive-data-exposure",
    discriminator: "personal-data",
    what: "email addresses of other users",
    path: first.path,
    value: first.value,
    observed,
    severity: "medium",
    confidence: ofProfileUsers.length > 0 ? 0.85 : 0.7,
    note: `${distinct.size} email address(es) of other users, e.g. at ${first.path}`,
  };
}

/** Traces, debug pages and SQL in an answer; an answer without an error status must look like an error. */
function errorCandidates(observed: Observed): ExposureCandidate[] {
  const response = observed.exchange.response!;
  const errorLike =
    response.status >= 400 ||
    /^\s*\{\s*"(?:error|errors|exception|trace|stack|detail|message)"/.test(response.body) ||
    /<title>[^<]*(?:error|exception|traceback|debugger)[^<]*<\/title>/i.test(response.body);
  if (!errorLike) return [];
  const disclosures = disclosuresIn(response.body, response.json);
  const candidates: ExposureCandidate[] = [];
  const best = disclosures.sort((a, b) => rank(a) - rank(b))[0];
  if (best)
    candidates.push({
      defectClass: "misconfiguration",
      discriminator: "error-disclosure",
      what: best.what,
      path: "text",
      value: best.value,
      observed,
      severity: best.kind === "debug-page" ? "high" : "medium",
      confidence: 0.85,
      note: `${best.what}: ${best.value.slice(0, 120)}`,
      pattern: best.pattern,
      disclosure: best,
    });
  return candidates;
}

function rank(disclosure: Disclosure): number {
  return { "debug-page": 0, "stack-trace": 1, "sql-text": 2 }[disclosure.kind];
}
