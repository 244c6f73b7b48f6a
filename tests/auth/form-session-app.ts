import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Operation, Page } from "../../src/map/system-map.ts";

// An application signed into as Django does it: the sign-in and sign-up are HTML forms whose hidden
// `csrfmiddlewaretoken` must match the `csrftoken` cookie the form's page set (else 403), a refused form
// comes back with the form again (status 200), and a session cookie is the credential. Its JSON API wants
// the CSRF cookie echoed in `X-CSRFToken` on every signed-in unsafe request (else 403). `flawed` copies an
// `is_staff` field from the sign-up form into the account, copies it from `PATCH /api/me` too, and lets
// any account set any account's password; `sound` does none of that. `form-escalating` is the sound build
// but for its profile form (`POST /accounts/profile/`), which copies `is_staff` from what was posted.

export interface FormSessionApp {
  baseUrl: string;
  /** Current passwords, to assert no seeded account's password was ever changed. */
  passwords: Map<string, string>;
  document: Record<string, unknown>;
  operations: Operation[];
  pages: Page[];
  /** Unsafe requests refused for a missing or wrong CSRF token. */
  csrfRefusals: number;
  /** Updates of a seeded account by itself (its profile form, `PATCH /api/me`), which no probe may send. */
  seededSelfUpdates: number;
  /** The same updates by accounts registered through the sign-up form. */
  registeredSelfUpdates: number;
  emailOf(user: string): string | undefined;
  close(): Promise<void>;
}

export const FORM_SEEDED: Record<string, string> = { alice: "alice-password" };

export type FormSessionBuild = "flawed" | "sound" | "form-escalating";

