import type { AppConfig } from "../config.ts";
import { rows } from "../db/connection.ts";
import { type ActivityItem, recentActivity, recordActivity } from "./activity.ts";
import { recordAudit } from "./audit.ts";
import { type Comment, listComments } from "./comments.ts";
import type { ServiceContext, SessionUser } from "./context.ts";
import { badRequest, forbidden, notFound } from "./errors.ts";
import {
  getProjectDetail,
  listMyTimeEntries,
  listProjects,
  type Project,
  type TimeEntry,
} from "./projects.ts";
import { forecast } from "./reports.ts";
import { type SearchHit, searchTasks } from "./search.ts";
import {
  getTaskForUser,
  listMyTasks,
  listProjectTasks,
  type Task,
  type TaskListItem,
  toTask,
} from "./tasks.ts";
import { nowSeconds } from "./tokens.ts";
import { createUser, getUserById, listUsers, type UserDto, updateUser } from "./users.ts";
import { parseId } from "./validation.ts";

// ---------------------------------------------------------------------------------------------------------------
// Permissions

export function isAdmin(user: SessionUser): boolean {
  return user.role === "admin";
}

export function requireAdmin(user: SessionUser): void {
  if (user.role !== "admin") throw forbidden("Workspace admins only");
}

export function requirePlatformAdmin(user: SessionUser): void {
  if (user.role !== "platform_admin") throw forbidden("Platform admins only");
}

export function canExport(ctx: ServiceContext, user: SessionUser): boolean {
  if (isAdmin(user)) return true;
  return getSettings(ctx, user.tenantId).allow_member_exports;
}

// ---------------------------------------------------------------------------------------------------------------
// Ids, paging and formatting shared by the API and the pages

export function idParam(params: unknown, what: string, name = "id"): number {
  const value = (params as Record<string, unknown> | null)?.[name];
  return parseId(value, what);
}

export interface PageLink {
  page: number;
  href: string;
  current: boolean;
}

function pageLinks(basePath: string, total: number, page: number, perPage: number): PageLink[] {
  const pages = Math.max(1, Math.ceil(total / perPage));
  const links: PageLink[] = [];
  for (let number = 1; number <= pages; number++) {
    links.push({ page: number, href: `${basePath}?page=${number}`, current: number === page });
  }
  return links;
}

export function pageNumber(raw: unknown): number {
  const value = typeof raw === "string" ? Number.parseInt(raw, 10) : 1;
  return Number.isFinite(value) && value > 0 ? Math.min(value, 10_000) : 1;
}

export function formatHours(hours: number | null): string {
  if (hours === null) return "—";
  return `${Number.isInteger(hours) ? hours : hours.toFixed(1)} h`;
}

export function formatDate(iso: string | null): string {
  if (!iso) return "—";
  const date = new Date(iso.length === 10 ? `${iso}T00:00:00Z` : iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleDateString("en-GB", {
    day: "numeric",
    month: "short",
    year: "numeric",
    timeZone: "UTC",
  });
}

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  if (seconds < 30 * 86_400) return `${Math.floor(seconds / 86_400)} days ago`;
  return formatDate(iso);
}

const STATUS_LABELS: Record<string, string> = {
  todo: "To do",
  in_progress: "In progress",
  done: "Done",
  active: "Active",
  on_hold: "On hold",
  archived: "Archived",
};

export function statusLabel(status: string): string {
  return STATUS_LABELS[status] ?? status;
}

export function priorityLabel(priority: string): string {
  return priority.charAt(0).toUpperCase() + priority.slice(1);
}

// ---------------------------------------------------------------------------------------------------------------
// CSV

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  const guarded = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

