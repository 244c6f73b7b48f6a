import type { Row } from "../../model/row.ts";
import { brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, json, obj, STR } from "../schemas.ts";

// Second sign-in and password-reset operations (a partner portal, a kiosk, a legacy client), each with
// its own flaw or its correct twin: answers that tell a known account from an unknown one (CWE-204), no
// limit on failed attempts (CWE-307), a reset answer that hands back the reset token (CWE-640).

export interface UserEnumerationKnobs {
  via: "sign-in" | "reset";
  /** How the vulnerable answer differs: its message, or its status. */
  tell: "message" | "status";
}

export interface BruteForceKnobs {
  input: "json" | "form";
}

export type ResetTokenKnobs = Record<string, never>;

interface SignInOptions {
  /** Distinct answers for an unknown account. */
  tell?: "message" | "status";
  /** Count failures and answer 429 after five. */
  lockout: boolean;
  input: "json" | "form";
}

function signIn(ctx: BuildContext, options: SignInOptions): { endpoint: Endpoint; top: Built["top"] } {
  const { ph, place } = ctx;
  const path = `${place.base}/session`;
  const lock = `LOCKOUT_${place.slug.toUpperCase()}`;
  const readNode = options.input === "json" ? "request.body ?? {}" : "request.body ?? {}";
  const readPy = options.input === "json" ? "request.get_json(silent=True) or {}" : "request.form";
  const unknown =
    options.tell === "message"
      ? { status: 401, message: "no account with that email" }
      : options.tell === "status"
        ? { status: 404, message: "invalid email or password" }
        : { status: 401, message: "invalid email or password" };
  const lockNode = options.lockout
    ? `if (${lock}.locked(email)) return reply.code(429).send({ error: "too many attempts, try again later" });\n`
    : "";
  const lockPy = options.lockout
    ? `if ${lock}.locked(email):\n    return jsonify(error="too many attempts, try again later"), 429\n`
    : "";
  const failNode = options.lockout ? `  ${lock}.fail(email);\n` : "";
  const failPy = options.lockout ? `    ${lock}.fail(email)\n` : "";
  const successNode =
    ctx.server.auth === "apikey"
      ? 'return { status: "signed in", api_key: user.api_key };'
      : ctx.server.auth === "cookie"
        ? 'return { status: "signed in", account: user.email };'
        : 'const now = Math.floor(Date.now() / 1000);\nreturn { status: "signed in", token: signJwt({ sub: user.id, email: user.email, role: user.role, iat: now, exp: now + 3600 }) };';
  const successPy =
    ctx.server.auth === "apikey"
      ? 'return jsonify(status="signed in", api_key=user["api_key"])'
      : ctx.server.auth === "cookie"
        ? 'session_id, csrf = open_session(user)\nresponse = jsonify(status="signed in", account=user["email"])\nresponse.set_cookie("session", session_id, httponly=True, path="/")\nresponse.set_cookie("csrf_token", csrf, path="/")\nreturn response'
        : 'now = int(time.time())\nreturn jsonify(status="signed in", token=sign_jwt({"sub": user["id"], "email": user["email"], "role": user["role"], "iat": now, "exp": now + 3600}))';
  const node = `const body = ${readNode};
const email = String(body.email ?? "").toLowerCase();
const password = String(body.password ?? "");
${lockNode}const user = await db.get("SELECT * FROM users WHERE email = ${ph(1)}", [email]);
${options.tell ? "" : "const matches = checkPassword(password, user ? user.password_hash : DUMMY_HASH);\n"}if (!user) {
${failNode}  return reply.code(${unknown.status}).send({ error: ${JSON.stringify(unknown.message)} });
}
if (!${options.tell ? "checkPassword(password, user.password_hash)" : "matches"}) {
${failNode}  return reply.code(401).send({ error: ${JSON.stringify(options.tell === "message" ? "wrong password" : "invalid email or password")} });
}
${options.lockout ? `${lock}.clear(email);\n` : ""}${successNode}`;
  const python = `body = ${readPy}
email = str(body.get("email", "")).lower()
password = str(body.get("password", ""))
${lockPy}user = db.get("SELECT * FROM users WHERE email = ${ph(1)}", (email,))
${options.tell ? "" : 'matches = check_password(password, user["password_hash"] if user else DUMMY_HASH)\n'}if user is None:
${failPy}    return jsonify(error=${JSON.stringify(unknown.message)}), ${unknown.status}
if not ${options.tell ? 'check_password(password, user["password_hash"])' : "matches"}:
${failPy}    return jsonify(error=${JSON.stringify(options.tell === "message" ? "wrong password" : "invalid email or password")}), 401
${options.lockout ? `${lock}.clear(email)\n` : ""}${successPy}`;
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: `Sign in to the ${place.group} portal`,
    access: "public",
    body: {
      contentType: options.input === "json" ? "application/json" : "application/x-www-form-urlencoded",
      schema: obj({ email: STR, password: STR }),
      required: true,
    },
    responses: {
      "200": json("signed in", obj({ status: STR }, ["status"])),
      "401": err("unknown email or wrong password"),
      ...(options.tell === "status" ? { "404": err("no such account") } : {}),
      ...(options.lockout ? { "429": err("too many failed attempts") } : {}),
    },
    node: nodeRoute("POST", path, node),
    python: pyRoute("POST", path, python),
  };
  return {
    endpoint,
    top: options.lockout
      ? { node: `const ${lock} = createLockout();`, python: `${lock} = Lockout()` }
      : undefined,
  };
}

