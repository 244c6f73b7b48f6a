import type { Role, ServiceContext, SessionUser } from "./context.ts";
import { tooManyRequests, unauthorized } from "./errors.ts";
import { verifyPassword } from "./passwords.ts";
import { signToken, verifyToken } from "./tokens.ts";
import { findUserByEmail, getUserById, toUserDto, type UserDto } from "./users.ts";

function recentFailures(ctx: ServiceContext, key: string, now: number): number[] {
  const windowMs = ctx.config.loginWindowSeconds * 1000;
  const failures = (ctx.loginFailures.get(key) ?? []).filter((time) => now - time < windowMs);
  ctx.loginFailures.set(key, failures);
  return failures;
}

export interface LoginResult {
  token: string;
  token_type: "Bearer";
  expires_at: string;
  expires_in: number;
  user: UserDto;
}

export function login(ctx: ServiceContext, email: string, password: string, ip: string): LoginResult {
  const key = `${email.toLowerCase()}|${ip}`;
  const now = Date.now();
  const failures = recentFailures(ctx, key, now);
  if (failures.length >= ctx.config.loginMaxFailures) {
    const retryAfter = Math.ceil((failures[0]! + ctx.config.loginWindowSeconds * 1000 - now) / 1000);
    throw tooManyRequests("Too many failed sign-in attempts, try again later", Math.max(retryAfter, 1));
  }
  const user = findUserByEmail(ctx, email);
  if (!user?.active || !verifyPassword(password, user.password_hash)) {
    failures.push(now);
    throw unauthorized("Wrong email or password");
  }
  ctx.loginFailures.delete(key);
  const { token, claims } = signToken(
    { userId: user.id, tenantId: user.tenant_id, role: user.role },
    {
      secret: ctx.config.tokenSecret,
      algorithm: ctx.config.tokenAlgorithm,
      ttlSeconds: ctx.config.tokenTtlSeconds,
    },
  );
  return {
    token,
    token_type: "Bearer",
    expires_at: new Date(claims.exp * 1000).toISOString(),
    expires_in: ctx.config.tokenTtlSeconds,
    user: toUserDto(user),
  };
}

export function resolveSession(ctx: ServiceContext, token: string | null | undefined): SessionUser | null {
  if (!token) return null;
  const claims = verifyToken(token, ctx.config.tokenSecret);
  if (!claims) return null;
  const revoked = ctx.db.prepare("SELECT 1 FROM revoked_tokens WHERE jti = ?").get(claims.jti);
  if (revoked) return null;
  const user = getUserById(ctx, claims.sub);
  if (!user?.active || user.tenant_id !== claims.tid) return null;
  return {
    id: user.id,
    tenantId: user.tenant_id,
    email: user.email,
    name: user.name,
    role: user.role as Role,
    tokenId: claims.jti,
    expiresAt: claims.exp,
  };
}

export function logout(ctx: ServiceContext, session: SessionUser): void {
  ctx.db
    .prepare("INSERT OR IGNORE INTO revoked_tokens (jti, expires_at) VALUES (?, ?)")
    .run(session.tokenId, session.expiresAt);
}

/** The bearer token of a request: Authorization header first, then the page session cookie. */
export function tokenFromHeaders(headers: { authorization?: string; cookie?: string }): string | null {
  const authorization = headers.authorization;
  if (authorization?.startsWith("Bearer ")) return authorization.slice(7).trim() || null;
  return readCookie(headers.cookie, "tl_session");
}

function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return null;
}
