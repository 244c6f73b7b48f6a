import type { ServiceContext, SessionUser } from "./context.ts";
import { forbidden, notFound } from "./errors.ts";
import { type CommentPayload, commentEvent } from "./notifications.ts";
import type { TaskRow } from "./tasks.ts";

export type Comment = CommentPayload;

const COMMENT_SELECT = `SELECT c.id, c.task_id, c.author_id, u.name AS author_name, c.body, c.created_at
  FROM comments c JOIN users u ON u.id = c.author_id`;

const MAX_COMMENTS = 500;

/** The first comments of a task, oldest first. */
export function listComments(ctx: ServiceContext, taskId: number): Comment[] {
  return ctx.db
    .prepare(`${COMMENT_SELECT} WHERE c.task_id = ? ORDER BY c.id LIMIT ?`)
    .all(taskId, MAX_COMMENTS) as Comment[];
}

export function getComment(ctx: ServiceContext, user: SessionUser, id: number): Comment | null {
  const row = ctx.db
    .prepare(`${COMMENT_SELECT} JOIN tasks t ON t.id = c.task_id WHERE c.id = ? AND t.tenant_id = ?`)
    .get(id, user.tenantId) as Comment | undefined;
  return row ?? null;
}

export function addComment(ctx: ServiceContext, user: SessionUser, task: TaskRow, body: string): Comment {
  const info = ctx.db
    .prepare("INSERT INTO comments (task_id, author_id, body, created_at) VALUES (?, ?, ?, ?)")
    .run(task.id, user.id, body, new Date().toISOString());
  const comment = ctx.db
    .prepare(`${COMMENT_SELECT} WHERE c.id = ?`)
    .get(Number(info.lastInsertRowid)) as Comment;
  commentEvent(ctx, comment, task, user);
  return comment;
}

export function deleteComment(ctx: ServiceContext, user: SessionUser, id: number): void {
  const comment = getComment(ctx, user, id);
  if (!comment) throw notFound("Comment");
  if (comment.author_id !== user.id && user.role !== "admin")
    throw forbidden("Only the author or an admin can delete");
  ctx.db.prepare("DELETE FROM comments WHERE id = ?").run(id);
}