interface ResetOptions {
  tell?: "message" | "status";
  returnsToken: boolean;
}

function reset(ctx: BuildContext, options: ResetOptions): Endpoint {
  const { ph, place } = ctx;
  const path = `${place.base}/password-reset`;
  const unknownNode =
    options.tell === "message"
      ? 'return reply.code(200).send({ status: "no account with that email" });'
      : options.tell === "status"
        ? 'return reply.code(404).send({ error: "no account with that email" });'
        : 'return reply.code(202).send({ status: "if the account exists, a link is on its way" });';
  const unknownPy =
    options.tell === "message"
      ? 'return jsonify(status="no account with that email"), 200'
      : options.tell === "status"
        ? 'return jsonify(error="no account with that email"), 404'
        : 'return jsonify(status="if the account exists, a link is on its way"), 202';
  const known = options.tell
    ? {
        node: '{ status: "a reset link was sent to your inbox" }',
        python: 'status="a reset link was sent to your inbox"',
        code: 200,
      }
    : {
        node: '{ status: "if the account exists, a link is on its way" }',
        python: 'status="if the account exists, a link is on its way"',
        code: 202,
      };
  const tokenNode = options.returnsToken ? `{ ...${known.node}, reset_token: token }` : known.node;
  const tokenPy = options.returnsToken ? `${known.python}, reset_token=token` : known.python;
  return {
    method: "POST",
    path,
    summary: `Ask for a password reset link (${place.group} portal)`,
    access: "public",
    body: { contentType: "application/json", schema: obj({ email: STR }), required: true },
    responses: {
      [String(known.code)]: json("the link is on its way", obj({ status: STR }, ["status"])),
      "400": err("email missing"),
      ...(options.tell === "status" ? { "404": err("no such account") } : {}),
    },
    node: nodeRoute(
      "POST",
      path,
      `const email = String((request.body ?? {}).email ?? "").toLowerCase();
if (!email) return reply.code(400).send({ error: "email is required" });
const user = await db.get("SELECT id FROM users WHERE email = ${ph(1)}", [email]);
if (!user) ${unknownNode}
const token = crypto.randomBytes(24).toString("hex");
RESET_TOKENS.set(token, { userId: user.id, expires: Date.now() + 3600_000 });
return reply.code(${known.code}).send(${tokenNode});`,
    ),
    python: pyRoute(
      "POST",
      path,
      `email = str((request.get_json(silent=True) or {}).get("email", "")).lower()
if not email:
    return jsonify(error="email is required"), 400
user = db.get("SELECT id FROM users WHERE email = ${ph(1)}", (email,))
if user is None:
    ${unknownPy}
token = os.urandom(24).hex()
RESET_TOKENS[token] = {"user_id": user["id"], "expires": time.time() + 3600}
return jsonify(${tokenPy}), ${known.code}`,
    ),
  };
}

