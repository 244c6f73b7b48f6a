import type { Operation } from "../../map/system-map.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import { resolveSecret } from "../../targets/secrets.ts";
import { toTemplateForm } from "./target-url.ts";

// A probe signed in as a profile user may write to that user's own account (a profile form, `PATCH /me`):
// those are operations like any other. But a body that changes the user's email, login name or password
// overwrites what the probe did not create, and signs the user out of the rest of the run (every later
// sign-in fails). Such a write is refused unless each identity field keeps the value the user already has.
// Users the run registered itself are not profile users: their accounts are the probe's to change.
// A password-change field (`new_password`, `password_conf`, `currentPassword`…) names what the request does
// wherever it is sent, by any method: apps change passwords from a GET query (`?password_new=…&Change=1`)
// or under paths that say nothing of accounts, and a probe filling those fields locks the user out. And an
// operation the map knows takes such fields may change the password with none of them sent (DVWA's
// `?Change=1` sets an empty one): it is only ever read bare, without a single input.

const SELF_SEGMENT = /^(me|my|self|profile|profiles|account|accounts|settings|preferences|user)$/i;
const AUTH_STEP =
  /(sign-?in|log-?in|sign-?up|register|registration|forgot|reset|recover|log-?out|sign-?out|verify|confirm|activate|token|oauth|sessions?)$/i;
const EMAIL_FIELD = /^(e-?mail|email_?address)$/i;
const LOGIN_FIELD = /^(user_?name|login|handle)$/i;
const PASSWORD_FIELD =
  /^(new_?)?(password|passwd|pass_?word|pwd)(_?(confirm|confirmation|again|repeat|2))?$/i;
/** Fields only a password-change form has, compared in snake case (`newPassword` → `new_password`). */
const CHANGE_PASSWORD_FIELD =
  /^((new|old|current|confirm|confirmed|verify)_?(password|passwd|pass|pwd)(_?(confirm|confirmation|again|repeat|2))?|(password|passwd|pass|pwd)_?(new|old|current|conf|confirm|confirmation|again|repeat|verify|2))$/;
const WRITE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** Server pages named by file (`login.php`, `Register.aspx`) are the same steps. */
const PAGE_EXTENSION = /\.(php|aspx?|jsp|cgi|html?)$/i;

/** Why a write would change a profile user's own identity, or undefined when it keeps it. */
export type AccountGuard = (
  method: string,
  url: string,
  body: string | undefined,
  user: string | undefined,
) => string | undefined;

export function accountGuard(
  profile: TargetProfile | undefined,
  operations: readonly Operation[] = [],
): AccountGuard | undefined {
  const users = profile?.users ?? [];
  if (users.length === 0) return undefined;
  const changes = passwordChanges(operations);
  return (method, url, body, userName) => {
    const user = users.find((candidate) => candidate.name === userName);
    if (!user || isAuthStep(url)) return undefined;
    const password = currentPassword(user.password);
    const { pathname: path, search, searchParams } = new URL(url);
    const fields = fieldsOf(body);
    const change = changes.find((operation) => operation.path.test(path.replace(/\/+$/, "")));
    if (change && (search !== "" || fields.length > 0))
      return `${method} ${path} refused: the application changes passwords there (it takes ${change.field}), so a profile user's session only reads it without inputs (a probe never changes an account it did not create)`;
    const changing = [...searchParams, ...fields].find(
      ([field, value]) =>
        CHANGE_PASSWORD_FIELD.test(snakeCase(field.split(".").at(-1) ?? field)) && value !== password,
    );
    if (changing)
      return `${method} ${path} refused: its field ${changing[0]} would change the password of profile user "${user.name}" (a probe never changes an account it did not create)`;
    if (!WRITE.has(method.toUpperCase()) || !isOwnAccount(url)) return undefined;
    // The username is what the user signs in with: a field of its kind must keep it. An email field beside
    // a plain username holds a value the profile does not know, so it cannot be judged here.
    const signsInWithEmail = user.username?.includes("@") ?? false;
    for (const [field, value] of fields) {
      const name = field.split(".").at(-1) ?? field;
      const identity = LOGIN_FIELD.test(name) || (signsInWithEmail && EMAIL_FIELD.test(name));
      if (identity && user.username !== undefined && value !== user.username)
        return `${method} ${path} refused: it would change ${field} of profile user "${user.name}" (a probe never changes an account it did not create)`;
      if (PASSWORD_FIELD.test(name) && value !== password)
        return `${method} ${path} refused: it would change the password of profile user "${user.name}" (a probe never changes an account it did not create)`;
    }
    return undefined;
  };
}

/** The operations whose inputs include a password-change field, as path patterns. */
function passwordChanges(operations: readonly Operation[]): Array<{ path: RegExp; field: string }> {
  const found: Array<{ path: RegExp; field: string }> = [];
  for (const operation of operations) {
    const body = operation.request_body?.schema as { properties?: Record<string, unknown> } | undefined;
    const names = [
      ...operation.parameters.map((parameter) => parameter.name),
      ...Object.keys(body?.properties ?? {}),
    ];
    const field = names.find((name) => CHANGE_PASSWORD_FIELD.test(snakeCase(name)));
    if (!field) continue;
    const template = toTemplateForm(operation.path)
      .replace(/\/+$/, "")
      .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
      .replace(/\\?\{[^}]*\\?\}/g, "[^/]+");
    found.push({ path: new RegExp(`^${template}$`), field });
  }
  return found;
}

function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/-/g, "_")
    .toLowerCase();
}

/** A sign-in, sign-up or other account step (`/login`, `/register.php`): its fields are the step's own. */
function isAuthStep(url: string): boolean {
  const last = new URL(url, "http://target.invalid").pathname.split("/").filter(Boolean).at(-1) ?? "";
  return AUTH_STEP.test(last.replace(PAGE_EXTENSION, ""));
}

/**
 * A write to a sign-in, sign-up or other account step (`POST /register`, `POST /session`): its answer may
 * sign the session that sent it in as another account, so a profile user's session does not take its
 * cookies.
 */
export function isAccountStep(method: string, url: string): boolean {
  return WRITE.has(method.toUpperCase()) && isAuthStep(url);
}

/** A path about the caller's own account: a self word, no id, and not a sign-in or sign-up step. */
function isOwnAccount(url: string): boolean {
  const segments = new URL(url, "http://target.invalid").pathname.split("/").filter(Boolean);
  if (segments.length === 0 || isAuthStep(url)) return false;
  if (segments.some((segment) => /^\d+$|^[0-9a-f-]{16,}$/i.test(segment))) return false;
  return segments.some((segment) => SELF_SEGMENT.test(segment));
}

function currentPassword(reference: string | undefined): string | undefined {
  if (!reference) return undefined;
  try {
    return resolveSecret(reference);
  } catch {
    return undefined;
  }
}

/** The scalar fields of a JSON or form-encoded body, by dotted name. */
function fieldsOf(body: string | undefined): Array<[string, string]> {
  if (!body) return [];
  const trimmed = body.trim();
  if (trimmed.startsWith("{")) {
    try {
      return flatten(JSON.parse(trimmed), "");
    } catch {
      return [];
    }
  }
  if (!trimmed.includes("=")) return [];
  return [...new URLSearchParams(trimmed)];
}

function flatten(value: unknown, prefix: string): Array<[string, string]> {
  if (value === null || typeof value !== "object") return prefix ? [[prefix, String(value)]] : [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) =>
    flatten(inner, prefix ? `${prefix}.${key}` : key),
  );
}
