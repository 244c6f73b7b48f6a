import path from "node:path";
import type { Operation } from "../map/system-map.ts";
import { openApiFileIn } from "../probes/openapi/discover-openapi.ts";
import { findOpenApiHints } from "../probes/openapi/find-openapi-files.ts";
import { operationsFromOpenApi } from "../probes/openapi/operations-from-openapi.ts";
import { scanSourceRoutes } from "../probes/routes/find-source-routes.ts";
import { composeOperations } from "../tools/servers/map-draft.ts";
import { guessDatabase } from "./guess-database.ts";
import { guessFramework } from "./guess-framework.ts";
import { guessLogin } from "./guess-login.ts";
import { guessPort, guessStart } from "./guess-start.ts";
import { readRepository } from "./repository.ts";

// A starting profile for a repository nobody described: every section qaas can fill from the code,
// each value with where it was found, and what it could not find said plainly.

export interface Guessed {
  what: string;
  value: string;
  from: string;
}

export interface ProfileGuess {
  name: string;
  /** The profile as plain data, keys in the order a person reads them. */
  profile: Record<string, unknown>;
  guessed: Guessed[];
  /** Things looked for and not found, each with what to do about it. */
  missing: string[];
  /** Environment variables the profile names (users' credentials, a database URL). */
  secrets: string[];
  /** How many operations the inventory holds, by where they were found. */
  operations: { total: number; documented: number; fromSource: number };
}

export interface GuessProfileOptions {
  /** The profile's name (default: package name, else the folder's). */
  name?: string;
  /** Where `name` came from, for the header (default `--name`). */
  nameFrom?: string;
  /** The folder the profile will be written in, so source.path is relative to it. */
  profileDir: string;
  /** Absolute paths never to read. */
  exclude?: string[];
}

const HEALTH_PATH =
  /^\/(?:api\/)?(?:v\d+\/)?_?(?:health|healthz|healthcheck|health-check|health_check|livez|readyz|ready|alive|ping|status)\/?$/i;
