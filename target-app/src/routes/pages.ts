import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { login, logout } from "../services/auth.ts";
import type { ServiceContext, SessionUser } from "../services/context.ts";
import { HttpError } from "../services/errors.ts";
import { getTaskForUser, toTask } from "../services/tasks.ts";
import { parseId } from "../services/validation.ts";
import {
  clearSessionCookie,
  dashboard,
  getSettings,
  isAdmin,
  memberDirectory,
  members,
  pageNumber,
  projectForEdit,
  projectPage,
  projectsPage,
  requireAdmin,
  requirePlatformAdmin,
  SESSION_COOKIE,
  safeNext,
  searchPage as searchResults,
  sessionCookie,
  taskHistory,
  taskPage,
  tenantName,
  tenantsOverview,
  timesheet,
} from "../services/workspace.ts";
import { loginPage } from "../views/auth.ts";
import { dashboardPage } from "../views/dashboard.ts";
import type { Viewer } from "../views/layout.ts";
import {
  adminPage,
  helpPage,
  notFoundPage,
  platformPage,
  searchPage,
  settingsPage,
  supportPage,
  timesheetPage,
} from "../views/misc.ts";
import { projectDetailPage, projectFormPage, projectsListPage } from "../views/projects.ts";
import { taskDetailPage, taskFormPage, taskHistoryPage } from "../views/tasks.ts";
import { sessionFromRequest } from "./guards.ts";

type PageHandler = (request: FastifyRequest, user: SessionUser, viewer: Viewer) => string | Promise<string>;

function queryValue(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value : undefined;
}

export function pageRoutes(ctx: ServiceContext): FastifyPluginAsync {
  const viewerOf = (user: SessionUser): Viewer => ({
    name: user.name,
    role: user.role,
    tenant: tenantName(ctx, user.tenantId),
  });

  /** Wraps a page: signs the visitor in from the cookie, renders HTML errors instead of JSON. */
  const page =
    (handler: PageHandler) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const user = sessionFromRequest(ctx, request);
      if (!user) {
        const hadCookie = (request.headers.cookie ?? "").includes(`${SESSION_COOKIE}=`);
        const next = encodeURIComponent(request.url);
        return reply.redirect(`/login?next=${next}${hadCookie ? "&error=expired" : ""}`, 303);
      }
      const viewer = viewerOf(user);
      try {
        const body = await handler(request, user, viewer);
        return reply.type("text/html; charset=utf-8").send(body);
      } catch (error) {
        if (!(error instanceof HttpError) || error.statusCode >= 500) throw error;
        const status = error.statusCode === 403 ? 403 : 404;
        return reply.code(status).type("text/html; charset=utf-8").send(notFoundPage(viewer, request.url));
      }
    };

  const param = (request: FastifyRequest, what: string) =>
    parseId((request.params as { id?: string }).id, what);

  return async (app) => {
    app.get("/", async (request, reply) =>
      reply.redirect(sessionFromRequest(ctx, request) ? "/dashboard" : "/login", 303),
    );

    app.get("/login", async (request, reply) => {
      if (sessionFromRequest(ctx, request)) return reply.redirect(safeNext(queryValue(request, "next")), 303);
      const html = loginPage({
        error: queryValue(request, "error"),
        next: safeNext(queryValue(request, "next")),
        email: queryValue(request, "email"),
      });
      return reply.type("text/html; charset=utf-8").send(html);
    });

    app.post("/login", async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, string | undefined>;
      const next = safeNext(form.next);
      try {
        const result = login(ctx, String(form.email ?? ""), String(form.password ?? ""), request.ip);
        return reply.header("Set-Cookie", sessionCookie(ctx.config, result.token)).redirect(next, 303);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        const code = error.statusCode === 429 ? "locked" : "invalid";
        const email = encodeURIComponent(String(form.email ?? "").slice(0, 254));
        return reply.redirect(`/login?error=${code}&email=${email}&next=${encodeURIComponent(next)}`, 303);
      }
    });

    app.post("/logout", async (request, reply) => {
      const user = sessionFromRequest(ctx, request);
      if (user) logout(ctx, user);
      return reply.header("Set-Cookie", clearSessionCookie()).redirect("/login", 303);
    });

    app.get(
      "/dashboard",
      page((_request, user, viewer) => dashboardPage(viewer, dashboard(ctx, user))),
    );

    app.get(
      "/projects",
      page((request, user, viewer) => {
        const result = projectsPage(ctx, user, pageNumber(queryValue(request, "page")));
        return projectsListPage(viewer, result.items, result.links, result.total);
      }),
    );

    app.get(
      "/projects/new",
      page((_request, _user, viewer) => projectFormPage(viewer, null)),
    );

    app.get(
      "/projects/:id",
      page((request, user, viewer) => {
        const data = projectPage(ctx, user, param(request, "Project"));
        return projectDetailPage(viewer, data.project, data.tasks, data.canExport);
      }),
    );

    app.get(
      "/projects/:id/edit",
      page((request, user, viewer) =>
        projectFormPage(viewer, projectForEdit(ctx, user, param(request, "Project"))),
      ),
    );

    app.get(
      "/projects/:id/tasks/new",
      page((request, user, viewer) => {
        const project = projectForEdit(ctx, user, param(request, "Project"));
        return taskFormPage(viewer, {
          project,
          task: null,
          members: memberDirectory(ctx, user.tenantId),
          defaultPriority: getSettings(ctx, user.tenantId).default_priority,
        });
      }),
    );

    app.get(
      "/tasks/:id",
      page((request, user, viewer) => taskDetailPage(viewer, taskPage(ctx, user, param(request, "Task")))),
    );

    app.get(
      "/tasks/:id/edit",
      page((request, user, viewer) => {
        const row = getTaskForUser(ctx, user, param(request, "Task"));
        return taskFormPage(viewer, {
          project: { id: row.project_id, key: row.project_key },
          task: toTask(row),
          members: memberDirectory(ctx, user.tenantId),
          defaultPriority: row.priority,
        });
      }),
    );

    app.get(
      "/tasks/:id/history",
      page((request, user) => {
        const history = taskHistory(ctx, user, param(request, "Task"));
        return taskHistoryPage(history.task, history.entries);
      }),
    );

    app.get(
      "/search",
      page((request, user, viewer) => {
        const q = (queryValue(request, "q") ?? "").slice(0, 200);
        return searchPage(viewer, q, searchResults(ctx, user, q));
      }),
    );

    app.get(
      "/settings",
      page((_request, user, viewer) => settingsPage(viewer, getSettings(ctx, user.tenantId), isAdmin(user))),
    );

    app.get(
      "/admin",
      page((_request, user, viewer) => {
        requireAdmin(user);
        return adminPage(viewer, members(ctx, user));
      }),
    );

    app.get(
      "/platform",
      page((_request, user, viewer) => {
        requirePlatformAdmin(user);
        return platformPage(viewer, tenantsOverview(ctx, user));
      }),
    );

    app.get(
      "/time",
      page((_request, user, viewer) => {
        return timesheetPage(viewer, timesheet(ctx, user));
      }),
    );

    app.get("/help", async (request, reply) => {
      const user = sessionFromRequest(ctx, request);
      const html = helpPage(user ? viewerOf(user) : null, queryValue(request, "topic") ?? null);
      return reply.type("text/html; charset=utf-8").send(html);
    });

    app.get("/support", async (request, reply) => {
      const user = sessionFromRequest(ctx, request);
      return reply.type("text/html; charset=utf-8").send(supportPage(user ? viewerOf(user) : null));
    });
  };
}
