import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";

export interface TokenClaims {
  sub: number;
  tid: number;
  role: string;
  iat: number;
  exp: number;
  jti: string;
}

type Signer = (input: string, secret: string) => string;

const hmac =
  (algorithm: string): Signer =>
  (input, secret) =>
    createHmac(algorithm, secret).update(input).digest("base64url");

/** Supported algorithms. `none` exists for local debugging with TOKEN_ALG=none. */
const SIGNERS: Record<string, Signer> = {
  HS256: hmac("sha256"),
  HS384: hmac("sha384"),
  HS512: hmac("sha512"),
  none: () => "",
};

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function decode(segment: string): unknown {
  try {
    return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch {
    return null;
  }
}

function sameString(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function signToken(
  subject: { userId: number; tenantId: number; role: string },
  options: { secret: string; algorithm: string; ttlSeconds: number },
): { token: string; claims: TokenClaims } {
  const signer = SIGNERS[options.algorithm];
  if (!signer) throw new Error(`unsupported token algorithm ${options.algorithm}`);
  const issuedAt = nowSeconds();
  const claims: TokenClaims = {
    sub: subject.userId,
    tid: subject.tenantId,
    role: subject.role,
    iat: issuedAt,
    exp: issuedAt + options.ttlSeconds,
    jti: randomUUID(),
  };
  const head = encode({ alg: options.algorithm, typ: "JWT" });
  const body = encode(claims);
  return { token: `${head}.${body}.${signer(`${head}.${body}`, options.secret)}`, claims };
}

export function verifyToken(token: string, secret: string): TokenClaims | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const [head = "", body = "", signature = ""] = parts;
  const header = decode(head) as { alg?: unknown } | null;
  if (!header || typeof header.alg !== "string" || !Object.hasOwn(SIGNERS, header.alg)) return null;
  const signer = SIGNERS[header.alg]!;
  if (!sameString(signer(`${head}.${body}`, secret), signature)) return null;
  const claims = decode(body) as Partial<TokenClaims> | null;
  if (!claims || typeof claims.sub !== "number" || typeof claims.tid !== "number") return null;
  if (typeof claims.exp !== "number" || claims.exp <= nowSeconds()) return null;
  if (typeof claims.jti !== "string" || typeof claims.role !== "string") return null;
  return claims as TokenClaims;
}
