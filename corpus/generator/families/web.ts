import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, htmlAnswer, INT, json, obj, STR } from "../schemas.ts";
import { ownedCollection, recordShape } from "./records.ts";

// What a browser trusts: HTML built from input (CWE-79), redirects to a client-chosen place (CWE-601),
// cross-origin reads with credentials (CWE-942), pages without protective headers (CWE-693/1021) and
// state changes a foreign page can post (CWE-352).

export interface XssKnobs {
  kind: "reflected" | "stored";
  context: "body" | "attribute" | "script" | "href";
  /** Safe rows: escaped for the context, or answered as JSON / plain text. */
  guard?: "escaped" | "json" | "text";
}

export interface OpenRedirectKnobs {
  param: "next" | "returnTo" | "url" | "redirect_uri";
  check?: "none" | "prefix-slash" | "contains-host";
  guard?: "relative-only" | "allow-list";
}

export interface CorsKnobs {
  policy?: "reflect" | "null" | "suffix";
  guard?: "allow-list" | "wildcard-public";
}

export type HeadersKnobs = Record<string, never>;

export interface CsrfKnobs {
  guard?: "token" | "json-only";
  /**
   * `get`: a quick-add routed for GET too (its fields from the query), as `router.all` or
   * `methods=["GET", "POST"]` do; the POST checks its token, the GET (like every framework's check) does
   * not. Its safe twin's GET only previews.
   */
  via?: "get";
}

const XSS_PAYLOADS = {
  body: "<b data-crp=x1>",
  attribute: '"><b data-crp=x1>',
  script: "</script><b data-crp=x1>",
  href: "javascript:alert(1)",
};

function htmlFor(context: XssKnobs["context"], safe: boolean, language: "node" | "python"): string {
  const v = "value";
  const escapeFor = language === "node" ? (x: string) => `escapeHtml(${x})` : (x: string) => `escape(${x})`;
  const scriptSafe =
    language === "node"
      ? `JSON.stringify(${v}).replaceAll("<", "\\\\u003c")`
      : `json.dumps(${v}).replace("<", "\\\\u003c")`;
  const hrefSafe =
    language === "node"
      ? `escapeHtml(/^(https?:\\/\\/|\\/)/i.test(${v}) ? ${v} : "#")`
      : `escape(${v} if re.match(r"(https?://|/)", ${v}, re.I) else "#")`;
  switch (context) {
    case "body":
      return `"<h1>Results for " + ${safe ? escapeFor(v) : v} + "</h1>"`;
    case "attribute":
      return `"<form><input name=\\"q\\" value=\\"" + ${safe ? escapeFor(v) : v} + "\\"></form>"`;
    case "script":
      return safe
        ? `"<script>const search = " + ${scriptSafe} + ";</script>"`
        : `"<script>const search = \\"" + ${v} + "\\";</script>"`;
    case "href":
      return `"<a href=\\"" + ${safe ? hrefSafe : v} + "\\">Continue</a>"`;
  }
}

const PAGE_HEAD =
  '"<!doctype html><html lang=\\"en\\"><head><meta charset=\\"utf-8\\"><title>Preview</title></head><body><main>"';
const PAGE_TAIL = '"</main></body></html>"';

