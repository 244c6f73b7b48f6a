import fs from "node:fs";
import path from "node:path";
import { displayPath } from "../config/config-errors.ts";
import { QaasError } from "../errors.ts";
import type { LoadedTarget } from "../tools/context.ts";
import { SECRET_REF } from "./profile-schema.ts";

// Credentials are read from the environment at the moment they are used and never stored: a profile
// holds only `secret_ref:NAME`, and nothing here caches a value.

type Environment = Record<string, string | undefined>;

/** `secret_ref:NAME` → `NAME`. */
export function secretVariable(ref: string): string {
  if (!SECRET_REF.test(ref)) {
    throw new QaasError(
      "SECRET_REF_INVALID",
      `"${ref}" is not a secret reference; write secret_ref:ENV_NAME`,
    );
  }
  return ref.slice("secret_ref:".length);
}

/**
 * The value of the variable a reference names. `usedBy` says who needs it (e.g. `user "alice" password in
 * config/targets/shop.yaml`) so the error tells a person exactly what to set.
 */
export function resolveSecret(ref: string, env: Environment = process.env, usedBy?: string): string {
  const variable = secretVariable(ref);
  const value = env[variable];
  if (value === undefined || value === "") {
    const forWhom = usedBy === undefined ? "" : ` (needed for ${usedBy})`;
    throw new QaasError(
      "SECRET_MISSING",
      `environment variable ${variable} is not set${forWhom}; export it, or list it in the profile's environment.secrets_file`,
    );
  }
  return value;
}

/** A user's password or token from the profile, resolved now; errors name the profile and the user. */
export function resolveUserSecret(
  target: LoadedTarget,
  userName: string,
  field: "password" | "token",
  env: Environment = process.env,
): string {
  const user = target.profile.users.find((candidate) => candidate.name === userName);
  if (user === undefined) {
    const known = target.profile.users.map((candidate) => candidate.name).join(", ") || "none";
    throw new QaasError(
      "USER_UNKNOWN",
      `no user "${userName}" in ${displayPath(target.file)} (users: ${known})`,
    );
  }
  const ref = user[field];
  if (ref === undefined) {
    throw new QaasError(
      "SECRET_MISSING",
      `user "${userName}" in ${displayPath(target.file)} has no ${field}`,
    );
  }
  return resolveSecret(ref, env, `user "${userName}" ${field} in ${displayPath(target.file)}`);
}

/** The profile's secrets file (environment.secrets_file, relative to the profile file like source.path), if any. */
export function secretsFileOf(target: LoadedTarget): string | undefined {
  const file = target.profile.environment.secrets_file;
  if (file === undefined) return undefined;
  return path.resolve(path.dirname(target.file), file);
}

/**
 * Loads the profile's secrets file, when it has one that exists, into this process's environment: every
 * process that signs in as the profile's users needs it (the run's, and each queue worker's).
 */
export function loadProfileSecrets(target: LoadedTarget): void {
  const secrets = secretsFileOf(target);
  if (secrets && fs.existsSync(secrets)) loadSecretsFile(secrets);
}

/**
 * Loads NAME=value lines into `env` without overriding a variable that is already set (a person's own
 * environment wins). Accepts comments, blank lines, `export NAME=value`, and single or double quotes.
 * Errors name file:line and never echo a value.
 */
export function loadSecretsFile(
  file: string,
  env: Environment = process.env,
): { loaded: string[]; kept: string[] } {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    throw new QaasError("SECRETS_FILE_NOT_FOUND", `secrets file not found: ${displayPath(file)}`);
  }
  const loaded: string[] = [];
  const kept: string[] = [];
  for (const [index, rawLine] of text.split(/\r?\n/).entries()) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const where = `${displayPath(file)}:${index + 1}`;
    const match = line.match(/^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/);
    if (!match) {
      throw new QaasError("SECRETS_FILE_INVALID", `${where}: expected NAME=value (a variable name, then =)`);
    }
    const name = match[1]!;
    const value = parseValue(match[2]!, where, name);
    if (env[name] !== undefined) {
      kept.push(name);
      continue;
    }
    env[name] = value;
    loaded.push(name);
  }
  return { loaded, kept };
}

function parseValue(raw: string, where: string, name: string): string {
  const quote = raw[0];
  if (quote === '"' || quote === "'") {
    let value = "";
    let index = 1;
    for (; index < raw.length; index++) {
      const character = raw[index]!;
      if (character === quote) break;
      if (quote === '"' && character === "\\" && index + 1 < raw.length) {
        index++;
        const escaped = raw[index]!;
        value += escaped === "n" ? "\n" : escaped === "t" ? "\t" : escaped === "r" ? "\r" : escaped;
      } else {
        value += character;
      }
    }
    if (index >= raw.length) {
      throw new QaasError(
        "SECRETS_FILE_INVALID",
        `${where}: the value of ${name} opens a ${quote} quote that never closes`,
      );
    }
    const rest = raw.slice(index + 1).trim();
    if (rest !== "" && !rest.startsWith("#")) {
      throw new QaasError(
        "SECRETS_FILE_INVALID",
        `${where}: unexpected text after the quoted value of ${name}`,
      );
    }
    return value;
  }
  // An unquoted value ends at a comment that follows whitespace (`a#b` keeps its `#`).
  return raw.replace(/\s+#.*$/, "").trim();
}
