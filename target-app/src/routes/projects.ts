import type { FastifyPluginAsync } from "fastify";
import type { ServiceContext } from "../services/context.ts";
import {
  createProject,
  deleteProject,
  getProjectByKey,
  getProjectDetail,
  listProjects,
  listTimeEntries,
  logTime,
  toProject,
  updateProject,
} from "../services/projects.ts";
import {
  ProjectCreate,
  ProjectListQuery,
  ProjectUpdate,
  parseWith,
  TimeEntryCreate,
  TimeEntryListQuery,
} from "../services/validation.ts";
import { idParam } from "../services/workspace.ts";
import { authenticate, currentUser } from "./guards.ts";

export function projectRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    app.addHook("onRequest", authenticate(ctx));

    app.get("/api/projects", async (request) => {
      return listProjects(ctx, currentUser(request), parseWith(ProjectListQuery, request.query));
    });

    app.post("/api/projects", async (request) => {
      return createProject(ctx, currentUser(request), parseWith(ProjectCreate, request.body));
    });

    app.get("/api/projects/by-key/:key", async (request) => {
      const { key } = request.params as { key: string };
      return toProject(getProjectByKey(ctx, currentUser(request), key));
    });

    app.get("/api/projects/:id", async (request) => {
      return getProjectDetail(ctx, currentUser(request), idParam(request.params, "Project"));
    });

    app.patch("/api/projects/:id", async (request) => {
      const id = idParam(request.params, "Project");
      return updateProject(ctx, currentUser(request), id, parseWith(ProjectUpdate, request.body));
    });

    app.delete("/api/projects/:id", async (request, reply) => {
      deleteProject(ctx, currentUser(request), idParam(request.params, "Project"));
      return reply.code(204).send();
    });

    app.get("/api/projects/:id/time-entries", async (request) => {
      const id = idParam(request.params, "Project");
      return listTimeEntries(ctx, currentUser(request), id, parseWith(TimeEntryListQuery, request.query));
    });

    app.post("/api/projects/:id/time-entries", async (request, reply) => {
      const id = idParam(request.params, "Project");
      const entry = logTime(ctx, currentUser(request), id, parseWith(TimeEntryCreate, request.body));
      return reply.code(201).send(entry);
    });
  };
}
