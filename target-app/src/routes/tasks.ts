import type { FastifyPluginAsync } from "fastify";
import type { ServiceContext } from "../services/context.ts";
import { notFound } from "../services/errors.ts";
import {
  createTask,
  deleteTask,
  duplicateTask,
  getTaskById,
  listMyTasks,
  listProjectTasks,
  listTenantTasks,
  toTask,
  updateTask,
} from "../services/tasks.ts";
import {
  MyTasksQuery,
  ProjectTasksQuery,
  parseWith,
  TaskCreate,
  TaskListQuery,
  TaskUpdate,
} from "../services/validation.ts";
import { idParam } from "../services/workspace.ts";
import { authenticate, currentUser } from "./guards.ts";

export function taskRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    app.addHook("onRequest", authenticate(ctx));

    app.get("/api/projects/:id/tasks", async (request) => {
      const id = idParam(request.params, "Project");
      return listProjectTasks(ctx, currentUser(request), id, parseWith(ProjectTasksQuery, request.query));
    });

    app.post("/api/projects/:id/tasks", async (request, reply) => {
      const id = idParam(request.params, "Project");
      const task = await createTask(ctx, currentUser(request), id, parseWith(TaskCreate, request.body));
      return reply.code(201).send(task);
    });

    app.get("/api/tasks", async (request) => {
      return listTenantTasks(ctx, currentUser(request), parseWith(TaskListQuery, request.query));
    });

    app.get("/api/me/tasks", async (request) => {
      const { limit } = parseWith(MyTasksQuery, request.query);
      return { items: listMyTasks(ctx, currentUser(request), limit) };
    });

    app.get("/api/tasks/:id", async (request) => {
      const task = getTaskById(ctx, idParam(request.params, "Task"));
      if (!task) throw notFound("Task");
      return toTask(task);
    });

    app.patch("/api/tasks/:id", async (request) => {
      const id = idParam(request.params, "Task");
      return updateTask(ctx, currentUser(request), id, parseWith(TaskUpdate, request.body));
    });

    app.delete("/api/tasks/:id", async (request, reply) => {
      deleteTask(ctx, currentUser(request), idParam(request.params, "Task"));
      return reply.code(204).send();
    });

    app.post("/api/tasks/:id/duplicate", async (request, reply) => {
      const task = await duplicateTask(ctx, currentUser(request), idParam(request.params, "Task"));
      return reply.code(201).send(task);
    });
  };
}
