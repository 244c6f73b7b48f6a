import { z } from "zod";
import { badRequest, notFound } from "./errors.ts";

export const TASK_STATUSES = ["todo", "in_progress", "done"] as const;
export const PRIORITIES = ["low", "medium", "high"] as const;
const PROJECT_STATUSES = ["active", "on_hold", "archived"] as const;

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "expected YYYY-MM-DD")
  .refine((value) => new Date(`${value}T00:00:00Z`).toISOString().startsWith(value), "not a calendar date");
const positiveInt = z.coerce.number().int().min(1);

export function parseWith<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: issue.path.join("."),
    message: issue.message,
  }));
  const first = details[0];
  throw badRequest(first ? `${first.path || "body"}: ${first.message}` : "Invalid request", details);
}

/** Ids in paths are positive integers; anything else cannot name a record. */
export function parseId(raw: unknown, what: string): number {
  if (typeof raw === "string" && /^[1-9]\d{0,9}$/.test(raw)) {
    const id = Number(raw);
    if (id <= 2_147_483_647) return id;
  }
  throw notFound(what);
}

export const LoginBody = z.object({
  email: z.string().trim().min(1).max(254),
  password: z.string().min(1).max(200),
});

export const ProjectListQuery = z.object({
  limit: positiveInt.max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  sort: z.enum(["name", "key", "created_at", "updated_at"]).default("name"),
  order: z.enum(["asc", "desc"]).default("asc"),
  status: z.enum(PROJECT_STATUSES).optional(),
});

export const ProjectCreate = z.object({
  key: z
    .string()
    .trim()
    .regex(/^[A-Za-z][A-Za-z0-9]{1,9}$/, "2-10 letters or digits, starting with a letter"),
  name: z.string().trim().min(1).max(120),
  description: z.string().max(2000).default(""),
  status: z.enum(PROJECT_STATUSES).default("active"),
  budget_hours: z.number().min(0).max(100_000).default(0),
});

export const ProjectUpdate = z.object({
  name: z.string().trim().min(1).max(120).optional(),
  description: z.string().max(2000).optional(),
  status: z.enum(PROJECT_STATUSES).optional(),
  budget_hours: z.number().min(0).max(100_000).optional(),
});

export const ProjectTasksQuery = z.object({
  limit: positiveInt.max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(TASK_STATUSES).optional(),
});

export const TaskCreate = z.object({
  title: z.string().trim().min(1).max(200),
  description: z.string().max(5000).default(""),
  status: z.enum(TASK_STATUSES).default("todo"),
  priority: z.string().optional(),
  assignee_id: z.number().int().positive().nullable().optional(),
  estimate_hours: z.number().nullable().optional(),
  due_date: isoDate.nullable().optional(),
});

export const TaskUpdate = z.object({
  title: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(5000).optional(),
  status: z.enum(TASK_STATUSES).optional(),
  priority: z.enum(PRIORITIES).optional(),
  assignee_id: z.number().int().positive().nullable().optional(),
  estimate_hours: z.number().min(0).max(1000).nullable().optional(),
  due_date: isoDate.nullable().optional(),
});

export const TaskListQuery = z.object({
  page: positiveInt.default(1),
  per_page: positiveInt.max(100).default(25),
  status: z.enum(TASK_STATUSES).optional(),
  project_id: positiveInt.optional(),
  assignee_id: positiveInt.optional(),
});

export const MyTasksQuery = z.object({
  limit: positiveInt.max(100).default(20),
});

export const TimeEntryListQuery = z.object({
  limit: positiveInt.max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const TimeEntryCreate = z.object({
  hours: z.number().positive().max(24),
  note: z.string().max(500).default(""),
  task_id: z.number().int().positive().nullable().optional(),
  spent_on: isoDate.optional(),
});

export const SearchQuery = z.object({
  q: z.string().trim().min(1).max(200),
  project: z.string().max(40).optional(),
  limit: positiveInt.max(50).default(20),
});

export const ActivityQuery = z.object({
  limit: positiveInt.max(100).default(20),
  before: positiveInt.optional(),
});

export const UserCreate = z.object({
  email: z.email().max(254),
  name: z.string().trim().min(1).max(120),
  role: z.enum(["member", "admin"]).default("member"),
  password: z.string().min(12).max(200),
});

export const UserUpdate = z.object({
  name: z.string().trim().min(1).max(120).optional(),
  role: z.enum(["member", "admin"]).optional(),
  active: z.boolean().optional(),
});

export const SettingsUpdate = z.object({
  timezone: z.string().trim().min(1).max(64).optional(),
  week_starts_on: z.enum(["monday", "sunday"]).optional(),
  default_priority: z.enum(PRIORITIES).optional(),
  allow_member_exports: z.boolean().optional(),
  webhook_url: z
    .url({ protocol: /^https$/ })
    .max(500)
    .nullable()
    .optional(),
});

export const ExportQuery = z.object({
  format: z.enum(["csv", "json"]).default("csv"),
});

export const ForecastQuery = z.object({
  project_id: positiveInt.optional(),
});
