import type { FastifyPluginAsync } from "fastify";
import { login, logout } from "../services/auth.ts";
import type { ServiceContext } from "../services/context.ts";
import { getColleague, getUserById, toUserDto } from "../services/users.ts";
import { LoginBody, parseWith } from "../services/validation.ts";
import { idParam, sessionExpiresAt, tenantName } from "../services/workspace.ts";
import { authenticate, currentUser } from "./guards.ts";

export function authRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    app.post("/api/login", async (request) => {
      const body = parseWith(LoginBody, request.body);
      return login(ctx, body.email, body.password, request.ip);
    });

    app.register(async (scoped) => {
      scoped.addHook("onRequest", authenticate(ctx));

      scoped.post("/api/logout", async (request, reply) => {
        logout(ctx, currentUser(request));
        return reply.code(204).send();
      });

      scoped.get("/api/me", async (request) => {
        const user = currentUser(request);
        return {
          user: toUserDto(getUserById(ctx, user.id)!),
          tenant: { id: user.tenantId, name: tenantName(ctx, user.tenantId) },
          session_expires_at: sessionExpiresAt(user),
        };
      });

      scoped.get("/api/users/:id", async (request) => {
        return getColleague(ctx, currentUser(request), idParam(request.params, "User"));
      });
    });
  };
}
