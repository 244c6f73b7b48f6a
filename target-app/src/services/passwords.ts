import { scryptSync, timingSafeEqual } from "node:crypto";

const SCRYPT_N = 16384;

export function hashPassword(password: string, salt: Buffer): string {
  const hash = scryptSync(password, salt, 32, { N: SCRYPT_N, r: 8, p: 1 });
  return `scrypt$${SCRYPT_N}$${salt.toString("base64url")}$${hash.toString("base64url")}`;
}

export function verifyPassword(password: string, stored: string): boolean {
  const [scheme, cost, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !cost || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = scryptSync(password, Buffer.from(salt, "base64url"), expected.length, {
    N: Number(cost),
    r: 8,
    p: 1,
  });
  return timingSafeEqual(expected, actual);
}