export function buildXss(row: Row<XssKnobs>, ctx: BuildContext): Built {
  const { kind, context, guard = "escaped" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const escaped = !vulnerable && guard === "escaped";
  const param = context === "href" ? "link" : "q";
  const answer = (language: "node" | "python") => {
    if (!vulnerable && guard === "json") {
      return language === "node" ? "return { query: value };" : "return jsonify(query=value)";
    }
    if (!vulnerable && guard === "text") {
      return language === "node"
        ? 'return reply.type("text/plain; charset=utf-8").send("Results for " + value);'
        : 'return "Results for " + value, 200, {"Content-Type": "text/plain; charset=utf-8"}';
    }
    const page = `${PAGE_HEAD} + ${htmlFor(context, escaped, language)} + ${PAGE_TAIL}`;
    return language === "node" ? `return html(reply, 200, ${page});` : `return html_page(200, ${page})`;
  };
  const answerDoc =
    !vulnerable && guard === "json"
      ? json("the query", obj({ query: STR }))
      : !vulnerable && guard === "text"
        ? { description: "the query", contentType: "text/plain", schema: STR }
        : htmlAnswer("the page");

  if (kind === "reflected") {
    const path = `${ctx.place.base}/preview`;
    const endpoint: Endpoint = {
      method: "GET",
      path,
      summary: `Preview ${ctx.place.plural} for a search`,
      access: "public",
      parameters: [{ name: param, in: "query", required: false, schema: STR }],
      responses: { "200": answerDoc },
      node: nodeRoute(
        "GET",
        path,
        `const value = String(request.query[${JSON.stringify(param)}] ?? "");\n${answer("node")}`,
      ),
      python: pyRoute(
        "GET",
        path,
        `value = request.args.get(${JSON.stringify(param)}, "")\n${answer("python")}`,
      ),
    };
    return {
      endpoint,
      title: vulnerable
        ? `Reflected XSS: the query parameter ${param} lands unescaped in ${contextWords(context)}`
        : `The preview echoes the query parameter ${param}`,
      ...(vulnerable ? {} : { why: guardWords(guard, context) }),
      oracle: async (client) => {
        const payload = XSS_PAYLOADS[context];
        const reply = await client.ask({ path, query: { [param]: payload } });
        return verdict(isHtml(reply.headers) && rawIn(reply.text, context, payload), brief(reply));
      },
    };
  }

  // Stored: a note is saved through a JSON write, then rendered on its own page.
  const shape = recordShape("sequential");
  const [create] = ownedCollection(ctx, shape);
  const page = `${ctx.place.base}/{id}/page`;
  const { ph } = ctx;
  const kindName = JSON.stringify(ctx.place.kind);
  const endpoint: Endpoint = {
    method: "GET",
    path: page,
    summary: `Show a ${ctx.place.singular} as a page`,
    access: "user",
    parameters: [{ name: "id", in: "path", required: true, schema: STR }],
    responses: { "200": answerDoc, "404": err("not one of the caller's"), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      page,
      `const id = String(request.params["id"]);
if (!/^[0-9]{1,9}$/.test(id)) return reply.code(404).send({ error: "not found" });
const row = await db.get("SELECT title FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", [${kindName}, Number(id), user.id]);
if (!row) return reply.code(404).send({ error: "not found" });
const value = row.title;
${answer("node")}`,
    ),
    python: pyRoute(
      "GET",
      page,
      `user = require_user()
if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
row = db.get("SELECT title FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", (${kindName}, int(id), user["id"]))
if row is None:
    return jsonify(error="not found"), 404
value = row["title"]
${answer("python")}`,
    ),
  };
  return {
    endpoint,
    ...(vulnerable ? { alsoAt: [create!] } : { support: [create!] }),
    title: vulnerable
      ? `Stored XSS: a ${ctx.place.singular}'s title is rendered unescaped in ${contextWords(context)}`
      : `A ${ctx.place.singular}'s title is rendered on its page`,
    ...(vulnerable ? {} : { why: guardWords(guard, context) }),
    oracle: async (client) => {
      const payload = XSS_PAYLOADS[context];
      const created = await client.ask({
        as: "alice",
        method: "POST",
        path: create!.path,
        json: { title: payload },
      });
      const id = String((created.json as { id?: unknown } | null)?.id ?? "");
      const reply = await client.ask({ as: "alice", path: page.replace("{id}", id) });
      return verdict(isHtml(reply.headers) && rawIn(reply.text, context, payload), brief(reply));
    },
  };
}

function isHtml(headers: Headers): boolean {
  return (headers.get("content-type") ?? "").includes("text/html");
}

function rawIn(text: string, context: XssKnobs["context"], payload: string): boolean {
  return context === "href" ? text.includes(`href="${payload}`) : text.includes(payload);
}

function contextWords(context: XssKnobs["context"]): string {
  return {
    body: "the page body",
    attribute: "a quoted attribute",
    script: "a script string",
    href: "a link's href",
  }[context];
}

function guardWords(guard: NonNullable<XssKnobs["guard"]>, context: XssKnobs["context"]): string {
  if (guard === "json") return "the answer is JSON (application/json), not HTML";
  if (guard === "text") return "the answer is text/plain, not HTML";
  return context === "script"
    ? "the value is JSON-encoded with < escaped"
    : context === "href"
      ? "only http(s) and relative links are kept, and the value is escaped"
      : "the value is HTML-escaped";
}

export function buildOpenRedirect(row: Row<OpenRedirectKnobs>, ctx: BuildContext): Built {
  const { param, check = "none", guard = "relative-only" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const path = `${ctx.place.base}/continue`;
  const rule = vulnerable
    ? {
        none: { node: "", python: "" },
        "prefix-slash": {
          node: 'if (!target.startsWith("/")) target = "/";\n',
          python: 'if not target.startswith("/"):\n    target = "/"\n',
        },
        "contains-host": {
          node: 'if (!target.includes("app.corpus.test")) target = "/";\n',
          python: 'if "app.corpus.test" not in target:\n    target = "/"\n',
        },
      }[check]
    : {
        "relative-only": {
          node: 'if (!/^\\/(?![\\/\\\\])/.test(target)) target = "/";\n',
          python: 'if not re.match(r"/(?![/\\\\])", target):\n    target = "/"\n',
        },
        "allow-list": {
          node: `let allowed = false;
try {
  const parsed = new URL(target, "https://app.corpus.test/");
  allowed = parsed.protocol === "https:" && parsed.host === "app.corpus.test";
} catch {
  allowed = false;
}
if (!allowed) target = "/";
`,
          python: `normal = target.replace("\\\\", "/")
parsed = urllib.parse.urlparse(normal)
relative = parsed.scheme == "" and parsed.netloc == "" and normal.startswith("/")
if not (relative or (parsed.scheme == "https" and parsed.netloc == "app.corpus.test")):
    target = "/"
`,
        },
      }[guard];
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: "Continue to where the visitor was going",
    access: "public",
    parameters: [{ name: param, in: "query", required: false, schema: STR }],
    responses: { "302": { description: "a redirect", headers: { Location: STR } } },
    node: nodeRoute(
      "GET",
      path,
      `let target = String(request.query[${JSON.stringify(param)}] ?? "/");\n${rule.node}return reply.redirect(locationHeader(target), 302);`,
    ),
    python: pyRoute(
      "GET",
      path,
      `target = request.args.get(${JSON.stringify(param)}, "/")\n${rule.python}return redirect(location_header(target), code=302)`,
    ),
  };
  return {
    endpoint,
    title: vulnerable
      ? `Open redirect through the query parameter ${param} (${check === "none" ? "no check" : check === "prefix-slash" ? "a leading / is enough" : "the host only has to appear somewhere"})`
      : `The continue link redirects to the query parameter ${param}`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "relative-only"
              ? "only same-site paths (one leading /, no // or /\\) are followed"
              : "the parsed URL must be https on app.corpus.test",
        }),
    oracle: async (client) => {
      for (const target of [
        "https://evil.example/",
        "//evil.example/",
        "/\\evil.example/",
        "https://evil.example/?app.corpus.test",
      ]) {
        const reply = await client.ask({ path, query: { [param]: target } });
        const location = reply.headers.get("location");
        if (
          reply.status >= 300 &&
          reply.status < 400 &&
          location &&
          new URL(location, "https://app.corpus.test/").host === "evil.example"
        ) {
          return verdict(true, `${target} → ${location}`);
        }
      }
      return verdict(false, "every foreign target was replaced");
    },
  };
}