const HEALTH_ORDER = [
  "health",
  "healthz",
  "healthcheck",
  "health-check",
  "health_check",
  "livez",
  "readyz",
  "ready",
  "alive",
  "ping",
  "status",
];
/** A socket.io server (Node `socket.io`, Python `socketio`/`flask_socketio`), whose default path is /socket.io/. */
const SOCKET_IO_IMPORT =
  /(?:require\(\s*|from\s+)["']socket\.io["']|^\s*(?:from\s+(?:flask_socketio|socketio)\s+import|import\s+socketio\b)/m;
const RENDERS_HTML =
  /text\/html|res\.render\(|render_template\(|\brender\(\s*request\b|TemplateResponse\(|<!doctype html|<html\b/i;

export async function guessProfile(root: string, options: GuessProfileOptions): Promise<ProfileGuess> {
  const repository = readRepository(root, { exclude: options.exclude });
  const scan = scanSourceRoutes(root, { exclude: options.exclude });
  const guessed: Guessed[] = [];
  const missing: string[] = [];
  const note = (what: string, value: string, from: string) => guessed.push({ what, value, from });

  const name = options.name ?? profileName(repository.projectName?.name, root);
  note(
    "name",
    name,
    options.name ? (options.nameFrom ?? "--name") : (repository.projectName?.from ?? "the folder's name"),
  );

  const framework = guessFramework(repository, scan.routes);
  if (framework) note("framework", framework.name, framework.from);
  else missing.push("no web framework recognised");

  const hints = findOpenApiHints(root, { exclude: options.exclude });
  const document = await openApiFileIn(root, hints);
  const documented: Operation[] = document ? operationsFromOpenApi(document.loaded.document) : [];
  const operations = composeOperations(documented, scan.routes);
  let openapi: string | undefined;
  if (document) {
    openapi = document.location;
    note("api.openapi", openapi, document.found);
  } else if (hints.urls[0]) {
    openapi = hints.urls[0].path;
    note("api.openapi", openapi, `served by the app (${hints.urls[0].from})`);
  } else if (framework?.name === "fastapi" && !/openapi_url\s*=\s*None/.test(allCode(repository))) {
    openapi = "/openapi.json";
    note("api.openapi", openapi, "FastAPI serves its document there unless openapi_url is changed");
  } else {
    missing.push(
      "no OpenAPI document: MAPPER builds the operation inventory from the source and the live app",
    );
  }

  const port = guessPort(repository, framework);
  const start = guessStart(repository, framework, port);
  const baseUrl = `http://127.0.0.1:${port.port}`;
  note("port", String(port.port), port.from);
  if (start) note("environment.start", start.command, start.from);
  else
    missing.push(
      "no start command: environment.mode is external (start the app yourself), or add environment.start and set mode: managed",
    );

  const health = operations
    .filter(
      (operation) =>
        (operation.method === "GET" || operation.method === "ALL") && HEALTH_PATH.test(operation.path),
    )
    .sort((left, right) => healthRank(left.path) - healthRank(right.path))[0];
  const healthPath = health?.path ?? "/";
  note(
    "environment.health_path",
    healthPath,
    health ? `route GET ${health.path}${handlerAt(health)}` : "no /health-like route; the entry page",
  );

  const database = guessDatabase(repository);
  if (database)
    note(
      "database",
      database.kind === "sqlite" ? `sqlite ${database.path}` : `postgres from ${database.url_env}`,
      database.in,
    );
  else missing.push("no database found in the source: DBA needs database (kind and path or url)");

  const channels = [...new Set(scan.channels.map((channel) => channel.path))];
  const socketIo = repository.codeFiles.find((file) => SOCKET_IO_IMPORT.test(repository.read(file)));
  if (socketIo && !channels.some((channel) => channel.startsWith("/socket.io"))) channels.push("/socket.io/");
  if (channels.length > 0)
    note(
      "websocket.paths",
      channels.join(", "),
      [
        ...new Set(scan.channels.map((channel) => `${channel.file}:${channel.line}`)),
        ...(socketIo ? [`socket.io imported in ${socketIo}`] : []),
      ].join(", "),
    );

  const htmlAt =
    repository.templateFiles[0] ??
    repository.codeFiles.find((file) => RENDERS_HTML.test(repository.read(file)));
  if (htmlAt) note("ui.entry", "/", `HTML served (${htmlAt})`);
  else missing.push("no HTML pages found: BROWSER and GUIDE need ui.entry");

  const login = guessLogin(operations, repository, framework);
  if (login) note("auth.login", `${login.recipe.kind} ${login.recipe.endpoint}`, login.from.join("; "));
  else missing.push("no sign-in route found: users carry a token each (bearer); or write auth.login");

  const variable = name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, "_")
    .replace(/^(?=\d)/, "T_");
  const credential = login ? "password" : "token";
  const users = ["user_a", "user_b"].map((user) => ({
    name: user,
    role: "user",
    username: "",
    [credential]: `secret_ref:${variable}_${user.toUpperCase()}_${credential.toUpperCase()}`,
  }));
  const secrets = users.map((user) => String(user[credential]).slice("secret_ref:".length));
  if (database?.url_env) secrets.push(database.url_env);

  const tests = testCommand(repository);
  const profile: Record<string, unknown> = {
    name,
    ...(repository.packageJson?.description ? { description: repository.packageJson.description } : {}),
    source: { path: sourcePath(options.profileDir, root) },
    environment: {
      mode: start ? "managed" : "external",
      base_url: baseUrl,
      health_path: healthPath,
      ...(start ? { start: { command: start.command, ...(start.env ? { env: start.env } : {}) } } : {}),
    },
    ...(openapi ? { api: { openapi } } : {}),
    ...(htmlAt ? { ui: { entry: "/" } } : {}),
    ...(channels.length > 0 ? { websocket: { paths: channels } } : {}),
    ...(database
      ? {
          database:
            database.kind === "sqlite"
              ? { kind: "sqlite", path: database.path }
              : { kind: "postgres", url: `secret_ref:${database.url_env}` },
        }
      : {}),
    ...(tests ? { tests } : {}),
    ...(login ? { auth: { login: login.recipe } } : {}),
    users,
  };
  return {
    name,
    profile,
    guessed,
    missing,
    secrets,
    operations: {
      total: operations.length,
      documented: operations.filter((operation) => operation.documented).length,
      fromSource: operations.filter((operation) => operation.seen_in.includes("source")).length,
    },
  };
}

/** A profile name from a package name (`@acme/Shop API` → `shop-api`) or a folder name. */
export function profileName(packageName: string | undefined, root: string): string {
  const raw = (packageName?.replace(/^@[^/]+\//, "") || path.basename(path.resolve(root))).toLowerCase();
  const cleaned = raw.replace(/[^a-z0-9_-]+/g, "-").replace(/^[-_]+|[-_]+$/g, "");
  return /^[a-z0-9]/.test(cleaned) ? cleaned : `app-${cleaned || "target"}`.replace(/-+$/, "");
}

/** Relative to the profile's folder when they share more than the filesystem root, else absolute. */
function sourcePath(profileDir: string, root: string): string {
  const from = path.resolve(profileDir);
  const to = path.resolve(root);
  const relative = path.relative(from, to);
  if (relative === "") return ".";
  const shared = from
    .split(path.sep)
    .filter((part, index) => part !== "" && part === to.split(path.sep)[index]);
  return shared.length === 0 ? to : relative.split(path.sep).join("/");
}

function testCommand(repository: ReturnType<typeof readRepository>): { command: string } | undefined {
  const script = repository.packageJson?.scripts.test;
  if (script && !/no test specified/.test(script)) return { command: "npm test" };
  if (repository.pythonDependencies.has("pytest")) return { command: "python3 -m pytest" };
  return undefined;
}

function healthRank(path: string): number {
  const word = path.split("/").filter(Boolean).pop()?.replace(/^_/, "").toLowerCase() ?? "";
  const index = HEALTH_ORDER.indexOf(word);
  return (index === -1 ? HEALTH_ORDER.length : index) * 10 + path.split("/").length;
}

function handlerAt(operation: Operation): string {
  return operation.handler
    ? ` in ${operation.handler.file}${operation.handler.line ? `:${operation.handler.line}` : ""}`
    : "";
}

function allCode(repository: ReturnType<typeof readRepository>): string {
  return repository.codeFiles
    .filter((file) => file.endsWith(".py"))
    .map((file) => repository.read(file))
    .join("\n");
}