export function toCsv(records: Record<string, unknown>[], columns: string[]): string {
  const lines = [columns.join(",")];
  for (const record of records) lines.push(columns.map((column) => csvCell(record[column])).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

// ---------------------------------------------------------------------------------------------------------------
// Sessions on pages

export const SESSION_COOKIE = "tl_session";

export function sessionCookie(config: AppConfig, token: string): string {
  return `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${config.tokenTtlSeconds}`;
}

export function clearSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
}

export function safeNext(raw: unknown): string {
  if (typeof raw !== "string" || !raw.startsWith("/") || raw.startsWith("//") || raw.includes("\\")) {
    return "/dashboard";
  }
  return raw;
}

export function sessionSecondsLeft(user: SessionUser): number {
  return Math.max(0, user.expiresAt - nowSeconds());
}

export function sessionExpiresAt(user: SessionUser): string {
  return new Date(user.expiresAt * 1000).toISOString();
}

// ---------------------------------------------------------------------------------------------------------------
// Tenants and settings

export interface TenantSettings {
  tenant_id: number;
  timezone: string;
  week_starts_on: string;
  default_priority: string;
  allow_member_exports: boolean;
  webhook_url: string | null;
  updated_at: string;
}

interface SettingsRow extends Omit<TenantSettings, "allow_member_exports"> {
  allow_member_exports: number;
}

export function tenantName(ctx: ServiceContext, tenantId: number): string {
  const row = ctx.db.prepare("SELECT name FROM tenants WHERE id = ?").get(tenantId) as
    | { name: string }
    | undefined;
  return row?.name ?? "Unknown workspace";
}

export function getSettings(ctx: ServiceContext, tenantId: number): TenantSettings {
  const row = ctx.db.prepare("SELECT * FROM tenant_settings WHERE tenant_id = ?").get(tenantId) as
    | SettingsRow
    | undefined;
  if (!row) throw notFound("Settings");
  return { ...row, allow_member_exports: row.allow_member_exports === 1 };
}

export function updateSettings(
  ctx: ServiceContext,
  user: SessionUser,
  input: Partial<Omit<TenantSettings, "tenant_id" | "updated_at">>,
): TenantSettings {
  requireAdmin(user);
  if (input.timezone !== undefined && !isKnownTimezone(input.timezone)) {
    throw badRequest(`timezone: unknown time zone ${input.timezone}`);
  }
  const current = getSettings(ctx, user.tenantId);
  const next = {
    ...current,
    ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)),
  };
  ctx.db
    .prepare(
      `UPDATE tenant_settings SET timezone = ?, week_starts_on = ?, default_priority = ?, allow_member_exports = ?,
         webhook_url = ?, updated_at = ? WHERE tenant_id = ?`,
    )
    .run(
      next.timezone,
      next.week_starts_on,
      next.default_priority,
      next.allow_member_exports ? 1 : 0,
      next.webhook_url ?? null,
      new Date().toISOString(),
      user.tenantId,
    );
  const changed = Object.keys(input).filter((key) => input[key as keyof typeof input] !== undefined);
  void recordAudit(ctx, user, "settings.update", changed.join(",") || "nothing");
  return getSettings(ctx, user.tenantId);
}

const TIMEZONES = new Set(Intl.supportedValuesOf("timeZone"));

function isKnownTimezone(zone: string): boolean {
  return zone === "UTC" || TIMEZONES.has(zone);
}

export interface TenantOverview {
  id: number;
  slug: string;
  name: string;
  plan: string;
  users: number;
  projects: number;
  created_at: string;
}

