import type { Db } from "./connection.ts";
import {
  COMMENTS,
  PRIORITIES,
  PROJECTS,
  STATUSES,
  TASK_DESCRIPTIONS,
  TASK_TITLES,
  TENANTS,
  TIME_NOTES,
  USERS,
} from "./seed-data.ts";

const BASE_TIME = Date.parse("2026-09-01T08:00:00.000Z");
const HOUR = 3_600_000;

/** Small deterministic PRNG so every seed produces the same data. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)] as T;
}

function at(hoursAfterBase: number): string {
  return new Date(BASE_TIME + hoursAfterBase * HOUR).toISOString();
}

export interface SeedSummary {
  tenants: number;
  users: number;
  projects: number;
  tasks: number;
  comments: number;
}

export function seedDatabase(db: Db): SeedSummary {
  const random = prng(20260901);
  const tenantIds = new Map<string, number>();
  const userIds = new Map<string, number>();
  const usersByTenant = new Map<string, number[]>();
  const summary: SeedSummary = { tenants: 0, users: 0, projects: 0, tasks: 0, comments: 0 };

  const insertTenant = db.prepare("INSERT INTO tenants (slug, name, plan, created_at) VALUES (?, ?, ?, ?)");
  const insertSettings = db.prepare(
    "INSERT INTO tenant_settings (tenant_id, timezone, updated_at) VALUES (?, ?, ?)",
  );
  const insertUser = db.prepare(
    "INSERT INTO users (tenant_id, email, name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insertProject = db.prepare(
    `INSERT INTO projects (tenant_id, key, name, description, status, owner_id, budget_hours, hours_remaining,
       next_task_number, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertTask = db.prepare(
    `INSERT INTO tasks (tenant_id, project_id, number, title, description, status, priority, assignee_id,
       estimate_hours, due_date, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertComment = db.prepare(
    "INSERT INTO comments (task_id, author_id, body, created_at) VALUES (?, ?, ?, ?)",
  );
  const insertTime = db.prepare(
    `INSERT INTO time_entries (project_id, user_id, task_id, hours, note, spent_on, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const updateRemaining = db.prepare(
    "UPDATE projects SET hours_remaining = hours_remaining - ? WHERE id = ?",
  );
  const insertActivity = db.prepare(
    "INSERT INTO activity (tenant_id, actor_id, verb, subject, created_at) VALUES (?, ?, ?, ?, ?)",
  );

  const run = db.transaction(() => {
    for (const tenant of TENANTS) {
      const id = Number(insertTenant.run(tenant.slug, tenant.name, tenant.plan, at(-720)).lastInsertRowid);
      insertSettings.run(id, tenant.timezone, at(-720));
      tenantIds.set(tenant.slug, id);
      usersByTenant.set(tenant.slug, []);
      summary.tenants++;
    }
    for (const user of USERS) {
      const tenantId = tenantIds.get(user.tenant)!;
      const id = Number(
        insertUser.run(tenantId, user.email, user.name, user.role, user.passwordHash, at(-700))
          .lastInsertRowid,
      );
      userIds.set(user.email, id);
      usersByTenant.get(user.tenant)!.push(id);
      summary.users++;
    }

    let clock = 0;
    for (const project of PROJECTS) {
      const tenantId = tenantIds.get(project.tenant)!;
      const members = usersByTenant.get(project.tenant)!;
      const ownerId = userIds.get(project.owner)!;
      const projectId = Number(
        insertProject.run(
          tenantId,
          project.key,
          project.name,
          project.description,
          project.status,
          ownerId,
          project.budgetHours,
          project.budgetHours,
          project.taskCount + 1,
          at(clock),
          at(clock),
        ).lastInsertRowid,
      );
      insertActivity.run(tenantId, ownerId, "created project", project.key, at(clock));
      summary.projects++;

      const taskIds: number[] = [];
      for (let number = 1; number <= project.taskCount; number++) {
        clock += 1 + Math.floor(random() * 5);
        const creator = pick(random, members);
        const assignee = random() < 0.85 ? pick(random, members) : null;
        const estimate = random() < 0.8 ? Math.round(1 + random() * 15) : null;
        const due = random() < 0.7 ? at(clock + 24 * (3 + Math.floor(random() * 40))).slice(0, 10) : null;
        const taskId = Number(
          insertTask.run(
            tenantId,
            projectId,
            number,
            pick(random, TASK_TITLES),
            pick(random, TASK_DESCRIPTIONS),
            pick(random, STATUSES),
            pick(random, PRIORITIES),
            assignee,
            estimate,
            due,
            creator,
            at(clock),
            at(clock + 2),
          ).lastInsertRowid,
        );
        taskIds.push(taskId);
        insertActivity.run(tenantId, creator, "created task", `${project.key}-${number}`, at(clock));
        summary.tasks++;

        const commentCount = Math.floor(random() * 5);
        for (let c = 0; c < commentCount; c++) {
          const author = pick(random, members);
          insertComment.run(taskId, author, pick(random, COMMENTS), at(clock + 3 + c * 5));
          insertActivity.run(
            tenantId,
            author,
            "commented on",
            `${project.key}-${number}`,
            at(clock + 3 + c * 5),
          );
          summary.comments++;
        }
      }

      const entries = 6 + Math.floor(random() * 6);
      for (let e = 0; e < entries; e++) {
        const userId = pick(random, members);
        const hours = Math.round((1 + random() * 6) * 2) / 2;
        const spent = at(clock + e * 24);
        insertTime.run(
          projectId,
          userId,
          pick(random, taskIds),
          hours,
          pick(random, TIME_NOTES),
          spent.slice(0, 10),
          spent,
        );
        updateRemaining.run(hours, projectId);
        insertActivity.run(tenantId, userId, `logged ${hours}h on`, project.key, spent);
      }
    }
  });
  run();
  return summary;
}
