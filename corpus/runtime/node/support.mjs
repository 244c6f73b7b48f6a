// Shared plumbing of the generated Node corpus servers: the app, the database, sign-in and sessions, JWTs,
// XML and a few sinks. Copied next to each generated app as lib/support.mjs. Deliberately small: the
// behaviour under measurement lives in the generated handlers, where a reader sees it.
import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Fastify from "fastify";

export const HERE = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** The corpus folder: file sinks never read outside it, whatever their own checks say. */
export const CORPUS_ROOT = path.resolve(HERE, "..", "..");

// ---------------------------------------------------------------- app

export function createApp() {
  const app = Fastify({ logger: false, bodyLimit: 1 << 20, ignoreTrailingSlash: true });
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body)));
  });
  app.addContentTypeParser(
    ["application/xml", "text/xml", "text/plain"],
    { parseAs: "string" },
    (_req, body, done) => done(null, body),
  );
  app.setErrorHandler((error, _request, reply) => {
    const status = typeof error.statusCode === "number" && error.statusCode < 500 ? error.statusCode : 500;
    reply.code(status).send({ error: status === 500 ? "internal error" : "bad request" });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: "not found" }));
  app.addHook("onSend", async (request, reply, payload) => {
    if (!request.routeOptions?.config?.plainHeaders) {
      reply.header("x-content-type-options", "nosniff");
      reply.header("x-frame-options", "DENY");
      reply.header(
        "content-security-policy",
        request.routeOptions?.config?.csp ?? "default-src 'self'; frame-ancestors 'none'",
      );
      reply.header("referrer-policy", "no-referrer");
    }
    return payload;
  });
  return app;
}