export function buildCors(row: Row<CorsKnobs>, ctx: BuildContext): Built {
  const { policy = "reflect", guard = "allow-list" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const publicData = !vulnerable && guard === "wildcard-public";
  const path = `${ctx.place.base}/${publicData ? "rates" : "profile"}`;
  const allow = vulnerable
    ? {
        reflect: { node: 'origin !== ""', python: 'origin != ""' },
        null: {
          node: 'origin === "null" || origin === "https://app.corpus.test"',
          python: 'origin in ("null", "https://app.corpus.test")',
        },
        suffix: { node: 'origin.endsWith("corpus.test")', python: 'origin.endswith("corpus.test")' },
      }[policy]
    : { node: 'origin === "https://app.corpus.test"', python: 'origin == "https://app.corpus.test"' };
  const node = publicData
    ? `reply.header("access-control-allow-origin", "*");
return { items: await db.all("SELECT sku, price FROM products ORDER BY id") };`
    : `const user = await requireUser(request, reply);
if (!user) return reply;
const origin = String(request.headers.origin ?? "");
if (${allow.node}) {
  reply.header("access-control-allow-origin", origin);
  reply.header("access-control-allow-credentials", "true");
  reply.header("vary", "Origin");
}
return { email: user.email, name: user.name, org_id: user.org_id };`;
  const python = publicData
    ? `response = jsonify(items=db.all("SELECT sku, price FROM products ORDER BY id"))
response.headers["Access-Control-Allow-Origin"] = "*"
return response`
    : `user = require_user()
origin = request.headers.get("Origin", "")
response = jsonify(email=user["email"], name=user["name"], org_id=user["org_id"])
if ${allow.python}:
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Access-Control-Allow-Credentials"] = "true"
    response.headers["Vary"] = "Origin"
return response`;
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: publicData ? "Public price list" : "My profile, for the companion web app",
    access: publicData ? "public" : "user",
    responses: {
      "200": publicData
        ? json("prices", obj({ items: { type: "array", items: obj({ sku: STR, price: INT }) } }))
        : json("the caller", obj({ email: STR, name: STR, org_id: INT })),
      ...guarded(publicData ? "public" : "user"),
    },
    node: nodeRoute("GET", path, node),
    python: pyRoute("GET", path, python),
  };
  return {
    endpoint,
    title: vulnerable
      ? `CORS lets ${policy === "reflect" ? "any origin" : policy === "null" ? "the null origin" : "any origin ending in corpus.test"} read the profile with credentials`
      : publicData
        ? "The price list allows every origin"
        : "The profile answers cross-origin requests",
    ...(vulnerable
      ? {}
      : {
          why: publicData
            ? "public data, `*` without credentials"
            : "only https://app.corpus.test is allowed, exactly",
        }),
    oracle: async (client) => {
      for (const origin of ["https://evil.example", "null", "https://evilcorpus.test"]) {
        const reply = await client.ask({ as: "alice", path, headers: { origin } });
        if (
          reply.headers.get("access-control-allow-origin") === origin &&
          reply.headers.get("access-control-allow-credentials") === "true"
        ) {
          return verdict(true, `${origin} allowed with credentials`);
        }
      }
      return verdict(false, "no foreign origin was allowed with credentials");
    },
  };
}

