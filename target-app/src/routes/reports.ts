import type { FastifyPluginAsync } from "fastify";
import { listActivity } from "../services/activity.ts";
import type { ServiceContext } from "../services/context.ts";
import { ActivityQuery, ForecastQuery, parseWith } from "../services/validation.ts";
import { forecastReport } from "../services/workspace.ts";
import { authenticate, currentUser } from "./guards.ts";

export function reportRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    app.addHook("onRequest", authenticate(ctx));

    app.get("/api/activity", async (request) => {
      const query = parseWith(ActivityQuery, request.query);
      const items = listActivity(ctx, currentUser(request).tenantId, query.before);
      return { items, limit: query.limit };
    });

    app.get("/api/reports/forecast", async (request) => {
      const query = parseWith(ForecastQuery, request.query);
      return forecastReport(ctx, currentUser(request), query.project_id);
    });
  };
}
