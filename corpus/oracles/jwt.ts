import crypto from "node:crypto";

// JWT pieces the token-forgery oracle builds forged tokens from (RFC 7519/7515).

export const COMMON_SECRETS = [
  "secret",
  "changeme",
  "password",
  "your-256-bit-secret",
  "jwt_secret",
  "secretkey",
];

const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

export function signHs256(claims: object, secret: string): string {
  const head = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
  return `${head}.${crypto.createHmac("sha256", secret).update(head).digest("base64url")}`;
}

export function unsigned(claims: object): string {
  return `${b64url(JSON.stringify({ alg: "none", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}.`;
}

export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as Record<
    string,
    unknown
  >;
}

/** The same token with its claims replaced and the original signature kept. */
export function tampered(token: string, claims: object): string {
  const [head, , signature] = token.split(".");
  return `${head}.${b64url(JSON.stringify(claims))}.${signature}`;
}