export function buildUserEnumeration(row: Row<UserEnumerationKnobs>, ctx: BuildContext): Built {
  const { via, tell } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const built =
    via === "sign-in"
      ? signIn(ctx, { ...(vulnerable ? { tell } : {}), lockout: true, input: "json" })
      : { endpoint: reset(ctx, { ...(vulnerable ? { tell } : {}), returnsToken: false }), top: undefined };
  const path = built.endpoint.path;
  return {
    endpoint: built.endpoint,
    ...(built.top ? { top: built.top } : {}),
    title: vulnerable
      ? `The ${ctx.place.group} portal's ${via} answers tell known accounts from unknown ones (${tell})`
      : `The ${ctx.place.group} portal's ${via} answers unknown accounts`,
    ...(vulnerable
      ? {}
      : { why: "unknown and known accounts get the same status and body (and the same hash work)" }),
    oracle: async (client: OracleClient) => {
      const ask = (email: string) =>
        client.ask({
          method: "POST",
          path,
          json: via === "sign-in" ? { email, password: "not-the-password" } : { email },
        });
      const unknown = await ask(`nobody-${Math.random().toString(36).slice(2, 8)}@corpus.test`);
      const known = await ask("bruno@corpus.test");
      const differ = unknown.status !== known.status || unknown.text !== known.text;
      return verdict(differ, `unknown → ${brief(unknown)}; known → ${brief(known)}`);
    },
  };
}

export function buildBruteForce(row: Row<BruteForceKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { endpoint, top } = signIn(ctx, { lockout: !vulnerable, input: row.knobs.input });
  return {
    endpoint,
    ...(top ? { top } : {}),
    title: vulnerable
      ? `The ${ctx.place.group} portal's sign-in never limits failed attempts`
      : `The ${ctx.place.group} portal's sign-in takes passwords`,
    ...(vulnerable ? {} : { why: "five failures within a minute lock the account for thirty seconds (429)" }),
    oracle: async (client: OracleClient) => {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 7; attempt += 1) {
        const fields = { email: "dana@corpus.test", password: `guess-${attempt}` };
        const answer = await client.ask({
          method: "POST",
          path: endpoint.path,
          ...(row.knobs.input === "json" ? { json: fields } : { form: fields }),
        });
        statuses.push(answer.status);
      }
      return verdict(!statuses.includes(429), `seven wrong passwords → ${statuses.join(", ")}`);
    },
  };
}

export function buildResetTokenExposure(row: Row<ResetTokenKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const endpoint = reset(ctx, { returnsToken: vulnerable });
  return {
    endpoint,
    title: vulnerable
      ? `The ${ctx.place.group} portal's password reset answers with the reset token`
      : `The ${ctx.place.group} portal's password reset creates a reset token`,
    ...(vulnerable ? {} : { why: "the token only travels by email; the answer carries a status" }),
    oracle: async (client: OracleClient) => {
      const answer = await client.ask({
        method: "POST",
        path: endpoint.path,
        json: { email: "bruno@corpus.test" },
      });
      const leaked = /"[a-z_]*token[a-z_]*"\s*:\s*"[0-9a-f]{16,}"/i.test(answer.text);
      return verdict(leaked, `reset for bruno → ${brief(answer)}`);
    },
  };
}
