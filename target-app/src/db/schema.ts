import type { Db } from "./connection.ts";

const SCHEMA_VERSION = 7;

const TABLES = `
CREATE TABLE tenants (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  plan TEXT NOT NULL DEFAULT 'team' CHECK (plan IN ('free', 'team', 'enterprise')),
  created_at TEXT NOT NULL
);

CREATE TABLE tenant_settings (
  tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  timezone TEXT NOT NULL DEFAULT 'UTC',
  week_starts_on TEXT NOT NULL DEFAULT 'monday' CHECK (week_starts_on IN ('monday', 'sunday')),
  default_priority TEXT NOT NULL DEFAULT 'medium' CHECK (default_priority IN ('low', 'medium', 'high')),
  allow_member_exports INTEGER NOT NULL DEFAULT 1,
  webhook_url TEXT,
  updated_at TEXT NOT NULL
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('member', 'admin', 'platform_admin')),
  password_hash TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_users_tenant ON users(tenant_id);

CREATE TABLE projects (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'on_hold', 'archived')),
  owner_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  budget_hours REAL NOT NULL DEFAULT 0,
  hours_remaining REAL NOT NULL DEFAULT 0,
  next_task_number INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX idx_projects_tenant ON projects(tenant_id, name);

CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done')),
  priority TEXT NOT NULL DEFAULT 'medium',
  assignee_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  estimate_hours REAL,
  due_date TEXT,
  created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX idx_tasks_project ON tasks(project_id, number);
CREATE INDEX idx_tasks_tenant ON tasks(tenant_id, status);

CREATE TABLE comments (
  id INTEGER PRIMARY KEY,
  task_id INTEGER NOT NULL,
  author_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_comments_task ON comments(task_id);

CREATE TABLE time_entries (
  id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  task_id INTEGER REFERENCES tasks(id) ON DELETE SET NULL,
  hours REAL NOT NULL CHECK (hours > 0),
  note TEXT NOT NULL DEFAULT '',
  spent_on TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_time_project ON time_entries(project_id);
CREATE INDEX idx_time_user ON time_entries(user_id, spent_on);

CREATE TABLE activity (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  actor_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  verb TEXT NOT NULL,
  subject TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX idx_activity_tenant ON activity(tenant_id, id);

CREATE TABLE revoked_tokens (
  jti TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
`;

const DROP_ORDER = [
  "revoked_tokens",
  "activity",
  "time_entries",
  "comments",
  "tasks",
  "projects",
  "users",
  "tenant_settings",
  "tenants",
];

export function createSchema(db: Db): void {
  db.exec(TABLES);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
}

export function hasSchema(db: Db): boolean {
  return db.pragma("user_version", { simple: true }) === SCHEMA_VERSION;
}

export function dropSchema(db: Db): void {
  db.pragma("foreign_keys = OFF");
  for (const table of DROP_ORDER) db.exec(`DROP TABLE IF EXISTS ${table}`);
  db.pragma("user_version = 0");
  db.pragma("foreign_keys = ON");
}
