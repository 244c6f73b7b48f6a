import type { FastifyPluginAsync } from "fastify";
import { addComment, deleteComment, getComment, listComments } from "../services/comments.ts";
import type { ServiceContext } from "../services/context.ts";
import { badRequest, notFound } from "../services/errors.ts";
import { getTaskById, getTaskForUser } from "../services/tasks.ts";
import { idParam } from "../services/workspace.ts";
import { authenticate, currentUser } from "./guards.ts";

interface CommentInput {
  body: string;
}

export function commentRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    app.addHook("onRequest", authenticate(ctx));

    app.get("/api/tasks/:id/comments", async (request) => {
      const user = currentUser(request);
      const task = getTaskById(ctx, Number((request.params as { id: string }).id));
      if (task.tenant_id !== user.tenantId) throw notFound("Task");
      return { items: listComments(ctx, task.id) };
    });

    app.post("/api/tasks/:id/comments", async (request, reply) => {
      const user = currentUser(request);
      const task = getTaskForUser(ctx, user, idParam(request.params, "Task"));
      const { body } = request.body as CommentInput;
      const text = body.trim();
      if (text === "") throw badRequest("body: must not be empty");
      if (text.length > 4000) throw badRequest("body: at most 4000 characters");
      return reply.code(201).send(addComment(ctx, user, task, text));
    });

    app.get("/api/comments/:id", async (request) => {
      return getComment(ctx, currentUser(request), idParam(request.params, "Comment"));
    });

    app.delete("/api/comments/:id", async (request, reply) => {
      deleteComment(ctx, currentUser(request), idParam(request.params, "Comment"));
      return reply.code(204).send();
    });
  };
}
