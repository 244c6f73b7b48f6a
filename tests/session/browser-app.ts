import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// Three small applications in one server, each signing in the way real ones do:
//   - a server-rendered app (/login, /session, /dashboard…): CSRF-protected form sign-in, a session cookie
//     that rotates on every page, expired sessions that redirect to /login or show the form in place, a
//     logout link, form operations (urlencoded and multipart) with per-session CSRF tokens, a sign-up form;
//   - a JSON API (/api/v1/…) whose token is nested ({ data: { session: { jwt } } }), with a JSON sign-up;
//   - a cookie-authenticated JSON API (/spa/…) that wants its XSRF-TOKEN cookie echoed in X-XSRF-TOKEN.

export interface BrowserApp {
  baseUrl: string;
  /** Sign-ins per username, across the three apps. */
  logins: Map<string, number>;
  /** Registered users (username → password), seeded with alice and bob. */
  accounts: Map<string, { password: string; email: string }>;
  /** Requests seen, as `METHOD /path`. */
  seen: string[];
  notes: Array<{ user: string; title: string; body: string }>;
  uploads: Array<{ user: string; filename: string; content: string }>;
  /** Ends every server-side session and token. */
  expireAll(): void;
  close(): Promise<void>;
}

interface Session {
  user?: string;
  csrf: string;
}

const page = (title: string, body: string, csrf?: string) =>
  `<!doctype html><html><head><title>${title}</title>${csrf ? `<meta name="csrf-param" content="authenticity_token"><meta name="csrf-token" content="${csrf}">` : ""}</head><body>${body}</body></html>`;

const loginForm = (csrf: string, error?: string) =>
  `${error ? `<div class="alert alert-danger">${error}</div>` : ""}
  <form action="/session" method="post" class="login">
    <input type="hidden" name="authenticity_token" value="${csrf}">
    <label>Login <input type="text" name="user[login]" required></label>
    <label>Password <input type="password" name="user[password]" required></label>
    <label><input type="checkbox" name="remember_me" value="1"> Remember me</label>
    <button type="submit" name="commit" value="Sign in">Sign in</button>
  </form>`;

function jwtFor(user: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const exp = Math.floor(Date.now() / 1000) + 3600;
  return `${encode({ alg: "HS256", typ: "JWT" })}.${encode({ sub: user, exp, jti: randomBytes(6).toString("hex") })}.${randomBytes(16).toString("base64url")}`;
}

function cookiesOf(request: http.IncomingMessage): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const index = part.indexOf("=");
    if (index > 0) cookies[part.slice(0, index).trim()] = part.slice(index + 1).trim();
  }
  return cookies;
}

