import type { FastifyPluginAsync } from "fastify";
import type { ServiceContext } from "../services/context.ts";
import { searchTasks } from "../services/search.ts";
import { parseWith, SearchQuery } from "../services/validation.ts";
import { authenticate, currentUser } from "./guards.ts";

export function searchRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    app.addHook("onRequest", authenticate(ctx));

    app.get("/api/search", async (request) => {
      const query = parseWith(SearchQuery, request.query);
      const items = searchTasks(ctx, currentUser(request), query);
      return { query: query.q, items };
    });
  };
}
