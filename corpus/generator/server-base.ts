import type { CorpusServer } from "../model/servers.ts";
import { nodeRoute, nodeUserRoute, pyRoute } from "./code.ts";
import type { Endpoint } from "./endpoint.ts";
import { err, htmlAnswer, INT, json, obj, STR } from "./schemas.ts";
import type { SupportOperation } from "./server-model.ts";

// The operations every corpus server has whatever its variants: health, who-am-I, and sign-in in the
// server's style. They are correct code (a locked-out, uniform sign-in), listed as not_defects.

export const RESET_PATH = "/__corpus/reset";

/** `POST /api/auth/login` (bearer), `POST /login` (cookie) or undefined (API keys need no sign-in). */
export function signInEndpoint(server: CorpusServer): string | undefined {
  if (server.auth === "bearer") return server.stack === "node" ? "/api/auth/login" : "/api/session";
  if (server.auth === "cookie") return "/login";
  return undefined;
}

export function baseOperations(server: CorpusServer): SupportOperation[] {
  const p =
    server.database === "sqlite" ? () => "?" : server.stack === "node" ? (n: number) => `$${n}` : () => "%s";
  const operations: SupportOperation[] = [];
  const add = (id: string, endpoint: Endpoint, looksLike?: SupportOperation["looksLike"]) =>
    operations.push({ id, endpoint, documented: server.doc !== "none", ...(looksLike ? { looksLike } : {}) });

  add("SUP-HEALTH", {
    method: "GET",
    path: "/health",
    summary: "Liveness",
    access: "public",
    responses: { "200": json("the server is up", obj({ status: STR })) },
    node: nodeRoute("GET", "/health", 'return { status: "ok" };'),
    python: pyRoute("GET", "/health", 'return jsonify(status="ok")'),
  });

  add("SUP-ME", {
    method: "GET",
    path: "/api/me",
    summary: "The signed-in user",
    access: "user",
    responses: {
      "200": json("the caller", obj({ id: INT, email: STR, name: STR, role: STR, org_id: INT })),
      "401": err("no or invalid credentials"),
    },
    node: nodeUserRoute(
      "GET",
      "/api/me",
      "return { id: user.id, email: user.email, name: user.name, role: user.role, org_id: user.org_id };",
    ),
    python: pyRoute(
      "GET",
      "/api/me",
      'user = require_user()\nreturn jsonify(id=user["id"], email=user["email"], name=user["name"], role=user["role"], org_id=user["org_id"])',
    ),
  });

  const signIn = signInEndpoint(server);
  const uniform = {
    domain: "security" as const,
    class: "broken-authentication",
    why: "one answer for unknown accounts and wrong passwords (with a dummy hash check), and five failures lock the account for thirty seconds",
  };
  if (server.auth === "bearer" && signIn) {
    add(
      "SUP-SIGN-IN",
      {
        method: "POST",
        path: signIn,
        summary: "Sign in with email and password",
        access: "public",
        body: {
          contentType: "application/json",
          schema: obj({ email: STR, password: STR, ttl: { type: "integer", minimum: 1, maximum: 3600 } }, [
            "email",
            "password",
          ]),
          required: true,
        },
        responses: {
          "200": json("a bearer token", obj({ token: STR, token_type: STR, expires_in: INT })),
          "401": err("unknown email or wrong password"),
          "429": err("too many failed attempts for this account"),
        },
        node: nodeRoute(
          "POST",
          signIn,
          `const body = request.body ?? {};
const email = String(body.email ?? "").toLowerCase();
const password = String(body.password ?? "");
if (signInLockout.locked(email)) return reply.code(429).send({ error: "too many attempts, try again later" });
const user = await db.get("SELECT * FROM users WHERE email = ${p(1)}", [email]);
const matches = checkPassword(password, user ? user.password_hash : DUMMY_HASH);
if (!user || !matches) {
  signInLockout.fail(email);
  return reply.code(401).send({ error: "invalid email or password" });
}
signInLockout.clear(email);
const ttl = Number.isInteger(body.ttl) && body.ttl >= 1 && body.ttl <= 3600 ? body.ttl : 3600;
const now = Math.floor(Date.now() / 1000);
const token = signJwt({ sub: user.id, email: user.email, role: user.role, iat: now, exp: now + ttl });
return { token, token_type: "Bearer", expires_in: ttl };`,
        ),
        python: pyRoute(
          "POST",
          signIn,
          `body = request.get_json(silent=True) or {}
email = str(body.get("email", "")).lower()
password = str(body.get("password", ""))
if SIGN_IN_LOCKOUT.locked(email):
    return jsonify(error="too many attempts, try again later"), 429
user = db.get("SELECT * FROM users WHERE email = ${p(1)}", (email,))
matches = check_password(password, user["password_hash"] if user else DUMMY_HASH)
if not user or not matches:
    SIGN_IN_LOCKOUT.fail(email)
    return jsonify(error="invalid email or password"), 401
SIGN_IN_LOCKOUT.clear(email)
ttl = body.get("ttl")
ttl = ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and 1 <= ttl <= 3600 else 3600
now = int(time.time())
token = sign_jwt({"sub": user["id"], "email": user["email"], "role": user["role"], "iat": now, "exp": now + ttl})
return jsonify(token=token, token_type="Bearer", expires_in=ttl)`,
        ),
      },
      uniform,
    );
  }
  if (server.auth === "cookie") {
    add("SUP-SIGN-IN-PAGE", {
      method: "GET",
      path: "/login",
      summary: "The sign-in page",
      access: "public",
      responses: { "200": htmlAnswer("the sign-in form") },
      node: "",
      python: pyRoute("GET", "/login", 'return html_page(200, LOGIN_PAGE.replace("{message}", ""))'),
    });
    add(
      "SUP-SIGN-IN",
      {
        method: "POST",
        path: "/login",
        summary: "Sign in with the form",
        access: "public",
        body: {
          contentType: "application/x-www-form-urlencoded",
          schema: obj({ username: STR, password: STR }),
          required: true,
        },
        responses: {
          "303": { description: "signed in; the session cookie is set" },
          "401": htmlAnswer("unknown user or wrong password"),
          "429": htmlAnswer("too many failed attempts for this account"),
        },
        node: "",
        python: pyRoute(
          "POST",
          "/login",
          `email = request.form.get("username", "").lower()
password = request.form.get("password", "")
if SIGN_IN_LOCKOUT.locked(email):
    return html_page(429, LOGIN_PAGE.replace("{message}", "Too many attempts, try again later."))
user = db.get("SELECT * FROM users WHERE email = ${p(1)}", (email,))
matches = check_password(password, user["password_hash"] if user else DUMMY_HASH)
if not user or not matches:
    SIGN_IN_LOCKOUT.fail(email)
    return html_page(401, LOGIN_PAGE.replace("{message}", "Invalid username or password."))
SIGN_IN_LOCKOUT.clear(email)
session_id, csrf = open_session(user)
response = redirect("/", code=303)
response.set_cookie("session", session_id, httponly=True, path="/")
response.set_cookie("csrf_token", csrf, path="/")
return response`,
        ),
      },
      uniform,
    );
    add("SUP-HOME", {
      method: "GET",
      path: "/",
      summary: "Home page with the site's links and forms",
      access: "public",
      responses: { "200": htmlAnswer("the home page") },
      node: "",
      python: pyRoute(
        "GET",
        "/",
        `session = session_of()
token = session["csrf"] if session else ""
return html_page(200, HOME_PAGE.replace("{csrf}", token))`,
      ),
    });
  }
  return operations;
}
