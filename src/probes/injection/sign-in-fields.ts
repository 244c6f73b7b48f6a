import type { Operation } from "../../map/system-map.ts";
import { requestSchema } from "../api/request-builder.ts";
import { toTemplateForm } from "../http/target-url.ts";
import { chooseBranch, propertiesOf } from "../schema-values/json-schema.ts";
import { fillTemplate } from "../session/credential.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { resolveSecretReference } from "../session/secret-reference.ts";

// The fields that make a sign-in succeed, for a probe whose input only matters after a successful sign-in:
// the "where to go next" parameter of a sign-in form redirects there only once the credentials are right.
// The credentials are the profile's own user's (the run signs in as that user anyway), sent from a fresh
// anonymous session so no session the run holds is replaced.

const PASSWORD = /^(pass(word|wd|phrase)?|pwd|secret)$/i;
const LOGIN_NAME = /user|login|email|mail|account|name|ident/i;

export interface SignInFields {
  /** Field name → value: the credentials of `user`. */
  fields: Record<string, string>;
  user: string;
}

/** The operation is the profile's sign-in endpoint, or a form or body asking for a password. */
export function isSignInOperation(run: ProbeRun, operation: Operation): boolean {
  return isProfileEndpoint(run, operation) || passwordField(operation) !== undefined;
}

function passwordField(operation: Operation): string | undefined {
  const schema = requestSchema(operation);
  if (!schema) return undefined;
  const properties = propertiesOf(chooseBranch(schema));
  return Object.keys(properties).find(
    (name) => PASSWORD.test(name) || chooseBranch(properties[name]!).format === "password",
  );
}

/** The sign-in fields of the first profile user whose password can be read, or undefined. */
export function signInFields(run: ProbeRun, operation: Operation): SignInFields | undefined {
  if (!isSignInOperation(run, operation)) return undefined;
  const login = run.target.profile?.auth?.login;
  for (const user of run.sessions.users()) {
    if (!user.password) continue;
    let password: string;
    try {
      password = resolveSecretReference(user.password, `users[${user.name}].password`);
    } catch {
      continue;
    }
    if (password.length >= 8) run.masker.addSecret(password);
    const username = user.username ?? user.name;
    const values = { username, password, email: username };
    if (login?.body && isProfileEndpoint(run, operation)) {
      return { fields: fillTemplate(login.body, values), user: user.name };
    }
    const secret = passwordField(operation);
    const schema = requestSchema(operation);
    const names = schema ? Object.keys(propertiesOf(chooseBranch(schema))) : [];
    const name = names.find((field) => field !== secret && LOGIN_NAME.test(field));
    if (!secret || !name) return undefined;
    return { fields: { [name]: username, [secret]: password }, user: user.name };
  }
  return undefined;
}

function isProfileEndpoint(run: ProbeRun, operation: Operation): boolean {
  const endpoint = run.target.profile?.auth?.login?.endpoint?.trim().match(/^([A-Za-z]+)\s+(\S+)$/);
  return Boolean(
    endpoint &&
      endpoint[1]!.toUpperCase() === operation.method.toUpperCase() &&
      toTemplateForm(endpoint[2]!) === toTemplateForm(operation.path),
  );
}
