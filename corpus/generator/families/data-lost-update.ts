import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";
import {
  answerSchema,
  createOwn,
  ID_PATTERN,
  type OwnedTable,
  ownedResource,
  ownRowOr404,
  readOwn,
  selectList,
  tableDdl,
} from "./owned-table.ts";

// Lost updates (CWE-362 read-modify-write; optimistic locking as JPA's @Version, Rails' lock_version and
// HTTP's conditional requests, RFC 9110 §13.1.1 If-Match, describe it): the resource carries a version the
// client must send back with a change, so that a change made from a stale copy is refused. The vulnerable
// update bumps the version but never compares it, so the second of two editors silently overwrites the
// first. The safe twin's UPDATE has `WHERE version = ?` and answers 409 (a version in the body) or 412 (an
// If-Match header) when it matched nothing.

export interface LostUpdateKnobs {
  token: "version-field" | "if-match";
  method: "PUT" | "PATCH";
}

export function buildLostUpdate(row: Row<LostUpdateKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const ifMatch = row.knobs.token === "if-match";
  const table: OwnedTable = {
    name: place.slug,
    columns: [
      { name: "body", ddl: "TEXT NOT NULL DEFAULT ''", schema: STR },
      { name: "version", ddl: "INTEGER NOT NULL DEFAULT 1", schema: INT },
    ],
    etag: ifMatch,
  };
  const support = ownedResource(ctx, table, {
    body: { body: { type: "string", maxLength: 400 } },
    validate: {
      node: `if (body.body !== undefined && (typeof body.body !== "string" || body.body.length > 400)) {
  return reply.code(400).send({ error: "body must be a string of at most 400 characters" });
}`,
      python: `if "body" in body and (not isinstance(body["body"], str) or len(body["body"]) > 400):
    return jsonify(error="body must be a string of at most 400 characters"), 400`,
    },
    insert: [{ column: "body", node: 'String(body.body ?? "")', python: 'str(body.get("body", ""))' }],
  });
  const path = `${place.base}/{id}`;
  const lookup = ownRowOr404(ctx, table);
  const sent = ifMatch
    ? {
        node: `const sent = String(request.headers["if-match"] ?? "").replace(/^W\\//, "");
if (!sent) return reply.code(428).send({ error: "If-Match is required" });
const expected = /^"?v?[0-9]{1,9}"?$/.test(sent) ? Number(sent.replace(/[^0-9]/g, "")) : -1;`,
        python: `sent = request.headers.get("If-Match", "").removeprefix("W/")
if not sent:
    return jsonify(error="If-Match is required"), 428
expected = int(sent.strip('"').removeprefix("v")) if re.fullmatch(r'"?v?[0-9]{1,9}"?', sent) else -1`,
      }
    : {
        node: `const expected = (request.body ?? {}).version;
if (!Number.isInteger(expected)) return reply.code(400).send({ error: "version is required" });`,
        python: `expected = (request.get_json(silent=True) or {}).get("version")
if not isinstance(expected, int):
    return jsonify(error="version is required"), 400`,
      };
  const stale = ifMatch ? 412 : 409;
  const where = vulnerable ? `id = ${ph(3)}` : `id = ${ph(3)} AND version = ${ph(4)}`;
  const sql = `UPDATE ${table.name} SET title = ${ph(1)}, body = ${ph(2)}, version = version + 1 WHERE ${where}`;
  const reread = `SELECT ${selectList(table)} FROM ${table.name} WHERE id = ${ph(1)}`;
  const fields =
    row.knobs.method === "PATCH"
      ? {
          node: `const b = request.body ?? {};
const title = b.title === undefined ? row.title : b.title;
const text = b.body === undefined ? row.body : b.body;`,
          python: `b = request.get_json(silent=True) or {}
title = b.get("title", row["title"])
text = b.get("body", row["body"])`,
        }
      : {
          node: `const b = request.body ?? {};
const title = b.title;
const text = b.body ?? "";`,
          python: `b = request.get_json(silent=True) or {}
title = b.get("title")
text = b.get("body", "")`,
        };
  const endpoint: Endpoint = {
    method: row.knobs.method,
    path,
    summary: `${row.knobs.method === "PUT" ? "Replace" : "Edit"} one of my ${place.plural}`,
    description: ifMatch
      ? `Send the ETag the read answered in If-Match: a change made from an older copy is refused with 412.`
      : `Send the version the read answered: a change made from an older copy is refused with 409.`,
    access: "user",
    alwaysDocumented: true,
    parameters: [
      { name: "id", in: "path", required: true, schema: { type: "string", pattern: ID_PATTERN } },
      ...(ifMatch ? [{ name: "If-Match", in: "header" as const, required: true, schema: STR }] : []),
    ],
    body: {
      contentType: "application/json",
      schema: obj(
        {
          title: { type: "string", maxLength: 80 },
          body: { type: "string", maxLength: 400 },
          ...(ifMatch ? {} : { version: INT }),
        },
        [...(row.knobs.method === "PUT" ? ["title"] : []), ...(ifMatch ? [] : ["version"])],
      ),
      required: true,
    },
    responses: {
      "200": json(`the ${place.singular}, its version one higher`, answerSchema(table)),
      "400": err("a field is missing or out of range"),
      "404": err("no such record of the caller's"),
      [String(stale)]: err("the record changed since the copy this change was made from"),
      ...(ifMatch ? { "428": err("If-Match is required") } : {}),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      row.knobs.method,
      path,
      `${lookup.node}
${sent.node}
${fields.node}
if (typeof title !== "string" || title.length === 0 || title.length > 80 || typeof text !== "string" || text.length > 400) {
  return reply.code(400).send({ error: "title (1 to 80 characters) and body (at most 400) are strings" });
}
const changed = (await db.run("${sql}", [title, text, row.id${vulnerable ? "" : ", expected"}])).changes;
if (changed === 0) return reply.code(${stale}).send({ error: "changed since your copy" });
row = await db.get("${reread}", [row.id]);
${ifMatch ? 'reply.header("ETag", `"v${row.version}"`);\n' : ""}return row;`,
    ),
    python: pyRoute(
      row.knobs.method,
      path,
      `user = require_user()
${lookup.python}
${sent.python}
${fields.python}
if not isinstance(title, str) or not 0 < len(title) <= 80 or not isinstance(text, str) or len(text) > 400:
    return jsonify(error="title (1 to 80 characters) and body (at most 400) are strings"), 400
changed = db.run("${sql}", (title, text, row["id"]${vulnerable ? "" : ", expected"}))
if changed == 0:
    return jsonify(error="changed since your copy"), ${stale}
row = db.get("${reread}", (row["id"],))
answer = jsonify(row)
${ifMatch ? 'answer.headers["ETag"] = f\'"v{row["version"]}"\'\n' : ""}return answer`,
    ),
  };
  return {
    endpoint,
    support,
    tables: [tableDdl(table)],
    title: vulnerable
      ? `Lost update: ${row.knobs.method} accepts a change made from a stale ${ifMatch ? "ETag" : "version"} and overwrites the newer one`
      : `${row.knobs.method} refuses a stale ${ifMatch ? "If-Match" : "version"} with ${stale}`,
    ...(vulnerable
      ? {}
      : { why: "the UPDATE's WHERE carries the version the client read; a stale copy matches no row" }),
    oracle: async (client) => {
      const created = await createOwn(client, "alice", place.base, { title: "first", body: "draft" });
      const item = `${place.base}/${String(created.id)}`;
      const copy = await readOwn(client, "alice", place.base, created.id);
      const token = (version: unknown) =>
        ifMatch ? { headers: { "if-match": `"v${String(version)}"` } } : { json: { version } };
      const edit = (title: string) => ({
        as: "alice" as const,
        method: row.knobs.method,
        path: item,
        ...(ifMatch
          ? { ...token(copy.version), json: { title, body: "edited" } }
          : { json: { title, body: "edited", version: copy.version } }),
      });
      const first = await client.ask(edit("by editor one"));
      if (first.status !== 200) throw new Error(`first edit failed: ${brief(first)}`);
      const second = await client.ask(edit("by editor two"));
      const after = await readOwn(client, "alice", place.base, created.id);
      return verdict(
        second.status === 200 && after.title === "by editor two",
        `second edit from version ${String(copy.version)}: ${second.status}; title now ${String(after.title)}`,
      );
    },
  };
}
