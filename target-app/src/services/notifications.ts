import { recordActivity } from "./activity.ts";
import type { ServiceContext, SessionUser } from "./context.ts";
import { getProjectById, type ProjectRow, type TimeEntry, toProject } from "./projects.ts";
import { type TaskRow, toTask } from "./tasks.ts";

export interface CommentPayload {
  id: number;
  task_id: number;
  author_id: number;
  author_name: string;
  body: string;
  created_at: string;
}

/** Records the change in the activity feed and publishes it to everyone watching the workspace. */
export function taskEvent(
  ctx: ServiceContext,
  verb: "created" | "updated" | "deleted",
  task: TaskRow,
  actor: SessionUser,
) {
  const project = getProjectById(ctx, task.project_id);
  const key = `${task.project_key}-${task.number}`;
  recordActivity(ctx, task.tenant_id, actor.id, `${verb} task`, key);
  ctx.events.emit({
    tenantId: task.tenant_id,
    type: `task.${verb}`,
    actorId: actor.id,
    data: {
      task: toTask(task),
      project: project ? { id: project.id, key: project.key, name: project.name } : null,
    },
  });
}

export function projectEvent(
  ctx: ServiceContext,
  verb: "created" | "updated" | "deleted",
  project: ProjectRow,
  actor: SessionUser,
) {
  recordActivity(ctx, project.tenant_id, actor.id, `${verb} project`, project.key);
  ctx.events.emit({
    tenantId: project.tenant_id,
    type: `project.${verb}`,
    actorId: actor.id,
    data: { project: toProject(project) },
  });
}

export function timeEvent(ctx: ServiceContext, entry: TimeEntry, project: ProjectRow, actor: SessionUser) {
  recordActivity(ctx, project.tenant_id, actor.id, `logged ${entry.hours}h on`, project.key);
  const current = getProjectById(ctx, project.id);
  ctx.events.emit({
    tenantId: project.tenant_id,
    type: "time.logged",
    actorId: actor.id,
    data: { entry, hours_remaining: current?.hours_remaining ?? null },
  });
}

export function commentEvent(
  ctx: ServiceContext,
  comment: CommentPayload,
  task: TaskRow,
  actor: SessionUser,
) {
  const key = `${task.project_key}-${task.number}`;
  recordActivity(ctx, task.tenant_id, actor.id, "commented on", key);
  ctx.events.emit({
    tenantId: task.tenant_id,
    type: "comment.created",
    actorId: actor.id,
    audience: "watchers",
    data: { comment, task: { id: task.id, key, title: task.title } },
  });
}
