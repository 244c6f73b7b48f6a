import type { ServiceContext } from "./context.ts";

export interface ActivityItem {
  id: number;
  actor_id: number | null;
  actor_name: string | null;
  verb: string;
  subject: string;
  created_at: string;
}

const SELECT = `SELECT a.id, a.actor_id, u.name AS actor_name, a.verb, a.subject, a.created_at
  FROM activity a LEFT JOIN users u ON u.id = a.actor_id`;

export function recordActivity(
  ctx: ServiceContext,
  tenantId: number,
  actorId: number | null,
  verb: string,
  subject: string,
): void {
  ctx.db
    .prepare("INSERT INTO activity (tenant_id, actor_id, verb, subject, created_at) VALUES (?, ?, ?, ?, ?)")
    .run(tenantId, actorId, verb, subject, new Date().toISOString());
}

/** The activity feed, newest first; `before` continues from an earlier page. */
export function listActivity(ctx: ServiceContext, tenantId: number, before?: number): ActivityItem[] {
  if (before !== undefined) {
    return ctx.db
      .prepare(`${SELECT} WHERE a.tenant_id = ? AND a.id < ? ORDER BY a.id DESC`)
      .all(tenantId, before) as ActivityItem[];
  }
  return ctx.db.prepare(`${SELECT} WHERE a.tenant_id = ? ORDER BY a.id DESC`).all(tenantId) as ActivityItem[];
}

export function recentActivity(ctx: ServiceContext, tenantId: number, count: number): ActivityItem[] {
  return ctx.db
    .prepare(`${SELECT} WHERE a.tenant_id = ? ORDER BY a.id DESC LIMIT ?`)
    .all(tenantId, count) as ActivityItem[];
}