export async function listen(app) {
  const port = Number(process.env.PORT ?? 0);
  await app.listen({ host: "127.0.0.1", port });
  const address = app.server.address();
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
  const stop = () => app.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/**
 * Whether a JSON body keeps to its operation's documented top-level types (`{ name: "string" }`): the
 * body must be an object and each present field of the documented JSON type. Undefined when it does.
 */
export function bodyTypeProblem(body, rules) {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return "the body must be a JSON object";
  for (const [name, type] of Object.entries(rules)) {
    if (!(name in body)) continue;
    const value = body[name];
    const ok =
      type === "integer"
        ? Number.isInteger(value)
        : type === "array"
          ? Array.isArray(value)
          : type === "object"
            ? value !== null && typeof value === "object" && !Array.isArray(value)
            : typeof value === type;
    if (!ok) return `${name} must be ${type === "integer" ? "an integer" : `a ${type}`}`;
  }
  return undefined;
}

/** A redirect target as a header can carry it: controls, spaces and non-ASCII percent-encoded, nothing else changed. */
export function locationHeader(target) {
  return String(target).replace(/[^\x21-\x7e]/gu, (character) => encodeURIComponent(character));
}

export function html(reply, status, body) {
  return reply.code(status).type("text/html; charset=utf-8").send(body);
}

export function escapeHtml(value) {
  return String(value)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

export function cookies(request) {
  const jar = {};
  for (const part of String(request.headers.cookie ?? "").split(";")) {
    const index = part.indexOf("=");
    if (index > 0) jar[part.slice(0, index).trim()] = decodeURIComponent(part.slice(index + 1).trim());
  }
  return jar;
}

// ---------------------------------------------------------------- database (lib/database.mjs)

export { openDatabase, requiredEnv, schemaSql, seed, stableUid } from "./database.mjs";

// ---------------------------------------------------------------- passwords and tokens

export function hashPassword(password) {
  const salt = crypto.randomBytes(16).toString("hex");
  const key = crypto.scryptSync(password, salt, 32).toString("hex");
  return `scrypt$${salt}$${key}`;
}

export function checkPassword(password, stored) {
  const [, salt, key] = String(stored).split("$");
  if (!salt || !key) return false;
  const candidate = crypto.scryptSync(String(password), salt, 32);
  return crypto.timingSafeEqual(candidate, Buffer.from(key, "hex"));
}

/** A scrypt check against a fixed dummy hash, so an unknown account costs the same time as a wrong password. */
export const DUMMY_HASH = hashPassword(crypto.randomBytes(12).toString("hex"));

export const JWT_SECRET = crypto.randomBytes(32).toString("hex");

const b64url = (value) => Buffer.from(value).toString("base64url");

export function signJwt(claims, secret = JWT_SECRET, header = { alg: "HS256", typ: "JWT" }) {
  const head = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  if (header.alg === "none") return `${head}.`;
  const signature = crypto.createHmac("sha256", secret).update(head).digest("base64url");
  return `${head}.${signature}`;
}

/** Header and claims of a JWT, without checking anything. */
export function decodeJwt(token) {
  const [head, body, signature] = String(token).split(".");
  if (head === undefined || body === undefined || signature === undefined) return undefined;
  try {
    return {
      header: JSON.parse(Buffer.from(head, "base64url").toString("utf8")),
      claims: JSON.parse(Buffer.from(body, "base64url").toString("utf8")),
      signed: `${head}.${body}`,
      signature,
    };
  } catch {
    return undefined;
  }
}

export function hmacMatches(decoded, secret) {
  const expected = crypto.createHmac("sha256", secret).update(decoded.signed).digest();
  const given = Buffer.from(decoded.signature, "base64url");
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** The strict check: HS256 only, the server's secret, not expired. */
export function verifyJwt(token) {
  const decoded = decodeJwt(token);
  if (decoded?.header.alg !== "HS256" || !hmacMatches(decoded, JWT_SECRET)) return undefined;
  if (typeof decoded.claims.exp !== "number" || decoded.claims.exp * 1000 < Date.now()) return undefined;
  return decoded.claims;
}

export function bearerToken(request) {
  const header = String(request.headers.authorization ?? "");
  return header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : "";
}

// ---------------------------------------------------------------- who is asking

const sessions = new Map();

export function openSession(user) {
  const id = crypto.randomBytes(24).toString("hex");
  const csrf = crypto.randomBytes(16).toString("hex");
  sessions.set(id, { userId: user.id, csrf });
  return { id, csrf };
}

export function sessionOf(request) {
  return sessions.get(cookies(request).session);
}

/** The signed-in user of this request, by the server's sign-in style, or undefined. */
export async function currentUser(db, style, request, p) {
  if (style === "bearer") {
    const claims = verifyJwt(bearerToken(request));
    return claims ? db.get(`SELECT * FROM users WHERE id = ${p(1)}`, [claims.sub]) : undefined;
  }
  if (style === "cookie") {
    const session = sessionOf(request);
    return session ? db.get(`SELECT * FROM users WHERE id = ${p(1)}`, [session.userId]) : undefined;
  }
  const key = String(request.headers["x-api-key"] ?? "");
  return key ? db.get(`SELECT * FROM users WHERE api_key = ${p(1)}`, [key]) : undefined;
}

/** Failed sign-ins per account: five within a minute and the account answers 429 for thirty seconds. */
export function createLockout({ limit = 5, windowMs = 60_000, lockMs = 30_000 } = {}) {
  const failures = new Map();
  return {
    locked(key) {
      const entry = failures.get(key);
      return entry !== undefined && entry.lockedUntil > Date.now();
    },
    fail(key) {
      const now = Date.now();
      const entry = failures.get(key) ?? { times: [], lockedUntil: 0 };
      entry.times = entry.times.filter((time) => now - time < windowMs);
      entry.times.push(now);
      if (entry.times.length >= limit) {
        entry.lockedUntil = now + lockMs;
        entry.times = [];
      }
      failures.set(key, entry);
    },
    clear(key) {
      failures.delete(key);
    },
  };
}

// ---------------------------------------------------------------- sinks

/** Files a sink may read: inside the corpus tree only, whatever the handler's own check did. */
export function readInsideCorpus(file) {
  const resolved = path.resolve(file);
  if (!resolved.startsWith(CORPUS_ROOT + path.sep)) return undefined;
  try {
    return fs.readFileSync(resolved, "utf8");
  } catch {
    return undefined;
  }
}

/** Runs a command line through /bin/sh with a short timeout and an empty environment. */
export function shell(commandLine) {
  return new Promise((resolve) => {
    execFile(
      "/bin/sh",
      ["-c", commandLine],
      { timeout: 3000, env: { PATH: "/usr/bin:/bin" }, cwd: HERE },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs a program with an argument vector, no shell involved. */
export function run(program, args) {
  return new Promise((resolve) => {
    execFile(
      program,
      args,
      { timeout: 3000, env: { PATH: "/usr/bin:/bin" }, cwd: HERE },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Fetches a URL when it points at this machine's loopback; anything else is refused before any traffic. */
export async function fetchLoopback(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, status: 400, text: "not a URL" };
  }
  if (!["127.0.0.1", "localhost", "[::1]"].includes(parsed.hostname) || !/^https?:$/.test(parsed.protocol)) {
    return { ok: false, status: 502, text: "upstream unreachable" };
  }
  try {
    const response = await fetch(parsed, { signal: AbortSignal.timeout(2000), redirect: "manual" });
    return { ok: true, status: response.status, text: (await response.text()).slice(0, 4000) };
  } catch {
    return { ok: false, status: 502, text: "upstream unreachable" };
  }
}

/**
 * A small XML reader in the style of libxml2's options: `resolveExternal` (like NOENT) replaces external
 * entities with the file they name. Only `file:` entities inside the corpus tree are ever read.
 */
export function parseXml(text, { resolveExternal }) {
  const source = String(text);
  const entities = {};
  const doctype = source.match(/<!DOCTYPE\s+\w+\s*\[([\s\S]*?)\]\s*>/);
  if (doctype) {
    if (!resolveExternal) throw new Error("DOCTYPE is not allowed");
    for (const match of doctype[1].matchAll(/<!ENTITY\s+(\w+)\s+(SYSTEM\s+)?"([^"]*)"\s*>/g)) {
      const [, name, system, value] = match;
      if (!system) entities[name] = value;
      else if (value.startsWith("file://")) entities[name] = readInsideCorpus(fileURLToPath(value)) ?? "";
      else entities[name] = "";
    }
  }
  const body = source.replace(/<\?xml[^>]*\?>/, "").replace(/<!DOCTYPE[\s\S]*?\]\s*>/, "");
  const fields = {};
  for (const match of body.matchAll(/<(\w+)>([^<]*)<\/\1>/g)) {
    fields[match[1]] = match[2].replace(/&(\w+);/g, (whole, name) =>
      name in entities
        ? entities[name]
        : ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" }[name] ?? whole),
    );
  }
  if (Object.keys(fields).length === 0) throw new Error("no elements");
  return fields;
}

/**
 * A document filter in the style of MongoDB's: a field's condition is a value (equality) or an object of
 * operators ($eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $regex, $exists).
 */
export function matchesFilter(document, filter) {
  return Object.entries(filter).every(([field, condition]) => {
    const value = document[field];
    if (condition === null || typeof condition !== "object" || Array.isArray(condition))
      return value === condition;
    return Object.entries(condition).every(([operator, operand]) => {
      switch (operator) {
        case "$eq":
          return value === operand;
        case "$ne":
          return value !== operand;
        case "$gt":
          return value > operand;
        case "$gte":
          return value >= operand;
        case "$lt":
          return value < operand;
        case "$lte":
          return value <= operand;
        case "$in":
          return Array.isArray(operand) && operand.includes(value);
        case "$nin":
          return Array.isArray(operand) && !operand.includes(value);
        case "$regex":
          return new RegExp(String(operand)).test(String(value));
        case "$exists":
          return (value !== undefined) === Boolean(operand);
        default:
          return false;
      }
    });
  });
}

/**
 * A serialiser in the style of node-serialize: functions travel as `_$$ND_FUNC$$_<source>` and come back
 * to life on the way in, immediately invoked when the source ends in `()`.
 */
export function unserialize(text) {
  const value = JSON.parse(text);
  const revive = (node) => {
    if (typeof node === "string" && node.startsWith("_$$ND_FUNC$$_")) {
      // biome-ignore lint/security/noGlobalEval: the deliberately unsafe deserialiser under measurement
      return eval(`(${node.slice("_$$ND_FUNC$$_".length)})`);
    }
    if (node && typeof node === "object") for (const key of Object.keys(node)) node[key] = revive(node[key]);
    return node;
  };
  return revive(value);
}

/** A template engine that evaluates `{{ expression }}` against its context (like lodash/underscore templates). */
export function renderTemplate(template, context) {
  return String(template).replace(/\{\{([\s\S]+?)\}\}/g, (_whole, expression) => {
    const names = Object.keys(context);
    const evaluate = new Function(...names, `return (${expression});`);
    return String(evaluate(...names.map((name) => context[name])));
  });
}

/** The same engine, but only looking names up: `{{ name }}` takes a context value, escaped, nothing runs. */
export function renderSafeTemplate(template, context) {
  return String(template).replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_whole, name) =>
    escapeHtml(context[name] ?? ""),
  );
}
