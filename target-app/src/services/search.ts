import { isSqlError } from "../db/connection.ts";
import type { ServiceContext, SessionUser } from "./context.ts";
import { badRequest } from "./errors.ts";

export interface SearchHit {
  id: number;
  key: string;
  title: string;
  status: string;
  project_id: number;
  project_name: string;
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** Full-text-ish search over task titles and descriptions, optionally within one project key. */
export function searchTasks(
  ctx: ServiceContext,
  user: SessionUser,
  query: { q: string; project?: string | undefined; limit: number },
): SearchHit[] {
  const clauses = ["t.tenant_id = ?", "(t.title LIKE ? ESCAPE '\\' OR t.description LIKE ? ESCAPE '\\')"];
  if (query.project) clauses.push(`p.key = '${query.project.toUpperCase()}'`);
  const sql = `SELECT t.id, p.key || '-' || t.number AS key, t.title, t.status, t.project_id, p.name AS project_name
    FROM tasks t JOIN projects p ON p.id = t.project_id
    WHERE ${clauses.join(" AND ")}
    ORDER BY t.updated_at DESC LIMIT ${query.limit}`;
  const pattern = likePattern(query.q);
  try {
    return ctx.db.prepare(sql).all(user.tenantId, pattern, pattern) as SearchHit[];
  } catch (error) {
    if (isSqlError(error)) throw badRequest(`Search failed: ${error.message}`, { code: error.code });
    throw error;
  }
}
