import type { Operation, SystemMap } from "../../map/system-map.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import { operationKey } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import { matchesTemplate, toTemplateForm } from "../http/target-url.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";

// Which operations take credentials, by what they ask for rather than what they are called: an account
// name and a password (a sign-in, or a registration when the words say so), an account name alone under
// reset/forgot words (a password-reset request), a reset token with a new password (its confirmation).
// Fields come from the operation's body schema (a GraphQL field's arguments), else the form that posts to
// it, else — for the profile's own sign-in — the recipe's body template.

export type CredentialRole = "sign-in" | "reset-request" | "reset-confirm" | "registration";

export interface CredentialOperation {
  operation: Operation;
  role: CredentialRole;
  /** The field that names the account (`email`, `username`, `login`…). */
  identityField: string;
  /** Whether the account is named by an e-mail address (the field's name or type says so). */
  identityIsEmail: boolean;
  passwordField?: string;
  /** reset-confirm: the field carrying the reset token. */
  tokenField?: string;
  /** Every field the operation takes, for a complete request. */
  fields: string[];
  /** The profile's own sign-in operation. */
  profileSignIn: boolean;
  /** How the fields travel when that was settled by trying (see credential-encoding.ts); else the operation's own. */
  encoding?: "json" | "form";
}

const IDENTITY_FIELD =
  /^(user(_?name)?|login(_?name)?|e-?mail(_?address)?|email_?address|account(_?name)?|handle|identifier|principal|phone(_?number)?|mobile|member(_?id)?)$/i;
const EMAIL_FIELD = /e-?mail/i;
// `password1` beside `password2`: the first of a pair, as Django's sign-up form names them.
const PASSWORD_FIELD = /^(pass(word)?|passwd|pwd|passphrase|current_?password|user_?password)1?$/i;
const NEW_PASSWORD_FIELD = /^(new_?)?(pass(word)?|passwd|pwd)(_?new)?$|^new_?password$/i;
const CONFIRM_FIELD = /confirm|repeat|again|password_?2|verify/i;
const TOKEN_FIELD = /^(reset_?)?(token|code|otp|key|nonce)$|^reset_?(token|code|key)$/i;
/** Anti-forgery fields (a bare `token` is left alone: a reset confirmation's token is one). */
const CSRF_FIELD = /csrf|xsrf|authenticity_token|requestverificationtoken|anti[-_]?forgery|wpnonce/i;
const SIGN_IN_WORDS = /log-?in|sign-?in|signon|session|auth|token|authenticate/i;
const REGISTRATION_WORDS = /regist|sign-?up|enrol|join|create[-_ ]?account|new[-_ ]?account/i;
const RESET_WORDS = /forgot|reset|recover|lost|password/i;

/** Whether a field name holds a password (a current or a new one). */
export function isPasswordField(name: string): boolean {
  return PASSWORD_FIELD.test(leafName(name)) || NEW_PASSWORD_FIELD.test(leafName(name));
}

/** A field's own name inside its object's: `user[password]` (Rails, PHP forms) → `password`. */
function leafName(name: string): string {
  return /\[([^\][]+)\]$/.exec(name)?.[1] ?? name;
}

/** Whether a field's own name matches `pattern`. */
function named(pattern: RegExp, name: string): boolean {
  return pattern.test(leafName(name));
}

/** Every credential-taking operation of the map, each once, with the fields it takes. */
export function credentialOperations(
  map: SystemMap,
  profile: TargetProfile | undefined,
): CredentialOperation[] {
  const signIn = profileSignInEndpoint(profile);
  const found: CredentialOperation[] = [];
  for (const operation of map.operations) {
    if (operation.method.toUpperCase() !== "POST" || operation.graphql?.kind === "subscription") continue;
    const isProfileSignIn =
      signIn !== undefined &&
      signIn.method === "POST" &&
      matchesTemplate(operation.path, signIn.path) !== undefined &&
      (!operation.graphql || recipeCallsField(profile, operation.graphql.field));
    const fields = fieldsOf(operation, map, isProfileSignIn ? profile : undefined);
    const classified = classify(operation, fields, isProfileSignIn);
    if (classified) found.push(classified);
  }
  return found;
}

