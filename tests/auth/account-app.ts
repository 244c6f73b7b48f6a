import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A bearer-token JSON API with accounts and notes addressed by their title, in three builds. `flawed` lets any
// signed-in user set any account's password, copies any extra sign-up field into the account (an admin
// flag) and shows any note to any signed-in user; `sound` lets an account change only its own password,
// keeps only the documented sign-up fields and shows a note to its owner only. In all, a public list names
// every note and its owner (a directory, no contents). `escalating` is the sound build but for its profile
// update (`PATCH /me`), which copies the admin flag from the body; `promoting` is the sound build whose
// profile update copies the role its document lists among the fields (as FastAPI documents a model).

export interface AccountApp {
  baseUrl: string;
  /** Current passwords, to assert no seeded account's password was ever changed. */
  passwords: Map<string, string>;
  document: Record<string, unknown>;
  close(): Promise<void>;
}

export const SEEDED: Record<string, string> = { alice: "alice-password", bob: "bob-password" };

interface Account {
  email: string;
  admin: boolean;
  role: string;
}

export type AccountBuild = "flawed" | "sound" | "escalating" | "promoting";

export async function startAccountApp(build: AccountBuild): Promise<AccountApp> {
  const passwords = new Map(Object.entries(SEEDED));
  const accounts = new Map<string, Account>([
    ["alice", { email: "alice@fixture.test", admin: false, role: "member" }],
    ["bob", { email: "bob@fixture.test", admin: false, role: "member" }],
  ]);
  const tokens = new Map<string, string>();
  const notes = new Map<string, { owner: string; body: string }>();
  const server = http.createServer(async (request, response) => {
    const body = await readJson(request);
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const url = new URL(request.url ?? "/", "http://fixture.invalid");
    const path = decodeURIComponent(url.pathname);
    const caller = tokens.get((request.headers.authorization ?? "").replace(/^Bearer\s+/i, ""));
    const route = `${request.method} ${path}`;
    if (route === "GET /openapi.json") return json(200, DOCUMENT);
    if (route === "POST /users/signup") {
      const { username, email, password } = body;
      if (typeof username !== "string" || typeof password !== "string" || typeof email !== "string")
        return json(400, { error: "username, email and password are required" });
      if (accounts.has(username)) return json(409, { error: "taken" });
      accounts.set(username, { email, admin: build === "flawed" && body.admin === true, role: "member" });
      passwords.set(username, password);
      return json(201, { message: "registered" });
    }
    if (route === "POST /users/login") {
      const { username, password } = body;
      if (typeof username === "string" && passwords.get(username) === password) {
        const token = randomBytes(16).toString("hex");
        tokens.set(token, username);
        return json(200, { auth_token: token });
      }
      return json(200, { message: "invalid credentials" });
    }
    if (route === "GET /notes") {
      return json(200, {
        notes: [...notes].map(([title, note]) => ({ note_title: title, user: note.owner })),
      });
    }
    if (!caller) return json(401, { error: "sign in first" });
    if (route === "GET /me") {
      const account = accounts.get(caller)!;
      const { email, admin, role } = account;
      return json(200, { data: { username: caller, email, admin, role } });
    }
    if (route === "PATCH /me") {
      const account = accounts.get(caller)!;
      if (typeof body.email === "string") account.email = body.email;
      if (build === "escalating" && typeof body.admin === "boolean") account.admin = body.admin;
      if (build === "promoting" && typeof body.role === "string") account.role = body.role;
      return json(200, { data: { username: caller, email: account.email } });
    }
    const change = path.match(/^\/users\/([^/]+)\/password$/);
    if (request.method === "PUT" && change) {
      const target = change[1]!;
      if (!accounts.has(target)) return json(404, { error: "no such user" });
      if (build !== "flawed" && target !== caller) return json(403, { error: "not yours" });
      if (typeof body.password !== "string") return json(400, { error: "password is required" });
      passwords.set(target, body.password);
      return json(204, {});
    }
    if (route === "POST /notes") {
      const { note_title: title, body: text } = body;
      if (typeof title !== "string" || typeof text !== "string") return json(400, { error: "bad note" });
      notes.set(title, { owner: caller, body: text });
      return json(200, { message: "note added" });
    }
    const item = path.match(/^\/notes\/([^/]+)$/);
    if (request.method === "GET" && item) {
      const note = notes.get(item[1]!);
      if (!note || (build !== "flawed" && note.owner !== caller)) return json(404, { error: "no such note" });
      return json(200, { note_title: item[1], owner: note.owner, body: note.body });
    }
    return json(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    passwords,
    document: DOCUMENT,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const bearer = [{ bearerAuth: [] }];
const jsonBody = (properties: Record<string, unknown>) => ({
  required: true,
  content: {
    "application/json": {
      schema: { type: "object", properties, required: Object.keys(properties) },
    },
  },
});
const ok = { "200": { description: "ok" } };

const DOCUMENT: Record<string, unknown> = {
  openapi: "3.0.3",
  info: { title: "accounts", version: "1" },
  components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
  paths: {
    "/users/signup": {
      post: {
        operationId: "register_user",
        requestBody: jsonBody({
          username: { type: "string" },
          email: { type: "string" },
          password: { type: "string" },
        }),
        responses: { "201": { description: "registered" } },
      },
    },
    "/users/login": {
      post: {
        operationId: "login_user",
        requestBody: jsonBody({ username: { type: "string" }, password: { type: "string" } }),
        responses: ok,
      },
    },
    "/me": {
      get: { operationId: "me", security: bearer, responses: ok },
      patch: {
        operationId: "update_me",
        security: bearer,
        requestBody: jsonBody({ email: { type: "string" }, role: { title: "Role", type: "string" } }),
        responses: ok,
      },
    },
    "/users/{username}/password": {
      put: {
        operationId: "update_password",
        security: bearer,
        parameters: [{ name: "username", in: "path", required: true, schema: { type: "string" } }],
        requestBody: jsonBody({ password: { type: "string" } }),
        responses: { "204": { description: "changed" } },
      },
    },
    "/notes": {
      get: { operationId: "list_notes", responses: ok },
      post: {
        operationId: "add_note",
        security: bearer,
        requestBody: jsonBody({
          note_title: { type: "string" },
          body: { type: "string", example: "a private note" },
        }),
        responses: ok,
      },
    },
    "/notes/{note_title}": {
      get: {
        operationId: "get_note",
        security: bearer,
        parameters: [{ name: "note_title", in: "path", required: true, schema: { type: "string" } }],
        responses: ok,
      },
    },
  },
};

function readJson(request: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      try {
        const parsed = JSON.parse(text || "{}");
        resolve(parsed && typeof parsed === "object" ? parsed : {});
      } catch {
        resolve({});
      }
    });
  });
}