export async function startBrowserApp(): Promise<BrowserApp> {
  const sessions = new Map<string, Session>();
  const tokens = new Map<string, string>();
  const spaSessions = new Map<string, string>();
  const logins = new Map<string, number>();
  const accounts = new Map<string, { password: string; email: string }>([
    ["alice", { password: "alice-password", email: "alice@example.com" }],
    ["bob", { password: "bob-password", email: "bob@example.com" }],
  ]);
  const seen: string[] = [];
  const notes: BrowserApp["notes"] = [];
  const uploads: BrowserApp["uploads"] = [];
  const countLogin = (user: string) => logins.set(user, (logins.get(user) ?? 0) + 1);
  const newSession = (user?: string): [string, Session] => {
    const id = randomBytes(12).toString("hex");
    const session = { user, csrf: randomBytes(16).toString("base64url") };
    sessions.set(id, session);
    return [id, session];
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const raw = Buffer.concat(chunks).toString();
      const url = new URL(request.url ?? "/", "http://localhost");
      const path = url.pathname;
      const method = request.method ?? "GET";
      seen.push(`${method} ${path}`);
      const cookies = cookiesOf(request);
      const contentType = request.headers["content-type"] ?? "";
      const form = contentType.includes("urlencoded") ? new URLSearchParams(raw) : new URLSearchParams();
      const json = contentType.includes("json") ? (JSON.parse(raw || "{}") as Record<string, string>) : {};
      const html = (status: number, body: string, headers: Record<string, string | string[]> = {}) => {
        response.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
        response.end(body);
      };
      const redirect = (location: string, headers: Record<string, string | string[]> = {}, status = 302) => {
        response.writeHead(status, { location, ...headers });
        response.end();
      };
      const sendJson = (status: number, body: unknown, headers: Record<string, string | string[]> = {}) => {
        response.writeHead(status, { "content-type": "application/json", ...headers });
        response.end(JSON.stringify(body));
      };
      const sessionId = cookies._app_session;
      const session = sessionId ? sessions.get(sessionId) : undefined;
      const signedIn = session?.user !== undefined ? session : undefined;
      const sessionCookie = (id: string) => `_app_session=${id}; Path=/; HttpOnly; SameSite=Lax`;
      /** Every signed-in page rotates the session id; the old one stops working. */
      const rotate = (): string => {
        const [id] = newSession(signedIn!.user);
        sessions.get(id)!.csrf = signedIn!.csrf;
        sessions.delete(sessionId!);
        return sessionCookie(id);
      };

      // ---- the server-rendered application ----
      if (method === "GET" && path === "/login") {
        const [id, fresh] = session ? [sessionId!, session] : newSession();
        return html(200, page("Sign in", loginForm(fresh.csrf, url.searchParams.get("error") ?? undefined)), {
          "set-cookie": sessionCookie(id),
        });
      }
      if (method === "POST" && path === "/session") {
        if (!session || form.get("authenticity_token") !== session.csrf) {
          return html(422, page("Error", "<p>Invalid authenticity token</p>"));
        }
        const login = form.get("user[login]") ?? "";
        if (
          form.get("commit") !== "Sign in" ||
          accounts.get(login)?.password !== form.get("user[password]")
        ) {
          return redirect("/login?error=Invalid+login+or+password");
        }
        countLogin(login);
        sessions.delete(sessionId!);
        const [id] = newSession(login);
        return redirect("/dashboard", { "set-cookie": [sessionCookie(id), "flash=welcome; Path=/"] });
      }
      if (method === "GET" && path === "/logout") {
        if (sessionId) sessions.delete(sessionId);
        return redirect("/login", { "set-cookie": "_app_session=; Path=/; Max-Age=0" });
      }
      if (method === "GET" && path === "/dashboard") {
        if (!signedIn) return redirect("/login");
        return html(
          200,
          page("Dashboard", `<h1>Hello ${signedIn.user}</h1><a href="/logout">Sign out</a>`, signedIn.csrf),
          { "set-cookie": rotate() },
        );
      }
      if (method === "GET" && path === "/profile") {
        // An expired session gets the sign-in form in place of the page, with a 200.
        if (!signedIn) {
          const [id, fresh] = newSession();
          return html(200, page("Sign in", loginForm(fresh.csrf, "Please sign in")), {
            "set-cookie": sessionCookie(id),
          });
        }
        return html(200, page("Profile", `<p>profile of ${signedIn.user}</p>`, signedIn.csrf));
      }
      if (method === "GET" && (path === "/notes/new" || path === "/upload")) {
        if (!signedIn) return redirect("/login");
        const body =
          path === "/notes/new"
            ? `<form action="/notes" method="post"><input type="hidden" name="authenticity_token" value="${signedIn.csrf}"><input type="hidden" name="note[kind]" value="plain"><input name="note[title]"><textarea name="note[body]">draft</textarea><select name="note[color]"><option value="red">Red</option><option value="blue" selected>Blue</option></select><button name="commit" value="Save">Save</button></form>`
            : `<form action="/upload" method="post" enctype="multipart/form-data"><input type="hidden" name="authenticity_token" value="${signedIn.csrf}"><input type="file" name="attachment"><input name="caption"></form>`;
        return html(200, page("Form", body, signedIn.csrf), { "set-cookie": rotate() });
      }
      if (method === "POST" && path === "/notes") {
        if (!signedIn) return redirect("/login");
        if (form.get("authenticity_token") !== signedIn.csrf) return html(422, page("Error", "bad token"));
        notes.push({
          user: signedIn.user!,
          title: `${form.get("note[title]")}|${form.get("note[kind]")}|${form.get("note[color]")}`,
          body: form.get("note[body]") ?? "",
        });
        return redirect(`/notes/${notes.length}`, {}, 303);
      }
      if (method === "GET" && /^\/notes\/\d+$/.test(path)) {
        if (!signedIn) return redirect("/login");
        return html(200, page("Note", `<p>${notes[Number(path.split("/")[2]) - 1]?.title ?? "?"}</p>`));
      }
      if (method === "POST" && path === "/upload") {
        if (!signedIn) return redirect("/login");
        const boundary = /boundary=([^;]+)/.exec(contentType)?.[1];
        if (!boundary) return html(400, "not multipart");
        const token = /name="authenticity_token"\r\n\r\n([^\r]*)\r\n/.exec(raw)?.[1];
        if (token !== signedIn.csrf) return html(422, "bad token");
        const file = /name="attachment"; filename="([^"]+)"\r\nContent-Type: [^\r]+\r\n\r\n([^\r]*)\r\n/.exec(
          raw,
        );
        if (!file || !raw.trimEnd().endsWith(`--${boundary}--`)) return html(400, "bad multipart");
        uploads.push({ user: signedIn.user!, filename: file[1]!, content: file[2]! });
        return redirect("/dashboard", {}, 303);
      }
      if (method === "POST" && path === "/api/notes") {
        // A script-driven endpoint of the same app: the meta token in X-CSRF-Token.
        if (!signedIn) return sendJson(401, { error: "sign in" });
        if (request.headers["x-csrf-token"] !== signedIn.csrf) return sendJson(403, { error: "csrf" });
        return sendJson(201, { ok: true, user: signedIn.user });
      }
      if (method === "GET" && path === "/register") {
        const [id, fresh] = session ? [sessionId!, session] : newSession();
        return html(
          200,
          page(
            "Register",
            `<form action="/register" method="post"><input type="hidden" name="_token" value="${fresh.csrf}"><input name="username" required><input type="email" name="email" required><input type="password" name="password" required><input type="password" name="password_confirmation" required><input type="checkbox" name="terms" value="accepted" required></form>`,
          ),
          { "set-cookie": sessionCookie(id) },
        );
      }
      if (method === "POST" && path === "/register") {
        if (!session || form.get("_token") !== session.csrf) return html(419, "page expired");
        const username = form.get("username") ?? "";
        const password = form.get("password") ?? "";
        const valid =
          /^[a-z0-9]{3,20}$/.test(username) &&
          password.length >= 12 &&
          password === form.get("password_confirmation") &&
          form.get("terms") === "accepted" &&
          !accounts.has(username);
        if (!valid)
          return html(
            200,
            page(
              "Register",
              `<p class="error">Invalid registration</p><form action="/register" method="post"><input type="password" name="password"></form>`,
            ),
          );
        accounts.set(username, { password, email: form.get("email") ?? "" });
        return redirect("/login");
      }

      // ---- the JSON API with a nested token ----
      if (method === "POST" && path === "/api/v1/auth") {
        const account = accounts.get(json.login ?? "");
        if (!account || account.password !== json.secret) {
          return sendJson(200, { success: false, error: "invalid credentials" });
        }
        countLogin(json.login!);
        const jwt = jwtFor(json.login!);
        tokens.set(jwt, json.login!);
        return sendJson(200, {
          data: { refresh_token: randomBytes(20).toString("hex"), session: { jwt, token_type: "Bearer" } },
        });
      }
      if (method === "POST" && path === "/api/v1/users") {
        if (!json.username || !json.email || (json.password ?? "").length < 12) {
          return sendJson(422, { errors: ["username, email and a 12-character password are required"] });
        }
        accounts.set(json.username, { password: json.password!, email: json.email });
        return sendJson(201, { id: accounts.size, username: json.username });
      }
      if (path === "/api/v1/me") {
        const user = tokens.get((request.headers.authorization ?? "").replace(/^Bearer /, ""));
        return user ? sendJson(200, { user }) : sendJson(401, { error: "token" });
      }
      if (method === "POST" && path === "/api/v1/logout") {
        tokens.delete((request.headers.authorization ?? "").replace(/^Bearer /, ""));
        return sendJson(204, {});
      }

      // ---- the cookie-authenticated JSON API ----
      const xsrfOk = () =>
        cookies["XSRF-TOKEN"] &&
        request.headers["x-xsrf-token"] === decodeURIComponent(cookies["XSRF-TOKEN"]);
      const xsrfCookie = () =>
        `XSRF-TOKEN=${encodeURIComponent(`${randomBytes(9).toString("base64")}=`)}; Path=/`;
      if (method === "GET" && path === "/spa/csrf") return sendJson(204, {}, { "set-cookie": xsrfCookie() });
      if (method === "POST" && path === "/spa/login") {
        if (!xsrfOk())
          return sendJson(419, { message: "CSRF token mismatch." }, { "set-cookie": xsrfCookie() });
        const account = accounts.get(json.email?.split("@")[0] ?? "");
        if (!account || account.password !== json.password)
          return sendJson(422, { message: "bad credentials" });
        const sid = randomBytes(12).toString("hex");
        spaSessions.set(sid, json.email!.split("@")[0]!);
        countLogin(json.email!.split("@")[0]!);
        return sendJson(
          200,
          { two_factor: false },
          { "set-cookie": [`spa_session=${sid}; Path=/; HttpOnly`, xsrfCookie()] },
        );
      }
      if (path === "/spa/me" || path === "/spa/items") {
        const user = spaSessions.get(cookies.spa_session ?? "");
        if (!user) return sendJson(401, { message: "Unauthenticated." });
        if (method === "POST" && !xsrfOk()) return sendJson(419, { message: "CSRF token mismatch." });
        return sendJson(method === "POST" ? 201 : 200, { user });
      }
      return html(404, page("Not found", "<p>no such page</p>"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    logins,
    accounts,
    seen,
    notes,
    uploads,
    expireAll: () => {
      sessions.clear();
      tokens.clear();
      spaSessions.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
