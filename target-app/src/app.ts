import type { AddressInfo } from "node:net";
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import { type AppConfig, type Env, loadConfig } from "./config.ts";
import { openDatabase } from "./db/connection.ts";
import { createSchema, dropSchema, hasSchema } from "./db/schema.ts";
import { seedDatabase } from "./db/seed.ts";
import { Hub } from "./realtime/hub.ts";
import { Presence } from "./realtime/presence.ts";
import { attachRealtime } from "./realtime/socket.ts";
import { adminRoutes } from "./routes/admin.ts";
import { authRoutes } from "./routes/auth.ts";
import { commentRoutes } from "./routes/comments.ts";
import { exportRoutes } from "./routes/export.ts";
import { sessionFromRequest } from "./routes/guards.ts";
import { pageRoutes } from "./routes/pages.ts";
import { projectRoutes } from "./routes/projects.ts";
import { reportRoutes } from "./routes/reports.ts";
import { searchRoutes } from "./routes/search.ts";
import { systemRoutes } from "./routes/system.ts";
import { taskRoutes } from "./routes/tasks.ts";
import type { ServiceContext } from "./services/context.ts";
import { HttpError } from "./services/errors.ts";
import { EventBus } from "./services/events.ts";
import { describeUser, tenantName } from "./services/workspace.ts";
import { notFoundPage } from "./views/misc.ts";

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join("; ");

export interface BuiltApp {
  app: FastifyInstance;
  ctx: ServiceContext;
  hub: Hub;
  reset: () => void;
}

export function buildApp(config: AppConfig, env: Env = process.env): BuiltApp {
  const db = openDatabase(config.dbFile, { sqlLogFile: config.sqlLogFile });
  if (!hasSchema(db)) {
    dropSchema(db);
    createSchema(db);
    seedDatabase(db);
  }
  const events = new EventBus();
  const ctx: ServiceContext = { db, config, events, loginFailures: new Map() };
  const hub = new Hub({ avatarsDir: config.avatarsDir, lookupUser: (id) => describeUser(ctx, id) });
  const presence = new Presence();
  events.subscribe((event) => {
    hub.publish(event).catch((error: unknown) => app.log.error({ err: error }, "publishing an event failed"));
  });

  const reset = () => {
    db.transaction(() => {
      dropSchema(db);
      createSchema(db);
      seedDatabase(db);
    })();
    ctx.loginFailures.clear();
    hub.reset();
  };

  const app = Fastify({
    logger: config.logLevel === "silent" ? false : { level: config.logLevel },
    bodyLimit: 256 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.decorateRequest("user", null);

  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string" },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    },
  );

  const allowedOrigins = (env.CORS_ORIGINS ?? "*").split(",").map((origin) => origin.trim());
  app.addHook("onRequest", async (request, reply) => {
    const origin = request.headers.origin;
    if (!origin || !request.url.startsWith("/api/")) return;
    if (!allowedOrigins.includes("*") && !allowedOrigins.includes(origin)) return;
    reply.header("Access-Control-Allow-Origin", origin);
    reply.header("Access-Control-Allow-Credentials", "true");
    reply.header("Vary", "Origin");
    if (request.method === "OPTIONS") {
      return reply
        .header("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
        .header("Access-Control-Allow-Headers", "Authorization, Content-Type")
        .header("Access-Control-Max-Age", "600")
        .code(204)
        .send();
    }
  });

  app.addHook("onSend", async (_request, reply, payload) => {
    reply.header("X-Content-Type-Options", "nosniff");
    reply.header("X-Frame-Options", "DENY");
    reply.header("Referrer-Policy", "same-origin");
    const type = String(reply.getHeader("content-type") ?? "");
    if (type.startsWith("text/html")) {
      reply.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
      reply.header("Cache-Control", "no-store");
    }
    return payload;
  });

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      const retryAfter = (error.details as { retry_after?: number } | undefined)?.retry_after;
      if (error.statusCode === 429 && retryAfter) reply.header("Retry-After", String(retryAfter));
      return reply.code(error.statusCode).send({
        error: error.code,
        message: error.message,
        ...(error.details === undefined ? {} : { details: error.details }),
      });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ error: "bad_request", message: error.message });
    }
    request.log.error({ err: error }, "request failed");
    return reply.code(500).send({ error: "internal_error", message: "Something went wrong" });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    if (path.startsWith("/api/") || request.method !== "GET") {
      return reply.code(404).send({ error: "not_found", message: `No route for ${request.method} ${path}` });
    }
    const user = sessionFromRequest(ctx, request);
    const viewer = user ? { name: user.name, role: user.role, tenant: tenantName(ctx, user.tenantId) } : null;
    return reply.code(404).type("text/html; charset=utf-8").send(notFoundPage(viewer, path));
  });

  app.register(systemRoutes(ctx, { reset }));
  app.register(authRoutes(ctx));
  app.register(projectRoutes(ctx));
  app.register(taskRoutes(ctx));
  app.register(commentRoutes(ctx));
  app.register(searchRoutes(ctx));
  app.register(reportRoutes(ctx));
  app.register(exportRoutes(ctx));
  app.register(adminRoutes(ctx));
  app.register(pageRoutes(ctx));

  const detachRealtime = attachRealtime(app.server, ctx, hub, presence);
  app.addHook("onClose", async () => {
    detachRealtime();
    db.close();
  });
  return { app, ctx, hub, reset };
}

export interface StartOptions {
  port?: number;
  dataDir?: string;
  env?: Env;
}

export interface RunningApp {
  url: string;
  port: number;
  config: AppConfig;
  ctx: ServiceContext;
  close: () => Promise<void>;
}

/** Starts the app on 127.0.0.1; `port: 0` picks a free port. */
export async function startApp(options: StartOptions = {}): Promise<RunningApp> {
  const env = { ...process.env, ...options.env };
  const config = loadConfig(env, { port: options.port, dataDir: options.dataDir });
  const { app, ctx } = buildApp(config, env);
  await app.listen({ host: config.host, port: config.port });
  const port = (app.server.address() as AddressInfo).port;
  return {
    url: `http://${config.host}:${port}`,
    port,
    config,
    ctx,
    close: () => app.close(),
  };
}
