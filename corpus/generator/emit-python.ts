import { PEOPLE } from "../model/servers.ts";
import { pathParams } from "./code.ts";
import { bodyTypes, DANGER_NOTICE, GENERATED_NOTICE, schemaName } from "./emit-node.ts";
import type { Endpoint } from "./endpoint.ts";
import { PYTHON_REALTIME_PRELUDE } from "./families/realtime-flask.ts";
import { RESET_PATH } from "./server-base.ts";
import { allEndpoints, type ServerModel } from "./server-model.ts";

// The generated Flask app, run by Debian's /usr/bin/python3 (python3-flask, python3-psycopg2,
// python3-lxml, python3-yaml). Cookie-session servers get a home page of links and forms (the way a
// person finds the operations) and a CSRF check on form posts, with the views a variant exempts.

export function emitPythonApp(model: ServerModel): string {
  const { server } = model;
  const operations = allEndpoints(model);
  // Identical declarations (a key two debug pages share) are emitted once.
  const tops = [
    ...new Set(
      model.variants.map((variant) => variant.built.top?.python).filter((top): top is string => !!top),
    ),
  ];
  const routes = operations.map((endpoint) => {
    if (!endpoint.python) {
      throw new Error(`${endpoint.method} ${endpoint.path} has no Python code (server ${server.name})`);
    }
    return endpoint.python;
  });
  const placeholder = server.database === "sqlite" ? '"?"' : '"%s"';
  const cookie = server.auth === "cookie";
  return `# ${GENERATED_NOTICE}
# ${DANGER_NOTICE}
import base64
import json
import os
import pickle
import re
import shlex
import sys
import time
import traceback
import urllib.parse
import uuid
from datetime import datetime

import yaml
from flask import abort, g, jsonify, redirect, render_template_string, request

from lib.support import (
    DUMMY_HASH, HERE, JWT_SECRET, Database, Lockout, bearer_token, body_json, body_type_problem,
    check_password, create_app, current_user, decode_jwt, escape, fetch_loopback, hmac_matches, html_page,
    location_header, matches_filter, open_session, parse_xml, read_inside_corpus, run, seed, serve,
    session_of, shell, sign_jwt, verify_jwt,
)

AUTH = ${JSON.stringify(server.auth)}
PEOPLE = json.loads(${pyString(JSON.stringify(PEOPLE))})
RECORDS = json.loads(${pyString(JSON.stringify(model.records))})
TABLES = json.loads(${pyString(JSON.stringify(model.tables))})
db = Database(${JSON.stringify(server.database)}, ${JSON.stringify(schemaName(server.name))})


def p(index):
    return ${placeholder}


def reseed():
    seed(db, p, PEOPLE, RECORDS, ${server.secondUserOwnsData ? "True" : "False"}, TABLES)


reseed()
app = create_app(__name__)
SIGN_IN_LOCKOUT = Lockout()
# Password-reset tokens by value; they only ever leave the server by email.
RESET_TOKENS = {}


# Every JSON body keeps to its operation's documented top-level types before a view sees it.
BODY_TYPES = json.loads(${pyString(JSON.stringify(bodyTypes(model, "python")))})


@app.before_request
def body_types():
    rules = BODY_TYPES.get(request.endpoint)
    if rules is None or not request.is_json:
        return None
    problem = body_type_problem(request.get_json(silent=True), rules)
    return (jsonify(error=problem), 400) if problem else None


def signed_in():
    return current_user(db, AUTH, p)


def require_user():
    user = signed_in()
    if user is None:
        abort(401)
    return user


def require_admin():
    user = require_user()
    if user["role"] != "admin":
        abort(403)
    return user


@app.route(${JSON.stringify(RESET_PATH)}, methods=["POST"])
def corpus_reset():
    token = os.environ.get("CORPUS_RESET_TOKEN")
    if not token or request.headers.get("X-Corpus-Reset") != token:
        abort(404)
    reseed()
    return "", 204

${cookie ? csrfCheck(model) : ""}
${model.variants.some((variant) => variant.built.channel) ? PYTHON_REALTIME_PRELUDE : ""}


${tops.join("\n\n\n")}


${routes.join("\n\n\n")}


if __name__ == "__main__":
    serve(app)
`;
}

function csrfCheck(model: ServerModel): string {
  return `
LOGIN_PAGE = ${pyString(LOGIN_PAGE)}
HOME_PAGE = ${pyString(homePage(model))}
CSRF_EXEMPT = set(${JSON.stringify(model.csrfExempt)})
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")


@app.before_request
def csrf_check():
    """Form posts from a signed-in browser must carry the session's token (double submit), like Flask-WTF."""
    if request.method not in ("POST", "PUT", "PATCH", "DELETE") or request.endpoint in CSRF_EXEMPT:
        return None
    session = session_of()
    if session is None or request.mimetype not in FORM_TYPES:
        return None
    token = request.form.get("csrf_token") or request.headers.get("X-CSRF-Token", "")
    if token != session["csrf"]:
        return jsonify(error="missing or wrong CSRF token"), 403
    return None
`;
}

const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body><main><h1>Sign in</h1><p role="status">{message}</p>
<form method="post" action="/login">
<label>Email <input name="username" type="email" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form></main></body></html>`;

/** Links to every GET operation and a form for every form-bodied one, as a small site would have. */
function homePage(model: ServerModel): string {
  // Pages a variant keeps out of the navigation, and the scripts, styles and images pages load, are not
  // listed: a site's menu links pages, not its files.
  const endpoints: Endpoint[] = allEndpoints(model).filter(
    (endpoint) =>
      !["/", "/login", RESET_PATH, ...model.unlinkedPaths].includes(endpoint.path) &&
      !/\.(?:js|css|svg|png)$/.test(endpoint.path),
  );
  const links: string[] = [];
  const forms: string[] = [];
  for (const endpoint of endpoints) {
    const concrete = pathParams(endpoint.path).reduce(
      (path, name) => path.replace(`{${name}}`, "1"),
      endpoint.path,
    );
    if (endpoint.method === "GET") {
      const query = (endpoint.parameters ?? [])
        .filter((param) => param.in === "query")
        .map((param) => `${encodeURIComponent(param.name)}=${encodeURIComponent(sampleOf(param.schema))}`)
        .join("&amp;");
      links.push(`<li><a href="${concrete}${query ? `?${query}` : ""}">${endpoint.summary}</a></li>`);
    } else if (endpoint.body?.contentType === "application/x-www-form-urlencoded") {
      const properties = Object.keys((endpoint.body.schema.properties as Record<string, unknown>) ?? {});
      const inputs = properties.map((name) => `<label>${name} <input name="${name}"></label>`).join("");
      forms.push(
        `<form method="post" action="${concrete}"><h2>${endpoint.summary}</h2>${inputs}<input type="hidden" name="csrf_token" value="{csrf}"><button type="submit">Send</button></form>`,
      );
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Workspace</title></head>
<body><main><h1>Workspace</h1><p><a href="/login">Sign in</a></p>
<nav><ul>
${links.join("\n")}
</ul></nav>
${forms.join("\n")}
</main></body></html>`;
}

function sampleOf(schema: Record<string, unknown>): string {
  if (schema.example !== undefined) return String(schema.example);
  if (Array.isArray(schema.enum)) return String(schema.enum[0]);
  return schema.type === "integer" ? "1" : "a";
}

/** A Python string literal holding `text` exactly. */
function pyString(text: string): string {
  return JSON.stringify(text);
}
