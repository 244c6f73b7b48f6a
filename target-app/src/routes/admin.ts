import type { FastifyPluginAsync } from "fastify";
import type { ServiceContext } from "../services/context.ts";
import { parseWith, SettingsUpdate, UserCreate, UserUpdate } from "../services/validation.ts";
import {
  changeMember,
  getSettings,
  idParam,
  inviteMember,
  members,
  requireAdmin,
  tenantsOverview,
  updateSettings,
} from "../services/workspace.ts";
import { authenticate, currentUser } from "./guards.ts";

export function adminRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    app.addHook("onRequest", authenticate(ctx));

    app.get("/api/admin/users", async (request) => {
      return { items: members(ctx, currentUser(request)) };
    });

    app.post("/api/admin/users", async (request, reply) => {
      const user = inviteMember(ctx, currentUser(request), parseWith(UserCreate, request.body));
      return reply.code(201).send(user);
    });

    app.patch("/api/admin/users/:id", async (request) => {
      const id = idParam(request.params, "User");
      return changeMember(ctx, currentUser(request), id, parseWith(UserUpdate, request.body));
    });

    app.get("/api/admin/settings", async (request) => {
      const admin = currentUser(request);
      requireAdmin(admin);
      return getSettings(ctx, admin.tenantId);
    });

    app.put("/api/admin/settings", async (request) => {
      return updateSettings(ctx, currentUser(request), parseWith(SettingsUpdate, request.body));
    });

    app.get("/api/platform/tenants", async (request) => {
      return { items: tenantsOverview(ctx, currentUser(request)) };
    });
  };
}