export function tenantsOverview(ctx: ServiceContext, user: SessionUser): TenantOverview[] {
  requirePlatformAdmin(user);
  return rows<TenantOverview>(
    ctx.db,
    `SELECT t.id, t.slug, t.name, t.plan, t.created_at,
       (SELECT COUNT(*) FROM users u WHERE u.tenant_id = t.id) AS users,
       (SELECT COUNT(*) FROM projects p WHERE p.tenant_id = t.id) AS projects
     FROM tenants t ORDER BY t.name`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Members

export function memberDirectory(ctx: ServiceContext, tenantId: number): { id: number; name: string }[] {
  return listUsers(ctx, tenantId)
    .filter((member) => member.active)
    .map((member) => ({ id: member.id, name: member.name }));
}

export function members(ctx: ServiceContext, user: SessionUser): UserDto[] {
  return listUsers(ctx, user.tenantId);
}

export function inviteMember(
  ctx: ServiceContext,
  admin: SessionUser,
  input: { email: string; name: string; role: string; password: string },
): UserDto {
  requireAdmin(admin);
  const user = createUser(ctx, admin.tenantId, input);
  recordActivity(ctx, admin.tenantId, admin.id, "invited", user.name);
  void recordAudit(ctx, admin, "user.create", user.email);
  return user;
}

export function changeMember(
  ctx: ServiceContext,
  admin: SessionUser,
  id: number,
  input: { name?: string | undefined; role?: string | undefined; active?: boolean | undefined },
): UserDto {
  requireAdmin(admin);
  if (id === admin.id && (input.role === "member" || input.active === false)) {
    throw badRequest("You cannot demote or deactivate yourself");
  }
  const user = updateUser(ctx, admin.tenantId, id, input);
  if (input.role) recordActivity(ctx, admin.tenantId, admin.id, `made ${input.role}`, user.name);
  if (input.active !== undefined) {
    recordActivity(ctx, admin.tenantId, admin.id, input.active ? "reactivated" : "deactivated", user.name);
  }
  void recordAudit(ctx, admin, "user.update", String(id));
  return user;
}

export function describeUser(
  ctx: ServiceContext,
  id: number,
): { id: number; name: string; tenant_id: number } | null {
  const row = getUserById(ctx, id);
  return row ? { id: row.id, name: row.name, tenant_id: row.tenant_id } : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Page models

export interface Dashboard {
  tenant: string;
  openTasks: number;
  dueThisWeek: number;
  activeProjects: number;
  myTasks: Task[];
  activity: ActivityItem[];
  projects: Project[];
  velocity: VelocityWeek[];
}

export function dashboard(ctx: ServiceContext, user: SessionUser): Dashboard {
  const weekAhead = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  const counts = ctx.db
    .prepare(
      `SELECT SUM(CASE WHEN status != 'done' THEN 1 ELSE 0 END) AS open,
         SUM(CASE WHEN status != 'done' AND due_date IS NOT NULL AND due_date <= ? THEN 1 ELSE 0 END) AS due
       FROM tasks WHERE tenant_id = ?`,
    )
    .get(weekAhead, user.tenantId) as { open: number | null; due: number | null };
  const projects = listProjects(ctx, user, { limit: 5, offset: 0, sort: "updated_at", order: "desc" });
  const active = listProjects(ctx, user, {
    limit: 1,
    offset: 0,
    sort: "name",
    order: "asc",
    status: "active",
  });
  return {
    tenant: tenantName(ctx, user.tenantId),
    openTasks: counts.open ?? 0,
    dueThisWeek: counts.due ?? 0,
    activeProjects: active.total,
    myTasks: listMyTasks(ctx, user, 8),
    activity: recentActivity(ctx, user.tenantId, 10),
    projects: projects.items,
    velocity: velocity(ctx, user),
  };
}

export function projectsPage(ctx: ServiceContext, user: SessionUser, page: number) {
  const perPage = 10;
  const result = listProjects(ctx, user, {
    limit: perPage,
    offset: (page - 1) * perPage,
    sort: "name",
    order: "asc",
  });
  return { ...result, page, links: pageLinks("/projects", result.total, page, perPage) };
}

export function projectPage(ctx: ServiceContext, user: SessionUser, id: number) {
  const project = getProjectDetail(ctx, user, id);
  const tasks = listProjectTasks(ctx, user, id, { limit: 200, offset: 0 });
  return { project, tasks: tasks.items, canExport: canExport(ctx, user) };
}

export function projectForEdit(ctx: ServiceContext, user: SessionUser, id: number) {
  return getProjectDetail(ctx, user, id);
}

export interface TaskPage {
  task: Task;
  project: { id: number; key: string };
  assignee: string | null;
  comments: Comment[];
  members: { id: number; name: string }[];
}

export function taskPage(ctx: ServiceContext, user: SessionUser, id: number): TaskPage {
  const row = getTaskForUser(ctx, user, id);
  const assignee = row.assignee_id ? (getUserById(ctx, row.assignee_id)?.name ?? null) : null;
  return {
    task: toTask(row),
    project: { id: row.project_id, key: row.project_key },
    assignee,
    comments: listComments(ctx, row.id),
    members: memberDirectory(ctx, user.tenantId),
  };
}

export function taskHistory(ctx: ServiceContext, user: SessionUser, id: number) {
  const row = getTaskForUser(ctx, user, id);
  const key = `${row.project_key}-${row.number}`;
  const entries = ctx.db
    .prepare(
      `SELECT a.id, a.actor_id, u.name AS actor_name, a.verb, a.subject, a.created_at
       FROM activity a LEFT JOIN users u ON u.id = a.actor_id
       WHERE a.tenant_id = ? AND a.subject = ? ORDER BY a.id DESC`,
    )
    .all(user.tenantId, key) as ActivityItem[];
  return { task: toTask(row), entries };
}

export function searchPage(ctx: ServiceContext, user: SessionUser, q: string): SearchHit[] {
  if (q.trim() === "") return [];
  return searchTasks(ctx, user, { q: q.slice(0, 200), limit: 50 });
}

// ---------------------------------------------------------------------------------------------------------------
// Calendar weeks

function weekStart(isoDate: string, startsOn: string): string {
  const date = new Date(`${isoDate.slice(0, 10)}T00:00:00Z`);
  const day = date.getUTCDay();
  const offset = startsOn === "sunday" ? day : (day + 6) % 7;
  date.setUTCDate(date.getUTCDate() - offset);
  return date.toISOString().slice(0, 10);
}

export interface WeekTotal {
  week: string;
  hours: number;
}

function weeklyTotals(entries: TimeEntry[], startsOn: string): WeekTotal[] {
  const totals = new Map<string, number>();
  for (const entry of entries) {
    const week = weekStart(entry.spent_on, startsOn);
    totals.set(week, (totals.get(week) ?? 0) + entry.hours);
  }
  return [...totals.entries()]
    .sort(([a], [b]) => (a < b ? 1 : -1))
    .map(([week, hours]) => ({ week, hours: Math.round(hours * 100) / 100 }));
}

export function timesheet(ctx: ServiceContext, user: SessionUser) {
  const entries: TimeEntry[] = listMyTimeEntries(ctx, user);
  const total = entries.reduce((sum, entry) => sum + entry.hours, 0);
  const projects = listProjects(ctx, user, {
    limit: 100,
    offset: 0,
    sort: "name",
    order: "asc",
    status: "active",
  });
  const settings = getSettings(ctx, user.tenantId);
  return { entries, total, projects: projects.items, weeks: weeklyTotals(entries, settings.week_starts_on) };
}

// ---------------------------------------------------------------------------------------------------------------
// Due dates

export type DueState = "overdue" | "today" | "soon" | "later" | "none";

export function dueState(
  task: Pick<Task, "due_date" | "status">,
  today = new Date().toISOString().slice(0, 10),
): DueState {
  if (!task.due_date || task.status === "done") return "none";
  if (task.due_date < today) return "overdue";
  if (task.due_date === today) return "today";
  const days = (Date.parse(task.due_date) - Date.parse(today)) / 86_400_000;
  return days <= 7 ? "soon" : "later";
}

export const DUE_LABELS: Record<DueState, string> = {
  overdue: "Overdue",
  today: "Due today",
  soon: "Due this week",
  later: "",
  none: "",
};

// ---------------------------------------------------------------------------------------------------------------
// Velocity

export interface VelocityWeek {
  week: string;
  done: number;
}

export function velocity(ctx: ServiceContext, user: SessionUser, weeks = 8): VelocityWeek[] {
  const settings = getSettings(ctx, user.tenantId);
  const since = new Date(Date.now() - weeks * 7 * 86_400_000).toISOString();
  const done = ctx.db
    .prepare("SELECT updated_at FROM tasks WHERE tenant_id = ? AND status = 'done' AND updated_at >= ?")
    .all(user.tenantId, since) as { updated_at: string }[];
  const counts = new Map<string, number>();
  for (let i = weeks - 1; i >= 0; i--) {
    const day = new Date(Date.now() - i * 7 * 86_400_000).toISOString();
    counts.set(weekStart(day, settings.week_starts_on), 0);
  }
  for (const row of done) {
    const week = weekStart(row.updated_at, settings.week_starts_on);
    if (counts.has(week)) counts.set(week, (counts.get(week) ?? 0) + 1);
  }
  return [...counts.entries()].map(([week, count]) => ({ week, done: count }));
}

export function forecastReport(ctx: ServiceContext, user: SessionUser, projectId?: number) {
  return { generated_at: new Date().toISOString(), projects: forecast(ctx, user, projectId) };
}

export function boardColumns(items: TaskListItem[]): Record<string, TaskListItem[]> {
  const columns: Record<string, TaskListItem[]> = { todo: [], in_progress: [], done: [] };
  for (const item of items) {
    const column = columns[item.status] ?? [];
    column.push(item);
    columns[item.status] = column;
  }
  return columns;
}
