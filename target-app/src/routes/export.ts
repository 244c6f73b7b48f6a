import type { FastifyPluginAsync } from "fastify";
import { rows } from "../db/connection.ts";
import { resolveSession, tokenFromHeaders } from "../services/auth.ts";
import type { ServiceContext } from "../services/context.ts";
import { forbidden, notFound } from "../services/errors.ts";
import { ExportQuery, parseWith } from "../services/validation.ts";
import { canExport, idParam, toCsv } from "../services/workspace.ts";

const COLUMNS = [
  "key",
  "title",
  "status",
  "priority",
  "assignee",
  "estimate_hours",
  "due_date",
  "created_at",
];

export function exportRoutes(ctx: ServiceContext): FastifyPluginAsync {
  return async (app) => {
    // Download links may carry the token in the query string so they work from a plain <a href>.
    app.get("/api/projects/:id/export", async (request, reply) => {
      const id = idParam(request.params, "Project");
      const query = parseWith(ExportQuery, request.query);
      const token = tokenFromHeaders(request.headers) ?? (request.query as { token?: string }).token;
      const user = token ? resolveSession(ctx, token) : null;

      const [project] = rows<{ id: number; tenant_id: number; key: string; name: string }>(
        ctx.db,
        "SELECT id, tenant_id, key, name FROM projects WHERE id = ?",
        id,
      );
      if (!project || (user && user.tenantId !== project.tenant_id)) throw notFound("Project");
      if (user && !canExport(ctx, user))
        throw forbidden("Exports are turned off for members of this workspace");

      const tasks = rows<Record<string, unknown>>(
        ctx.db,
        `SELECT p.key || '-' || t.number AS key, t.title, t.status, t.priority, u.name AS assignee, t.estimate_hours,
           t.due_date, t.created_at
         FROM tasks t JOIN projects p ON p.id = t.project_id LEFT JOIN users u ON u.id = t.assignee_id
         WHERE t.project_id = ? ORDER BY t.number`,
        project.id,
      );
      if (query.format === "json") {
        return { project: { id: project.id, key: project.key, name: project.name }, tasks };
      }
      return reply
        .header("Content-Type", "text/csv; charset=utf-8")
        .header("Content-Disposition", `attachment; filename="${project.key}-tasks.csv"`)
        .send(toCsv(tasks, COLUMNS));
    });
  };
}
