import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { guarded, htmlAnswer, json, STR } from "../schemas.ts";

// Misconfiguration at fixed, well-known places: a debug page left on (CWE-489/215), files a static folder
// should never serve (an environment file, VCS metadata, backups; CWE-538/527/530), and a folder index
// (CWE-548). Their look-alikes are the well-known files a site serves on purpose and status pages.

export interface DebugKnobs {
  /** Vulnerable: which debug page answers. Safe: a status page, or diagnostics behind the admin role. */
  page?: "vars" | "config";
  guard?: "status-only" | "admin-only";
}

export interface ExposedFileKnobs {
  file: "env" | "git-config" | "backup" | "tilde" | "sql-dump" | "robots" | "security-txt" | "static-js";
}

export interface ListingKnobs {
  folder: "uploads" | "exports" | "downloads";
}

const SECRETISH = /\[core\]|(secret|password|api_key|token)[a-z_]*'?\s*[=:,]|INSERT INTO|"secret_key"/i;

export function buildDebugExposure(row: Row<DebugKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { page = "vars", guard = "status-only" } = row.knobs;
  const path = vulnerable
    ? page === "vars"
      ? "/debug/vars"
      : "/_debug/config"
    : guard === "status-only"
      ? "/status"
      : "/debug/diagnostics";
  const adminOnly = !vulnerable && guard === "admin-only";
  const details = {
    node: `{ debug: true, node: process.version, pid: process.pid, config: { secret_key: DEBUG_SIGNING_KEY, database: ${JSON.stringify(ctx.server.database)}, smtp_password: "mailer-" + DEBUG_SIGNING_KEY.slice(0, 8) }, memory: process.memoryUsage() }`,
    python: `{"debug": True, "python": sys.version, "pid": os.getpid(), "config": {"secret_key": DEBUG_SIGNING_KEY, "database": ${JSON.stringify(ctx.server.database)}, "smtp_password": "mailer-" + DEBUG_SIGNING_KEY[:8]}}`,
  };
  const status = {
    node: '{ status: "ok", version: "1.0.0" }',
    python: '{"status": "ok", "version": "1.0.0"}',
  };
  const body = vulnerable || adminOnly ? details : status;
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: vulnerable || adminOnly ? "Diagnostics" : "Service status",
    access: adminOnly ? "admin" : "public",
    responses: { "200": json("diagnostics", { type: "object" }), ...guarded(adminOnly ? "admin" : "public") },
    node: nodeRoute(
      "GET",
      path,
      `${adminOnly ? "const user = await requireAdmin(request, reply);\nif (!user) return reply;\n" : ""}return ${body.node};`,
    ),
    python: pyRoute("GET", path, `${adminOnly ? "require_admin()\n" : ""}return jsonify(${body.python})`),
  };
  return {
    endpoint,
    top: {
      node: 'const DEBUG_SIGNING_KEY = crypto.randomBytes(16).toString("hex");',
      python: "DEBUG_SIGNING_KEY = os.urandom(16).hex()",
    },
    title: vulnerable
      ? `A debug page (${path}) shows configuration secrets to anyone`
      : `${path} reports on the service`,
    ...(vulnerable
      ? {}
      : {
          why: adminOnly
            ? "diagnostics answer administrators only"
            : "it reports status and version, nothing else",
        }),
    oracle: async (client) => {
      const reply = await client.ask({ path });
      return verdict(reply.status === 200 && SECRETISH.test(reply.text), brief(reply));
    },
  };
}

const FILES: Record<
  ExposedFileKnobs["file"],
  { path: string; stored: string; content: string; type: string }
> = {
  env: {
    path: "/.env",
    stored: "public/env",
    content:
      "APP_ENV=production\nDATABASE_URL=postgresql://app:Str0ng-Db-Pass@db.internal:5432/app\nSESSION_SECRET=8f2b1c9d7e6a5f4b3c2d1e0f\nSTRIPE_API_KEY=sk_live_51Hc0rpusFakeKey0000\n",
    type: "text/plain; charset=utf-8",
  },
  "git-config": {
    path: "/.git/config",
    stored: "public/git/config",
    content:
      '[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote "origin"]\n\turl = https://deploy:ghp_c0rpusFakeDeployToken000000000000@git.corpus.test/team/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    type: "text/plain; charset=utf-8",
  },
  backup: {
    path: "/config.php.bak",
    stored: "public/config.php.bak",
    content:
      "<?php\n$db_user = 'app';\n$db_password = 'Str0ng-Db-Pass';\ndefine('API_KEY', 'ak_live_c0rpus_fake');\n",
    type: "application/octet-stream",
  },
  tilde: {
    path: "/settings.py~",
    stored: "public/settings.py~",
    content:
      "DEBUG = False\nSECRET_KEY = 'django-insecure-c0rpus-fake-key'\nEMAIL_HOST_PASSWORD = 'mailer-pass'\n",
    type: "application/octet-stream",
  },
  "sql-dump": {
    path: "/backup.sql",
    stored: "public/backup.sql",
    content:
      "-- dump\nCREATE TABLE users (id integer, email text, password_hash text);\nINSERT INTO users VALUES (1, 'alice@corpus.test', '$2b$12$c0rpusfakehashc0rpusfakehashc0rpusfakehashc0rpusfak');\n",
    type: "application/sql",
  },
  robots: {
    path: "/robots.txt",
    stored: "public/robots.txt",
    content: "User-agent: *\nDisallow: /api/\n",
    type: "text/plain; charset=utf-8",
  },
  "security-txt": {
    path: "/.well-known/security.txt",
    stored: "public/well-known/security.txt",
    content:
      "Contact: mailto:security@corpus.test\nExpires: 2027-12-31T23:00:00.000Z\nPreferred-Languages: en\n",
    type: "text/plain; charset=utf-8",
  },
  "static-js": {
    path: "/static/site.js",
    stored: "public/static/site.js",
    content: 'document.documentElement.dataset.ready = "true";\n',
    type: "text/javascript; charset=utf-8",
  },
};

