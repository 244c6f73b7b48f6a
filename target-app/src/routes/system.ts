import { readFileSync } from "node:fs";
import path from "node:path";
import type { FastifyPluginAsync } from "fastify";
import { parse } from "yaml";
import { APP_ROOT } from "../config.ts";
import type { ServiceContext } from "../services/context.ts";
import { notFound } from "../services/errors.ts";

const STATIC_TYPES: Record<string, string> = {
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

const STATIC_FILES = ["app.css", "app.js", "dashboard.js", "support.js", "logo.svg", "avatar.svg"];

const APP_ENV =
  /^(PORT|DATA_DIR|SQL_LOG|SQL_LOG_FILE|APP_TEST_RESET|TOKEN_|LOGIN_|LOG_LEVEL|CORS_ORIGINS|NODE_ENV|TZ)/;

export function systemRoutes(ctx: ServiceContext, options: { reset: () => void }): FastifyPluginAsync {
  const startedAt = Date.now();
  const openapiYaml = readFileSync(path.join(APP_ROOT, "openapi.yaml"), "utf8");
  const openapiJson = parse(openapiYaml) as unknown;
  const staticFiles = new Map(
    STATIC_FILES.map((name) => [name, readFileSync(path.join(ctx.config.publicDir, name))] as const),
  );

  return async (app) => {
    app.get("/health", async () => {
      ctx.db.prepare("SELECT 1").get();
      return {
        status: "ok",
        version: ctx.config.version,
        uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
      };
    });

    app.get("/openapi.json", async () => openapiJson);
    app.get("/openapi.yaml", async (_request, reply) => reply.type("application/yaml").send(openapiYaml));

    app.get("/debug/config", async () => ({
      version: ctx.config.version,
      node: process.version,
      pid: process.pid,
      uptime_seconds: Math.round(process.uptime()),
      memory: process.memoryUsage(),
      config: ctx.config,
      env: Object.fromEntries(Object.entries(process.env).filter(([key]) => APP_ENV.test(key))),
    }));

    app.get("/static/:name", async (request, reply) => {
      const { name } = request.params as { name: string };
      const file = staticFiles.get(name);
      if (!file) throw notFound("File");
      return reply
        .type(STATIC_TYPES[path.extname(name)] ?? "application/octet-stream")
        .header("Cache-Control", "public, max-age=300")
        .send(file);
    });

    app.get("/favicon.ico", async (_request, reply) => reply.redirect("/static/logo.svg", 301));

    if (ctx.config.testReset) {
      app.post("/__test/reset", async () => {
        options.reset();
        return { status: "reset" };
      });
    }
  };
}
