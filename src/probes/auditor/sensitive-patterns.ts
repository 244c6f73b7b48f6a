import { isMaskedValue, walkRecords } from "./exposure-walk.ts";

// What a dump of a process's settings looks like: environment variables (several ENV_SHAPED keys, one of
// them sensitive), configuration objects with secret-named keys, and email addresses in email fields.

export interface Exposure {
  /** What was found: `environment variables (DATABASE_URL, …)`, `configuration secrets (secret_key)`. */
  what: string;
  /** Where in the body: a JSON path or `text`. */
  path: string;
  value: string;
}

const SENSITIVE_ENVIRONMENT =
  /SECRET|TOKEN|PASSWORD|PASSWD|PASS|_KEY|^KEY|DATABASE_URL|REDIS_URL|MONGO|DSN|AWS_|CREDENTIAL/;

/** An object that is a dump of environment variables: several env-shaped keys, at least one sensitive. */
export function findEnvironment(json: unknown): Exposure | undefined {
  let result: Exposure | undefined;
  walkRecords(json, ({ path, value }) => {
    if (result || !value || typeof value !== "object" || Array.isArray(value)) return;
    const record = value as Record<string, unknown>;
    const envKeys = Object.keys(record).filter((key) => /^[A-Z][A-Z0-9_]{1,}$/.test(key));
    const sensitive = envKeys.filter(
      (key) =>
        SENSITIVE_ENVIRONMENT.test(key) &&
        typeof record[key] === "string" &&
        !isMaskedValue(String(record[key])),
    );
    if (envKeys.length >= 3 && sensitive.length >= 1) {
      const first = sensitive[0]!;
      result = {
        what: `environment variables (${sensitive.slice(0, 5).join(", ")})`,
        path: path ? `${path}.${first}` : first,
        value: String(record[first]),
      };
    }
  });
  return result;
}

const CONFIG_SECRET_KEY =
  /(?:^|[_-])(?:secret|secret_key|secretkey|password|passwd|pwd|api_?key|private_?key|token|signing_?key|encryption_?key|jwt_?secret|session_?secret|client_?secret|credentials?|dsn|database_?url|db_?pass(?:word)?)$/i;

/** Secret-named settings with real values (not masked, not empty, not a boolean): a configuration dump. */
export function configurationSecrets(json: unknown): Exposure[] {
  const found: Exposure[] = [];
  walkRecords(json, ({ path, key, value }) => {
    if (typeof value !== "string" || !CONFIG_SECRET_KEY.test(key) || /csrf|xsrf|public|hint/i.test(key))
      return;
    const trimmed = value.trim();
    if (trimmed.length < 6 || isMaskedValue(trimmed) || /^(true|false|null|none|set|unset)$/i.test(trimmed))
      return;
    found.push({ what: `configuration secret (${key})`, path, value: trimmed });
  });
  return found;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;

/** Email addresses in `email`-named fields, with where they sit. */
export function emailsIn(json: unknown): Array<{ path: string; value: string }> {
  const found: Array<{ path: string; value: string }> = [];
  walkRecords(json, ({ path, key, value }) => {
    if (typeof value === "string" && /e-?mail/i.test(key) && EMAIL.test(value))
      found.push({ path, value: value.toLowerCase() });
  });
  return found;
}
