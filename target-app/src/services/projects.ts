import type { ServiceContext, SessionUser } from "./context.ts";
import { forbidden, notFound } from "./errors.ts";
import { projectEvent, timeEvent } from "./notifications.ts";
import { countTasksByStatus } from "./tasks.ts";

export interface ProjectRow {
  id: number;
  tenant_id: number;
  key: string;
  name: string;
  description: string;
  status: string;
  owner_id: number | null;
  budget_hours: number;
  hours_remaining: number;
  next_task_number: number;
  created_at: string;
  updated_at: string;
}

export interface Project {
  id: number;
  key: string;
  name: string;
  description: string;
  status: string;
  owner_id: number | null;
  budget_hours: number;
  hours_remaining: number;
  created_at: string;
  updated_at: string;
}

export interface TimeEntry {
  id: number;
  project_id: number;
  user_id: number;
  user_name: string;
  task_id: number | null;
  hours: number;
  note: string;
  spent_on: string;
  created_at: string;
}

const SORT_COLUMNS: Record<string, string> = {
  name: "p.name",
  key: "p.key",
  created_at: "p.created_at",
  updated_at: "p.updated_at",
};

export function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    status: row.status,
    owner_id: row.owner_id,
    budget_hours: row.budget_hours,
    hours_remaining: row.hours_remaining,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function getProjectById(ctx: ServiceContext, id: number): ProjectRow | undefined {
  return ctx.db.prepare("SELECT * FROM projects WHERE id = ?").get(id) as ProjectRow | undefined;
}

export function getProjectForUser(ctx: ServiceContext, user: SessionUser, id: number): ProjectRow {
  const row = ctx.db
    .prepare("SELECT * FROM projects WHERE id = ? AND tenant_id = ?")
    .get(id, user.tenantId) as ProjectRow | undefined;
  if (!row) throw notFound("Project");
  return row;
}

export function getProjectByKey(ctx: ServiceContext, user: SessionUser, key: string): ProjectRow {
  const row = ctx.db
    .prepare("SELECT * FROM projects WHERE tenant_id = ? AND key = ?")
    .get(user.tenantId, key.toUpperCase()) as ProjectRow | undefined;
  if (!row) throw notFound("Project");
  return row;
}

export function listProjects(
  ctx: ServiceContext,
  user: SessionUser,
  query: { limit: number; offset: number; sort: string; order: "asc" | "desc"; status?: string | undefined },
): { items: Project[]; total: number; limit: number; offset: number } {
  const where = query.status ? "p.tenant_id = ? AND p.status = ?" : "p.tenant_id = ?";
  const params: unknown[] = query.status ? [user.tenantId, query.status] : [user.tenantId];
  const orderBy = `${SORT_COLUMNS[query.sort] ?? "p.name"} ${query.order === "desc" ? "DESC" : "ASC"}, p.id`;
  const rows = ctx.db
    .prepare(`SELECT p.* FROM projects p WHERE ${where} ORDER BY ${orderBy} LIMIT ? OFFSET ?`)
    .all(...params, query.limit, query.offset) as ProjectRow[];
  const { total } = ctx.db
    .prepare(`SELECT COUNT(*) AS total FROM projects p WHERE ${where}`)
    .get(...params) as {
    total: number;
  };
  return { items: rows.map(toProject), total, limit: query.limit, offset: query.offset };
}

function formatHours(hours: number): string {
  return hours.toFixed(1);
}

export function getProjectDetail(ctx: ServiceContext, user: SessionUser, id: number) {
  const row = getProjectForUser(ctx, user, id);
  const owner = row.owner_id
    ? (ctx.db.prepare("SELECT id, name FROM users WHERE id = ?").get(row.owner_id) as {
        id: number;
        name: string;
      })
    : null;
  return {
    ...toProject(row),
    hours_remaining: formatHours(row.hours_remaining),
    owner: owner ?? null,
    task_counts: countTasksByStatus(ctx, row.id),
  };
}