export async function startFormSessionApp(build: FormSessionBuild): Promise<FormSessionApp> {
  const passwords = new Map(Object.entries(FORM_SEEDED));
  const staff = new Map<string, boolean>([["alice", false]]);
  const emails = new Map<string, string>([["alice", "alice@fixture.test"]]);
  const sessions = new Map<string, string>();
  const app = { csrfRefusals: 0, seededSelfUpdates: 0, registeredSelfUpdates: 0 };
  const server = http.createServer(async (request, response) => {
    const text = await readBody(request);
    const cookies = Object.fromEntries(
      (request.headers.cookie ?? "")
        .split(";")
        .map((pair) => pair.trim().split("="))
        .filter((pair) => pair.length === 2),
    ) as Record<string, string>;
    const csrf = cookies.csrftoken ?? randomBytes(16).toString("hex");
    const setCookies = cookies.csrftoken ? [] : [`csrftoken=${csrf}; Path=/; SameSite=Lax`];
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": type, "set-cookie": setCookies, ...headers });
      response.end(body);
    };
    const json = (status: number, value: unknown) => send(status, "application/json", JSON.stringify(value));
    const caller = sessions.get(cookies.sessionid ?? "");
    const path = new URL(request.url ?? "/", "http://fixture.invalid").pathname;
    const route = `${request.method} ${path}`;
    const form = Object.fromEntries(new URLSearchParams(text));
    if (caller && ["POST /accounts/profile/", "PATCH /api/me"].includes(route)) {
      if (caller in FORM_SEEDED) app.seededSelfUpdates += 1;
      else app.registeredSelfUpdates += 1;
    }
    const refuse = () => {
      app.csrfRefusals += 1;
      send(403, "text/html", "<h1>Forbidden (403)</h1><p>CSRF verification failed.</p>");
    };

    if (route === "GET /")
      return send(200, "text/html", "<h1>Notes</h1><a href='/accounts/login/'>Sign in</a>");
    if (route === "GET /accounts/login/") return send(200, "text/html", loginPage(csrf, ""));
    if (route === "POST /accounts/login/") {
      if (!cookies.csrftoken || form.csrfmiddlewaretoken !== cookies.csrftoken) return refuse();
      if (!form.username || passwords.get(form.username) !== form.password)
        return send(200, "text/html", loginPage(csrf, "Please enter a correct username and password."));
      const id = randomBytes(16).toString("hex");
      sessions.set(id, form.username);
      setCookies.push(`sessionid=${id}; Path=/; HttpOnly; SameSite=Lax`);
      return send(302, "text/html", "", { location: "/" });
    }
    if (route === "GET /accounts/signup/") return send(200, "text/html", signupPage(csrf, ""));
    if (route === "POST /accounts/signup/") {
      if (!cookies.csrftoken || form.csrfmiddlewaretoken !== cookies.csrftoken) return refuse();
      const { username, email, password1, password2 } = form;
      if (!username || !email || !password1 || password1 !== password2 || passwords.has(username))
        return send(200, "text/html", signupPage(csrf, "Please correct the errors below."));
      passwords.set(username, password1);
      emails.set(username, email);
      staff.set(username, build === "flawed" && /^(true|on|1)$/i.test(form.is_staff ?? ""));
      return send(302, "text/html", "", { location: "/accounts/login/" });
    }
    if (route === "GET /accounts/profile/" && caller)
      return send(200, "text/html", profilePage(csrf, emails.get(caller) ?? ""));
    if (route === "POST /accounts/profile/" && caller) {
      if (!cookies.csrftoken || form.csrfmiddlewaretoken !== cookies.csrftoken) return refuse();
      if (!form.email) return send(200, "text/html", profilePage(csrf, ""));
      emails.set(caller, form.email);
      if (build === "form-escalating" && form.is_staff !== undefined)
        staff.set(caller, /^(true|on|1)$/i.test(form.is_staff));
      return send(302, "text/html", "", { location: "/accounts/profile/" });
    }
    if (!path.startsWith("/api/")) return send(404, "text/html", "<h1>Not found</h1>");
    if (!caller) return json(403, { detail: "Authentication credentials were not provided." });
    if (request.method !== "GET" && request.headers["x-csrftoken"] !== cookies.csrftoken) {
      app.csrfRefusals += 1;
      return json(403, { detail: "CSRF Failed: CSRF token missing." });
    }
    const body = parseJson(text);
    if (route === "GET /api/me")
      return json(200, { username: caller, email: emails.get(caller), is_staff: staff.get(caller) });
    if (route === "PATCH /api/me") {
      if (typeof body.email === "string") emails.set(caller, body.email);
      if (build === "flawed" && typeof body.is_staff === "boolean") staff.set(caller, body.is_staff);
      return json(200, { username: caller, email: emails.get(caller) });
    }
    const change = path.match(/^\/api\/users\/([^/]+)\/password$/);
    if (request.method === "PUT" && change) {
      const target = change[1]!;
      if (!passwords.has(target)) return json(404, { detail: "Not found." });
      if (build !== "flawed" && target !== caller) return json(403, { detail: "Not yours." });
      if (typeof body.password !== "string") return json(400, { password: ["This field is required."] });
      passwords.set(target, body.password);
      return json(200, { detail: "changed" });
    }
    return json(404, { detail: "Not found." });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    passwords,
    document: DOCUMENT,
    operations: [
      formOperation("/accounts/login/"),
      formOperation("/accounts/signup/"),
      formOperation("/accounts/profile/"),
    ],
    pages: [
      formPage("/accounts/login/", ["username", "password"]),
      formPage("/accounts/signup/", ["username", "email", "password1", "password2"]),
      formPage("/accounts/profile/", ["email"]),
    ],
    emailOf: (user: string) => emails.get(user),
    get seededSelfUpdates() {
      return app.seededSelfUpdates;
    },
    get registeredSelfUpdates() {
      return app.registeredSelfUpdates;
    },
    get csrfRefusals() {
      return app.csrfRefusals;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function loginPage(csrf: string, error: string): string {
  return `<h1>Sign in</h1>${error ? `<p class="errornote">${error}</p>` : ""}<form method="post" action="/accounts/login/"><input type="hidden" name="csrfmiddlewaretoken" value="${csrf}"><input type="text" name="username"><input type="password" name="password"><button type="submit">Sign in</button></form>`;
}

function profilePage(csrf: string, email: string): string {
  return `<h1>Profile</h1><form method="post" action="/accounts/profile/"><input type="hidden" name="csrfmiddlewaretoken" value="${csrf}"><input type="email" name="email" value="${email}"><button type="submit">Save</button></form>`;
}

function signupPage(csrf: string, error: string): string {
  return `<h1>Sign up</h1>${error ? `<p class="errornote">${error}</p>` : ""}<form method="post" action="/accounts/signup/"><input type="hidden" name="csrfmiddlewaretoken" value="${csrf}"><input type="text" name="username"><input type="email" name="email"><input type="password" name="password1"><input type="password" name="password2"><button type="submit">Sign up</button></form>`;
}

function formOperation(path: string): Operation {
  return {
    method: "POST",
    path,
    security: "unknown",
    parameters: [],
    responses: {},
    seen_in: ["form"],
    documented: false,
    form: { page: path, enctype: "application/x-www-form-urlencoded", csrf_field: "csrfmiddlewaretoken" },
  };
}

function formPage(path: string, fields: string[]): Page {
  const type = (name: string) =>
    name.startsWith("password") ? "password" : name === "email" ? "email" : "text";
  return {
    path,
    status: 200,
    links: [],
    html: true,
    forms: [
      {
        action: path,
        method: "POST",
        fields: ["csrfmiddlewaretoken", ...fields],
        inputs: [
          { name: "csrfmiddlewaretoken", type: "hidden", required: false },
          ...fields.map((name) => ({ name, type: type(name), required: true })),
        ],
      },
    ],
  };
}

const jsonBody = (properties: Record<string, unknown>) => ({
  required: true,
  content: {
    "application/json": { schema: { type: "object", properties, required: Object.keys(properties) } },
  },
});
const ok = { "200": { description: "ok" } };
const session = [{ sessionAuth: [] }];

const DOCUMENT: Record<string, unknown> = {
  openapi: "3.0.3",
  info: { title: "notes", version: "1" },
  components: { securitySchemes: { sessionAuth: { type: "apiKey", in: "cookie", name: "sessionid" } } },
  paths: {
    "/api/me": {
      get: { operationId: "me", security: session, responses: ok },
      patch: {
        operationId: "update_me",
        security: session,
        requestBody: jsonBody({ email: { type: "string" } }),
        responses: ok,
      },
    },
    "/api/users/{username}/password": {
      put: {
        operationId: "set_password",
        security: session,
        parameters: [{ name: "username", in: "path", required: true, schema: { type: "string" } }],
        requestBody: jsonBody({ password: { type: "string" } }),
        responses: ok,
      },
    },
  },
};

function parseJson(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text || "{}");
    return parsed && typeof parsed === "object" ? parsed : {};
  } catch {
    return {};
  }
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => resolve(text));
  });
}
