import { recordAudit } from "./audit.ts";
import type { ServiceContext, SessionUser } from "./context.ts";
import { badRequest, notFound } from "./errors.ts";
import { taskEvent } from "./notifications.ts";
import { getProjectForUser } from "./projects.ts";

export interface TaskRow {
  id: number;
  tenant_id: number;
  project_id: number;
  project_key: string;
  number: number;
  title: string;
  description: string;
  status: string;
  priority: string;
  assignee_id: number | null;
  estimate_hours: number | null;
  due_date: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface Task {
  id: number;
  project_id: number;
  key: string;
  number: number;
  title: string;
  description: string;
  status: string;
  priority: string;
  assignee_id: number | null;
  estimate_hours: number | null;
  due_date: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface TaskListItem extends Task {
  assignee: { id: number; name: string } | null;
  comment_count: number;
}

export interface TaskInput {
  title: string;
  description: string;
  status: string;
  priority?: string | undefined;
  assignee_id?: number | null | undefined;
  estimate_hours?: number | null | undefined;
  due_date?: string | null | undefined;
}

const TASK_SELECT = "SELECT t.*, p.key AS project_key FROM tasks t JOIN projects p ON p.id = t.project_id";

export function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    project_id: row.project_id,
    key: `${row.project_key}-${row.number}`,
    number: row.number,
    title: row.title,
    description: row.description,
    status: row.status,
    priority: row.priority,
    assignee_id: row.assignee_id,
    estimate_hours: row.estimate_hours,
    due_date: row.due_date,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function getTaskById(ctx: ServiceContext, id: number): TaskRow {
  return ctx.db.prepare(`${TASK_SELECT} WHERE t.id = ?`).get(id) as TaskRow;
}

export function getTaskForUser(ctx: ServiceContext, user: SessionUser, id: number): TaskRow {
  const row = ctx.db.prepare(`${TASK_SELECT} WHERE t.id = ? AND t.tenant_id = ?`).get(id, user.tenantId) as
    | TaskRow
    | undefined;
  if (!row) throw notFound("Task");
  return row;
}

function assertAssignable(ctx: ServiceContext, tenantId: number, userId: number | null | undefined): void {
  if (!userId) return;
  const member = ctx.db
    .prepare("SELECT id FROM users WHERE id = ? AND tenant_id = ? AND active = 1")
    .get(userId, tenantId);
  if (!member) throw badRequest("assignee_id: not a member of this workspace");
}

export function countTasksByStatus(ctx: ServiceContext, projectId: number): Record<string, number> {
  const counts: Record<string, number> = { todo: 0, in_progress: 0, done: 0 };
  const rows = ctx.db
    .prepare("SELECT status, COUNT(*) AS count FROM tasks WHERE project_id = ? GROUP BY status")
    .all(projectId) as { status: string; count: number }[];
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}

export function listProjectTasks(
  ctx: ServiceContext,
  user: SessionUser,
  projectId: number,
  query: { limit: number; offset: number; status?: string | undefined },
): { items: TaskListItem[]; total: number; limit: number; offset: number } {
  const project = getProjectForUser(ctx, user, projectId);
  const where = query.status ? "t.project_id = ? AND t.status = ?" : "t.project_id = ?";
  const params: unknown[] = query.status ? [project.id, query.status] : [project.id];
  const rows = ctx.db
    .prepare(`${TASK_SELECT} WHERE ${where} ORDER BY t.number LIMIT ? OFFSET ?`)
    .all(...params, query.limit, query.offset) as TaskRow[];
  const items = rows.map((row) => {
    const assignee = row.assignee_id
      ? (ctx.db.prepare("SELECT id, name FROM users WHERE id = ?").get(row.assignee_id) as {
          id: number;
          name: string;
        })
      : null;
    const { count } = ctx.db
      .prepare("SELECT COUNT(*) AS count FROM comments WHERE task_id = ?")
      .get(row.id) as {
      count: number;
    };
    return { ...toTask(row), assignee: assignee ?? null, comment_count: count };
  });
  const { total } = ctx.db.prepare(`SELECT COUNT(*) AS total FROM tasks t WHERE ${where}`).get(...params) as {
    total: number;
  };
  return { items, total, limit: query.limit, offset: query.offset };
}

export function listTenantTasks(
  ctx: ServiceContext,
  user: SessionUser,
  query: {
    page: number;
    per_page: number;
    status?: string | undefined;
    project_id?: number | undefined;
    assignee_id?: number | undefined;
  },
): { items: TaskListItem[]; page: number; per_page: number; total: number } {
  const clauses = ["t.tenant_id = ?"];
  const params: unknown[] = [user.tenantId];
  if (query.status) {
    clauses.push("t.status = ?");
    params.push(query.status);
  }
  if (query.project_id) {
    clauses.push("t.project_id = ?");
    params.push(query.project_id);
  }
  if (query.assignee_id) {
    clauses.push("t.assignee_id = ?");
    params.push(query.assignee_id);
  }
  const where = clauses.join(" AND ");
  const rows = ctx.db
    .prepare(
      `SELECT t.*, p.key AS project_key, u.name AS assignee_name,
         (SELECT COUNT(*) FROM comments c WHERE c.task_id = t.id) AS comment_count
       FROM tasks t JOIN projects p ON p.id = t.project_id LEFT JOIN users u ON u.id = t.assignee_id
       WHERE ${where} ORDER BY t.id DESC LIMIT ? OFFSET ?`,
    )
    .all(...params, query.per_page, (query.page - 1) * query.per_page) as (TaskRow & {
    assignee_name: string | null;
    comment_count: number;
  })[];
  const { total } = ctx.db.prepare(`SELECT COUNT(*) AS total FROM tasks t WHERE ${where}`).get(...params) as {
    total: number;
  };
  const items = rows.map((row) => ({
    ...toTask(row),
    assignee: row.assignee_id && row.assignee_name ? { id: row.assignee_id, name: row.assignee_name } : null,
    comment_count: row.comment_count,
  }));
  return { items, page: query.page, per_page: query.per_page, total };
}

export function listMyTasks(ctx: ServiceContext, user: SessionUser, limit: number): Task[] {
  const rows = ctx.db
    .prepare(
      `${TASK_SELECT} WHERE t.assignee_id = ? AND t.status != 'done'
       ORDER BY t.due_date IS NULL, t.due_date, t.id LIMIT ?`,
    )
    .all(user.id, limit) as TaskRow[];
  return rows.map(toTask);
}

export async function createTask(
  ctx: ServiceContext,
  user: SessionUser,
  projectId: number,
  input: TaskInput,
): Promise<Task> {
  const project = getProjectForUser(ctx, user, projectId);
  assertAssignable(ctx, user.tenantId, input.assignee_id);
  const settings = ctx.db
    .prepare("SELECT default_priority FROM tenant_settings WHERE tenant_id = ?")
    .get(user.tenantId) as { default_priority: string } | undefined;
  const number = project.next_task_number;
  const now = new Date().toISOString();
  const info = ctx.db
    .prepare(
      `INSERT INTO tasks (tenant_id, project_id, number, title, description, status, priority, assignee_id,
         estimate_hours, due_date, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      user.tenantId,
      project.id,
      number,
      input.title,
      input.description,
      input.status,
      input.priority ?? settings?.default_priority ?? "medium",
      input.assignee_id ?? null,
      input.estimate_hours ?? null,
      input.due_date ?? null,
      user.id,
      now,
      now,
    );
  await recordAudit(ctx, user, "task.create", `${project.key}-${number}`);
  ctx.db
    .prepare("UPDATE projects SET next_task_number = ?, updated_at = ? WHERE id = ?")
    .run(number + 1, now, project.id);
  const row = getTaskById(ctx, Number(info.lastInsertRowid));
  taskEvent(ctx, "created", row, user);
  return toTask(row);
}

export function duplicateTask(ctx: ServiceContext, user: SessionUser, id: number): Promise<Task> {
  const source = getTaskForUser(ctx, user, id);
  return createTask(ctx, user, source.project_id, {
    title: `${source.title} (copy)`.slice(0, 200),
    description: source.description,
    status: "todo",
    priority: source.priority,
    assignee_id: source.assignee_id,
    estimate_hours: source.estimate_hours,
    due_date: source.due_date,
  });
}

export function updateTask(
  ctx: ServiceContext,
  user: SessionUser,
  id: number,
  input: Partial<TaskInput>,
): Task {
  const row = getTaskForUser(ctx, user, id);
  if (input.assignee_id !== undefined) assertAssignable(ctx, user.tenantId, input.assignee_id);
  const pick = <K extends keyof TaskRow>(key: K & keyof TaskInput): TaskRow[K] =>
    (input[key] === undefined ? row[key] : input[key]) as TaskRow[K];
  ctx.db
    .prepare(
      `UPDATE tasks SET title = ?, description = ?, status = ?, priority = ?, assignee_id = ?, estimate_hours = ?,
         due_date = ?, updated_at = ? WHERE id = ?`,
    )
    .run(
      pick("title"),
      pick("description"),
      pick("status"),
      pick("priority"),
      pick("assignee_id"),
      pick("estimate_hours"),
      pick("due_date"),
      new Date().toISOString(),
      row.id,
    );
  const updated = getTaskById(ctx, row.id);
  taskEvent(ctx, "updated", updated, user);
  return toTask(updated);
}

export function deleteTask(ctx: ServiceContext, user: SessionUser, id: number): void {
  const row = getTaskForUser(ctx, user, id);
  ctx.db.prepare("DELETE FROM tasks WHERE id = ?").run(row.id);
  taskEvent(ctx, "deleted", row, user);
}
