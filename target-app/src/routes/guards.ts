import type { FastifyRequest } from "fastify";
import { resolveSession, tokenFromHeaders } from "../services/auth.ts";
import type { ServiceContext, SessionUser } from "../services/context.ts";
import { unauthorized } from "../services/errors.ts";

declare module "fastify" {
  interface FastifyRequest {
    user: SessionUser | null;
  }
}

export function sessionFromRequest(ctx: ServiceContext, request: FastifyRequest): SessionUser | null {
  return resolveSession(ctx, tokenFromHeaders(request.headers));
}

/** onRequest hook for API routes that need a signed-in user. */
export function authenticate(ctx: ServiceContext) {
  return async (request: FastifyRequest): Promise<void> => {
    const user = sessionFromRequest(ctx, request);
    if (!user) throw unauthorized();
    request.user = user;
  };
}

export function currentUser(request: FastifyRequest): SessionUser {
  if (!request.user) throw unauthorized();
  return request.user;
}