export function createProject(
  ctx: ServiceContext,
  user: SessionUser,
  input: { key: string; name: string; description: string; status: string; budget_hours: number },
): Project {
  const now = new Date().toISOString();
  const info = ctx.db
    .prepare(
      `INSERT INTO projects (tenant_id, key, name, description, status, owner_id, budget_hours, hours_remaining,
         created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      user.tenantId,
      input.key.toUpperCase(),
      input.name,
      input.description,
      input.status,
      user.id,
      input.budget_hours,
      input.budget_hours,
      now,
      now,
    );
  const row = getProjectById(ctx, Number(info.lastInsertRowid))!;
  projectEvent(ctx, "created", row, user);
  return toProject(row);
}

export function updateProject(
  ctx: ServiceContext,
  user: SessionUser,
  id: number,
  input: {
    name?: string | undefined;
    description?: string | undefined;
    status?: string | undefined;
    budget_hours?: number | undefined;
  },
): Project {
  const row = getProjectById(ctx, id);
  if (!row) throw notFound("Project");
  const budget = input.budget_hours ?? row.budget_hours;
  ctx.db
    .prepare(
      `UPDATE projects SET name = ?, description = ?, status = ?, budget_hours = ?,
         hours_remaining = hours_remaining + ?, updated_at = ? WHERE id = ?`,
    )
    .run(
      input.name ?? row.name,
      input.description ?? row.description,
      input.status ?? row.status,
      budget,
      budget - row.budget_hours,
      new Date().toISOString(),
      id,
    );
  const updated = getProjectById(ctx, id)!;
  projectEvent(ctx, "updated", updated, user);
  return toProject(updated);
}

export function deleteProject(ctx: ServiceContext, user: SessionUser, id: number): void {
  const row = getProjectForUser(ctx, user, id);
  if (user.role !== "admin" && row.owner_id !== user.id)
    throw forbidden("Only admins and the owner can delete a project");
  ctx.db.prepare("DELETE FROM projects WHERE id = ?").run(row.id);
  projectEvent(ctx, "deleted", row, user);
}

const TIME_SELECT = `SELECT e.id, e.project_id, e.user_id, u.name AS user_name, e.task_id, e.hours, e.note,
    e.spent_on, e.created_at
  FROM time_entries e JOIN users u ON u.id = e.user_id`;

export function listTimeEntries(
  ctx: ServiceContext,
  user: SessionUser,
  projectId: number,
  page: { limit: number; offset: number },
): { items: TimeEntry[]; total: number; limit: number; offset: number } {
  const project = getProjectForUser(ctx, user, projectId);
  const items = ctx.db
    .prepare(`${TIME_SELECT} WHERE e.project_id = ? ORDER BY e.spent_on DESC, e.id DESC LIMIT ? OFFSET ?`)
    .all(project.id, page.limit, page.offset) as TimeEntry[];
  const { total } = ctx.db
    .prepare("SELECT COUNT(*) AS total FROM time_entries WHERE project_id = ?")
    .get(project.id) as {
    total: number;
  };
  return { items, total, limit: page.limit, offset: page.offset };
}

export function listMyTimeEntries(ctx: ServiceContext, user: SessionUser): TimeEntry[] {
  return ctx.db
    .prepare(`${TIME_SELECT} WHERE e.user_id = ? ORDER BY e.spent_on DESC, e.id DESC LIMIT 100`)
    .all(user.id) as TimeEntry[];
}

export function logTime(
  ctx: ServiceContext,
  user: SessionUser,
  projectId: number,
  input: { hours: number; note: string; task_id?: number | null | undefined; spent_on?: string | undefined },
): TimeEntry {
  const project = getProjectForUser(ctx, user, projectId);
  if (input.task_id) {
    const task = ctx.db
      .prepare("SELECT id FROM tasks WHERE id = ? AND project_id = ?")
      .get(input.task_id, project.id);
    if (!task) throw notFound("Task");
  }
  const now = new Date().toISOString();
  const insert = ctx.db.transaction(() => {
    const info = ctx.db
      .prepare(
        `INSERT INTO time_entries (project_id, user_id, task_id, hours, note, spent_on, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        project.id,
        user.id,
        input.task_id ?? null,
        input.hours,
        input.note,
        input.spent_on ?? now.slice(0, 10),
        now,
      );
    ctx.db
      .prepare("UPDATE projects SET hours_remaining = hours_remaining - ?, updated_at = ? WHERE id = ?")
      .run(input.hours, now, project.id);
    return Number(info.lastInsertRowid);
  });
  const entryId = insert();
  const entry = ctx.db.prepare(`${TIME_SELECT} WHERE e.id = ?`).get(entryId) as TimeEntry;
  timeEvent(ctx, entry, project, user);
  return entry;
}