export function buildSecurityHeaders(row: Row<HeadersKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const path = `${ctx.place.base}/overview`;
  const page = `"<!doctype html><html lang=\\"en\\"><head><meta charset=\\"utf-8\\"><title>Overview</title></head><body><main><h1>${ctx.place.plural} overview</h1><p>Opening hours: 9 to 5.</p></main></body></html>"`;
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `The ${ctx.place.plural} overview page`,
    access: "public",
    responses: { "200": htmlAnswer("the page") },
    node: nodeRoute(
      "GET",
      path,
      `return html(reply, 200, ${page});`,
      vulnerable ? "{ config: { plainHeaders: true } }" : undefined,
    ),
    python: pyRoute(
      "GET",
      path,
      `${vulnerable ? "g.plain_headers = True\n" : ""}return html_page(200, ${page})`,
    ),
  };
  return {
    endpoint,
    title: vulnerable
      ? `The ${ctx.place.plural} overview page has no X-Frame-Options, CSP or nosniff`
      : `The ${ctx.place.plural} overview is an HTML page`,
    ...(vulnerable
      ? {}
      : { why: "it carries X-Frame-Options, a CSP with frame-ancestors, nosniff and a referrer policy" }),
    oracle: async (client) => {
      const reply = await client.ask({ path });
      const missing = ["x-frame-options", "x-content-type-options", "content-security-policy"].filter(
        (name) => !reply.headers.has(name),
      );
      return verdict(missing.length > 0, `missing: ${missing.join(", ") || "none"}`);
    },
  };
}