const SAFE_FILES = new Set(["robots", "security-txt", "static-js"]);

export function buildExposedFile(row: Row<ExposedFileKnobs>, _ctx: BuildContext): Built {
  const file = FILES[row.knobs.file];
  const vulnerable = row.label === "vulnerable";
  if (vulnerable === SAFE_FILES.has(row.knobs.file)) {
    throw new Error(
      `${row.id}: ${row.knobs.file} cannot be ${row.label} (served on purpose: ${[...SAFE_FILES].join(", ")})`,
    );
  }
  const stored = JSON.stringify(file.stored.split("/"));
  const endpoint: Endpoint = {
    method: "GET",
    path: file.path,
    summary: `Static file ${file.path}`,
    access: "public",
    responses: { "200": { description: "the file", contentType: file.type.split(";")[0]!, schema: STR } },
    node: nodeRoute(
      "GET",
      file.path,
      `return reply.type(${JSON.stringify(file.type)}).send(readInsideCorpus(path.join(HERE, ...${stored})) ?? "");`,
    ),
    python: pyRoute(
      "GET",
      file.path,
      `return read_inside_corpus(os.path.join(HERE, *${stored})) or "", 200, {"Content-Type": ${JSON.stringify(file.type)}}`,
    ),
  };
  return {
    endpoint,
    files: { [file.stored]: file.content },
    ...(row.knobs.file === "env" || row.knobs.file === "backup" || row.knobs.file === "tilde"
      ? { ledgerClass: "secret-exposure" }
      : {}),
    title: vulnerable ? `${file.path} is served to anyone` : `${file.path} is served`,
    ...(vulnerable ? {} : { why: "a file sites publish on purpose; it holds nothing private" }),
    oracle: async (client) => {
      const reply = await client.ask({ path: file.path });
      return verdict(reply.status === 200 && SECRETISH.test(reply.text), brief(reply));
    },
  };
}

export function buildDirectoryListing(row: Row<ListingKnobs>, _ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { folder } = row.knobs;
  const path = `/${folder}/`;
  const files = {
    [`public/${folder}/q3-summary.csv`]: "quarter,total\nq3,1200\n",
    [`public/${folder}/staff-list.csv`]: "name,email\nAlice,alice@corpus.test\n",
  };
  const node = vulnerable
    ? `const names = fs.readdirSync(path.join(HERE, "public", ${JSON.stringify(folder)})).sort();
return html(reply, 200, "<!doctype html><html><head><title>Index of ${path}</title></head><body><h1>Index of ${path}</h1><ul>" + names.map((name) => "<li><a href=\\"" + name + "\\">" + name + "</a></li>").join("") + "</ul></body></html>");`
    : `return html(reply, 200, "<!doctype html><html lang=\\"en\\"><head><meta charset=\\"utf-8\\"><title>Downloads</title></head><body><main><h1>Downloads</h1><p><a href=\\"/static/site.js\\">Site script</a></p></main></body></html>");`;
  const python = vulnerable
    ? `names = sorted(os.listdir(os.path.join(HERE, "public", ${JSON.stringify(folder)})))
items = "".join("<li><a href=\\"" + name + "\\">" + name + "</a></li>" for name in names)
return html_page(200, "<!doctype html><html><head><title>Index of ${path}</title></head><body><h1>Index of ${path}</h1><ul>" + items + "</ul></body></html>")`
    : `return html_page(200, "<!doctype html><html lang=\\"en\\"><head><meta charset=\\"utf-8\\"><title>Downloads</title></head><body><main><h1>Downloads</h1><p><a href=\\"/static/site.js\\">Site script</a></p></main></body></html>")`;
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `The /${folder}/ folder`,
    access: "public",
    responses: { "200": htmlAnswer("the folder page") },
    node: nodeRoute("GET", path, node),
    python: pyRoute("GET", path, python),
  };
  return {
    endpoint,
    ...(vulnerable ? { files } : {}),
    title: vulnerable ? `/${folder}/ lists its files` : `/${folder}/ is a page of links`,
    ...(vulnerable ? {} : { why: "a hand-written page of chosen public links, not a folder index" }),
    oracle: async (client) => {
      const reply = await client.ask({ path });
      return verdict(reply.status === 200 && /Index of/.test(reply.text), brief(reply));
    },
  };
}