export function classify(
  operation: Operation,
  fields: readonly FieldInfo[],
  profileSignIn = false,
): CredentialOperation | undefined {
  const names = fields.map((field) => field.name).filter((name) => !named(CSRF_FIELD, name));
  const identity =
    fields.find((field) => named(IDENTITY_FIELD, field.name) && !named(EMAIL_FIELD, field.name)) ??
    fields.find((field) => named(IDENTITY_FIELD, field.name) || field.type === "email");
  const words = wordsOf(operation);
  const passwords = names.filter(isPasswordField);
  const token = names.find((name) => named(TOKEN_FIELD, name));
  const base = {
    operation,
    fields: names,
    profileSignIn,
  };
  if (token && passwords.length > 0 && RESET_WORDS.test(words)) {
    return {
      ...base,
      role: "reset-confirm",
      identityField: identity?.name ?? "",
      identityIsEmail: isEmailField(identity),
      passwordField: passwords.find((name) => !named(CONFIRM_FIELD, name)) ?? passwords[0],
      tokenField: token,
    };
  }
  if (!identity) return undefined;
  const identityIsEmail = isEmailField(identity);
  const password = names.find((name) => named(PASSWORD_FIELD, name) && !named(CONFIRM_FIELD, name));
  if (password) {
    const confirming = names.some((name) => named(CONFIRM_FIELD, name));
    if (REGISTRATION_WORDS.test(words) || confirming) {
      return {
        ...base,
        role: "registration",
        identityField: identity.name,
        identityIsEmail,
        passwordField: password,
      };
    }
    if (!profileSignIn && !SIGN_IN_WORDS.test(words)) return undefined;
    return {
      ...base,
      role: "sign-in",
      identityField: identity.name,
      identityIsEmail,
      passwordField: password,
    };
  }
  if (passwords.length === 0 && !token && RESET_WORDS.test(words)) {
    return { ...base, role: "reset-request", identityField: identity.name, identityIsEmail };
  }
  return undefined;
}

export interface FieldInfo {
  name: string;
  /** A form control's type, or the schema's `format` (`email`), when known. */
  type?: string;
}

/** The fields an operation takes: its body schema, else a form posting to it, else the recipe's template. */
export function fieldsOf(operation: Operation, map: SystemMap, profile?: TargetProfile): FieldInfo[] {
  const schema = requestSchema(operation);
  const properties = schema ? propertiesOf(schema) : {};
  if (Object.keys(properties).length > 0) {
    return Object.entries(properties).map(([name, property]) => ({
      name,
      type: typeof property.format === "string" ? property.format : undefined,
    }));
  }
  const template = toTemplateForm(operation.path);
  for (const page of map.pages) {
    for (const form of page.forms) {
      if (form.method.toUpperCase() !== operation.method.toUpperCase()) continue;
      const action = actionPath(form.action, page.path);
      if (action === undefined || matchesTemplate(template, action) === undefined) continue;
      if (form.inputs?.length) return form.inputs.map((input) => ({ name: input.name, type: input.type }));
      return form.fields.map((name) => ({ name }));
    }
  }
  const body = profile?.auth?.login.body;
  if (body)
    return Object.keys(body).map((name) => ({
      name,
      type: /\{email\}/.test(body[name]!) ? "email" : undefined,
    }));
  return [];
}

/** The words that say what an operation does: its path, summary, id and tags. */
export function wordsOf(operation: Operation): string {
  return [operation.path, operation.summary, operation.operation_id, ...(operation.tags ?? [])]
    .filter(Boolean)
    .join(" ");
}

export function describeOperation(entry: CredentialOperation): string {
  return `${operationKey(entry.operation)} (${entry.role}; account field ${entry.identityField}${entry.encoding ? `; sent as ${entry.encoding}` : ""})`;
}

function isEmailField(field: FieldInfo | undefined): boolean {
  return field !== undefined && (field.type === "email" || EMAIL_FIELD.test(field.name));
}

/**
 * Whether the profile's sign-in document calls this GraphQL field (`mutation { login(…) }`): every field of
 * a GraphQL API shares the sign-in's endpoint, and only the one it calls is the sign-in.
 */
function recipeCallsField(profile: TargetProfile | undefined, field: string): boolean {
  const document = Object.values(profile?.auth?.login.body ?? {}).join(" ");
  return new RegExp(`\\b${field.replace(/[^A-Za-z0-9_]/g, "")}\\s*\\(`).test(document);
}

function profileSignInEndpoint(
  profile: TargetProfile | undefined,
): { method: string; path: string } | undefined {
  const endpoint = profile?.auth?.login.endpoint?.trim().match(/^([A-Za-z]+)\s+(\S+)$/);
  return endpoint ? { method: endpoint[1]!.toUpperCase(), path: endpoint[2]! } : undefined;
}

function actionPath(action: string, pagePath: string): string | undefined {
  try {
    return new URL(action || pagePath, `http://page.invalid${pagePath}`).pathname;
  } catch {
    return undefined;
  }
}