export function buildCsrf(row: Row<CsrfKnobs>, ctx: BuildContext): Built {
  if (ctx.server.auth !== "cookie") throw new Error(`${row.id}: CSRF variants need a cookie-session server`);
  const { guard = "token" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const jsonOnly = !vulnerable && guard === "json-only";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/nickname`;
  const shape = recordShape("sequential");
  const [, list] = ownedCollection(ctx, shape);
  if (row.knobs.via === "get") return csrfByLink(row, ctx, list!);
  const read = jsonOnly
    ? 'if not request.is_json:\n    return jsonify(error="send JSON"), 415\ntitle = str((request.get_json(silent=True) or {}).get("title", ""))'
    : 'title = request.form.get("title", "")';
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: `Rename my newest ${place.singular}`,
    access: "user",
    body: jsonOnly
      ? { contentType: "application/json", schema: obj({ title: STR }), required: true }
      : { contentType: "application/x-www-form-urlencoded", schema: obj({ title: STR }), required: true },
    responses: {
      "200": json("renamed", obj({ id: INT, title: STR })),
      "400": err("title missing or too long"),
      "403": err("missing CSRF token"),
      ...guarded("user"),
    },
    node: "",
    python: pyRoute(
      "POST",
      path,
      `user = require_user()
${read}
if not 0 < len(title) <= 80:
    return jsonify(error="title must be 1 to 80 characters"), 400
row = db.get("SELECT id FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id DESC LIMIT 1", (${kind}, user["id"]))
if row is None:
    return jsonify(error="nothing to rename"), 404
db.run("UPDATE records SET title = ${ph(1)} WHERE id = ${ph(2)}", (title, row["id"]))
return jsonify(id=row["id"], title=title)`,
    ),
  };
  return {
    endpoint,
    support: [list!],
    records: [{ kind: place.kind, title: "Nick", owners: ["alice", "bruno", "dana"], count: 1 }],
    ...(vulnerable ? { csrfExempt: true } : {}),
    title: vulnerable
      ? `Cross-site request forgery: renaming a ${place.singular} accepts a form post without the CSRF token`
      : `Renaming a ${place.singular} is a cookie-authenticated state change`,
    ...(vulnerable
      ? {}
      : {
          why: jsonOnly
            ? "it only takes JSON, which a foreign page cannot send without a preflight"
            : "the form must carry the session's CSRF token (403 otherwise)",
        }),
    oracle: async (client) => {
      const marker = `forged-${Math.random().toString(36).slice(2, 8)}`;
      const reply = await client.ask({
        as: "alice",
        method: "POST",
        path,
        form: { title: marker },
        csrf: false,
        headers: { origin: "https://evil.example" },
      });
      const after = await client.ask({ as: "alice", path: list!.path });
      return verdict(after.text.includes(marker), `forged form → ${brief(reply)}`);
    },
  };
}

/**
 * A quick-add form whose action is also routed for GET: the POST checks the session's CSRF token, the GET
 * adds a record from its query (vulnerable) or only previews it (safe). A GET that adds, not one that
 * renames: other probes' requests to the same GET then add records of their own rather than overwrite the
 * forged one.
 */
function csrfByLink(row: Row<CsrfKnobs>, ctx: BuildContext, list: Endpoint): Built {
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/quick-add`;
  const insert = `title = {source}.get("title", "")
if not 0 < len(title) <= 80:
    return jsonify(error="title must be 1 to 80 characters"), 400
row = db.get(
    "INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}) RETURNING id, title",
    (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], title, datetime.utcnow().isoformat()),
)
return jsonify(row), 201`;
  const post: Endpoint = {
    method: "POST",
    path,
    summary: `Add a ${place.singular}`,
    access: "user",
    body: { contentType: "application/x-www-form-urlencoded", schema: obj({ title: STR }), required: true },
    responses: {
      "201": json("added", obj({ id: INT, title: STR })),
      "400": err("title missing or too long"),
      "403": err("missing CSRF token"),
      ...guarded("user"),
    },
    node: "",
    python: pyRoute("POST", path, `user = require_user()\n${insert.replace("{source}", "request.form")}`),
  };
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: vulnerable
      ? `Add a ${place.singular} by a link`
      : `Preview a ${place.singular} before adding it`,
    access: "user",
    parameters: [{ name: "title", in: "query", required: true, schema: STR }],
    responses: {
      [vulnerable ? "201" : "200"]: json(vulnerable ? "added" : "the preview", obj({ title: STR })),
      "400": err("title missing or too long"),
      ...guarded("user"),
    },
    node: "",
    python: pyRoute(
      "GET",
      path,
      vulnerable
        ? `user = require_user()\n${insert.replace("{source}", "request.args")}`
        : `require_user()
title = request.args.get("title", "")
if not 0 < len(title) <= 80:
    return jsonify(error="title must be 1 to 80 characters"), 400
return jsonify(title=title, preview=True)`,
    ),
  };
  return {
    endpoint,
    support: [list, post],
    title: vulnerable
      ? `Cross-site request forgery by a link: adding a ${place.singular} also works as a GET, which no CSRF token guards`
      : `Adding a ${place.singular} is routed beside a GET of the same path`,
    ...(vulnerable
      ? {}
      : { why: "the GET only previews; adding takes a POST carrying the session's CSRF token" }),
    oracle: async (client) => {
      const marker = `linked-${Math.random().toString(36).slice(2, 8)}`;
      const reply = await client.ask({
        as: "alice",
        path,
        query: { title: marker },
        headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
      });
      const after = await client.ask({ as: "alice", path: list.path });
      return verdict(after.text.includes(marker), `link → ${brief(reply)}`);
    },
  };
}
