import type { JsonRecordVisit } from "./exposure-walk.ts";
import { isMaskedValue, shannonEntropy, walkRecords } from "./exposure-walk.ts";

// Secrets in answers: credentials of known services by their shape (they are secrets wherever they
// appear), connection strings that carry a password, private keys, and high-entropy values in fields named
// like a secret. Public material that looks alike (publishable keys, public keys, masked hints, CSRF
// tokens) is told apart by its prefix and its field name.

export interface SecretShape {
  name: string;
  /** A live credential of a service or a private key: critical wherever it leaks. */
  live: boolean;
  pattern: RegExp;
}

export const SECRET_SHAPES: readonly SecretShape[] = [
  {
    name: "private key",
    live: true,
    pattern:
      /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { name: "AWS access key", live: true, pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b/g },
  {
    name: "GitHub token",
    live: true,
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{50,})\b/g,
  },
  { name: "GitLab token", live: true, pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/g },
  { name: "Slack token", live: true, pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g },
  {
    name: "Slack webhook",
    live: true,
    pattern: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]{16,}/g,
  },
  { name: "Stripe secret key", live: true, pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { name: "Google API key", live: true, pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { name: "SendGrid key", live: true, pattern: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}\b/g },
  { name: "npm token", live: true, pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { name: "OpenAI-style key", live: true, pattern: /\bsk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{40,}\b/g },
  {
    name: "JSON web token",
    live: false,
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  },
];

/** `scheme://user:password@host`: a database, broker or cache URL (or any URL) that carries a password. */
const CONNECTION_STRING =
  /\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver|oracle|cockroachdb|clickhouse|jdbc:[a-z]+|https?|ftp|smtp|ldap)s?:\/\/([^\s:/@"'<>]+):([^\s@/"'<>]+)@[^\s/"'<>]+/gi;
const PLACEHOLDER_PASSWORD =
  /^(?:\*+|x+|pass(?:word)?|secret|changeme|<[^>]*>|\$\{[^}]*\}|%[^%]*%|\{\{[^}]*\}\}|\.\.\.|…)$/i;

export interface SecretExposure {
  /** `Stripe secret key`, `connection string with a password`, `session_token value`. */
  what: string;
  path: string;
  value: string;
  /** Known service credential, private key or password-bearing connection string (not just a telling name). */
  shaped: boolean;
  /** Live credential of a service or a private key. */
  live: boolean;
  record?: Record<string, unknown>;
  inList?: boolean;
}

export function connectionStringsIn(text: string): Array<{ value: string; database: boolean }> {
  const found: Array<{ value: string; database: boolean }> = [];
  for (const match of text.matchAll(CONNECTION_STRING)) {
    const password = safeDecode(match[2] ?? "");
    if (password.length < 3 || PLACEHOLDER_PASSWORD.test(password)) continue;
    found.push({ value: match[0], database: !/^(?:https?|ftp):/i.test(match[0]) });
  }
  return found;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Known secret shapes and password-bearing URLs in any text. */
export function shapedSecretsIn(text: string): SecretExposure[] {
  const found: SecretExposure[] = [];
  const add = (exposure: SecretExposure) => {
    if (found.some((known) => known.value.includes(exposure.value) || exposure.value.includes(known.value)))
      return;
    found.push(exposure);
  };
  for (const { name, live, pattern } of SECRET_SHAPES)
    for (const match of text.matchAll(new RegExp(pattern.source, pattern.flags)))
      add({ what: name, path: "text", value: match[0], shaped: true, live });
  for (const { value, database } of connectionStringsIn(text))
    add({
      what: database ? "connection string with a password" : "URL with embedded credentials",
      path: "text",
      value,
      shaped: true,
      live: true,
    });
  return found;
}

const SECRET_WORDS =
  /(?:^|_)(?:secret|secrets|apikey|api_key|private_key|privatekey|access_key|secret_key|signing_key|client_secret|refresh_token|access_token|auth_token|session_token|id_token|bearer|token|tokens|credential|credentials|webhook_secret|encryption_key|master_key|session_secret|jwt_secret|deploy_key|license_key|password_reset_token|reset_token|otp_secret|totp_secret|mfa_secret|api_secret|app_secret|consumer_secret|private)(?:_|$)/;
/** Names of fields that hold public, partial or harmless material next to a secret. */
const NOT_SECRET_WORDS =
  /(?:^|_)(?:public|publishable|pub|hint|last4|last_four|suffix|prefix|preview|masked|mask|fingerprint|id|ids|type|name|kind|url|uri|expires|expiry|expiration|expires_at|expires_in|created|created_at|updated_at|length|count|version|scope|scopes|hash|hashed|digest|csrf|xsrf|nonce|format|algorithm|alg|label|status|enabled|ttl|set|present|configured)(?:_|$)/;

/** `accessToken` → `access_token`, `API-Key` → `api_key`. */
export function snakeKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toLowerCase()
    .replace(/^_|_$/g, "");
}

export function isSecretKey(key: string): boolean {
  const snake = snakeKey(key);
  const joined = snake.replace(/_/g, "");
  return (
    (SECRET_WORDS.test(snake) ||
      /^(?:apikey|accesstoken|refreshtoken|secretkey|privatekey|authtoken|clientsecret)$/.test(joined)) &&
    !NOT_SECRET_WORDS.test(snake)
  );
}

const PUBLIC_MATERIAL =
  /^(?:pk_(?:live|test)_|-----BEGIN (?:RSA )?PUBLIC KEY-----|-----BEGIN CERTIFICATE-----|ssh-(?:rsa|ed25519) )/;

/** A value that could be a key: long, no spaces, random-looking (hex, base64, base62 and kin). */
export function looksLikeKeyMaterial(value: string): boolean {
  const trimmed = value.trim();
  if (trimmed.length < 16 || trimmed.length > 4096 || /\s/.test(trimmed)) return false;
  if (PUBLIC_MATERIAL.test(trimmed) || isMaskedValue(trimmed)) return false;
  if (/^https?:\/\//i.test(trimmed) || /^\d+$/.test(trimmed)) return false;
  // uuids are identifiers far more often than keys
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(trimmed)) return false;
  const threshold = /^[a-f0-9]+$/i.test(trimmed) ? 3.2 : 3.5;
  return shannonEntropy(trimmed) >= threshold;
}

/**
 * Secrets in a JSON answer: shaped values anywhere (field and path kept), and secret-named fields whose
 * value looks like key material. Shaped findings win over named ones for the same value.
 */
export function secretsInJson(json: unknown): SecretExposure[] {
  const found: SecretExposure[] = [];
  walkRecords(json, (visit: JsonRecordVisit) => {
    if (typeof visit.value !== "string") return;
    const value = visit.value;
    if (PUBLIC_MATERIAL.test(value.trim())) return;
    const shaped = shapedSecretsIn(value);
    if (shaped.length > 0) {
      for (const exposure of shaped)
        found.push({ ...exposure, path: visit.path, record: visit.record, inList: visit.inList });
      return;
    }
    if (isSecretKey(visit.key) && looksLikeKeyMaterial(value))
      found.push({
        what: `${visit.key} value`,
        path: visit.path,
        value: value.trim(),
        shaped: false,
        live: false,
        record: visit.record,
        inList: visit.inList,
      });
  });
  return found;
}
