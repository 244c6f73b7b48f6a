import type { Row } from "../../model/row.ts";
import { brief, itemsOf, marker, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, STR } from "../schemas.ts";
import { REFUSED } from "./data-uniqueness.ts";
import { ownedReadEndpoint } from "./owned-read.ts";

// Orphans after a delete (CWE-1173 on referential integrity; PostgreSQL and SQLite document FOREIGN KEY
// … ON DELETE CASCADE / RESTRICT): a parent resource with child rows added through the API. The child
// handler checks that the parent exists and is the caller's, so no orphan can be created directly; the
// parent's DELETE removes only the parent, and with no foreign key the children stay behind, still
// listed under an id that names nothing. The safe twins declare the key: CASCADE removes the children
// with the parent, RESTRICT refuses the delete (answered 409).

export interface OrphanKnobs {
  /** The child rows' noun: what a parent holds. */
  child: "lines" | "notes" | "attachments";
  /** Safe twins: the declared key's action. Vulnerable rows ignore it. */
  onDelete?: "cascade" | "restrict";
}

export function buildOrphanOnDelete(row: Row<OrphanKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { child, onDelete = "cascade" } = row.knobs;
  const { ph, place } = ctx;
  const parent = place.slug;
  const children = `${place.group}_${place.singular}_${child}`;
  const key = `${place.singular}_id`;
  const base = place.base;
  const item = `${base}/{id}`;
  const childPath = `${item}/${child}`;
  const reference = vulnerable
    ? `${key} INTEGER NOT NULL`
    : `${key} INTEGER NOT NULL REFERENCES ${parent} (id) ON DELETE ${onDelete.toUpperCase()}`;
  const tables = [
    {
      name: parent,
      ddl: `CREATE TABLE ${parent} (id {key}, owner_id INTEGER NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL);`,
    },
    {
      name: children,
      ddl: `CREATE TABLE ${children} (id {key}, ${reference}, owner_id INTEGER NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL);\nCREATE INDEX ${children}_parent ON ${children} (${key});`,
    },
  ];
  const parentSchema = obj({ id: INT, title: STR, owner_id: INT });
  const childSchema = obj({ id: INT, [key]: INT, body: STR });
  const idGuard = {
    node: `const id = Number(request.params["id"]);
if (!Number.isInteger(id)) return reply.code(404).send({ error: "not found" });`,
    python: `if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404`,
  };
  const create: Endpoint = {
    method: "POST",
    path: base,
    summary: `Create a ${place.singular}`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ title: { type: "string", maxLength: 80 } }),
      required: true,
    },
    responses: {
      "201": json(`the new ${place.singular}`, parentSchema),
      "400": err("title missing"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      base,
      `const title = (request.body ?? {}).title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) return reply.code(400).send({ error: "title is required (at most 80 characters)" });
const row = await db.get("INSERT INTO ${parent} (owner_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}) RETURNING id, title, owner_id", [user.id, title, new Date().toISOString()]);
return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      base,
      `user = require_user()
title = (request.get_json(silent=True) or {}).get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title is required (at most 80 characters)"), 400
row = db.get("INSERT INTO ${parent} (owner_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}) RETURNING id, title, owner_id", (user["id"], title, datetime.utcnow().isoformat()))
return jsonify(row), 201`,
    ),
  };
  const read = ownedReadEndpoint(ctx, {
    table: parent,
    fields: "id, title, owner_id",
    item,
    resource: parentSchema,
  });
  const addChild: Endpoint = {
    method: "POST",
    path: childPath,
    summary: `Add to a ${place.singular}'s ${child}`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ body: { type: "string", maxLength: 200 } }),
      required: true,
    },
    responses: {
      "201": json("the new entry", childSchema),
      "400": err("body missing"),
      "404": err("no such record of yours"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      childPath,
      `${idGuard.node}
const text = (request.body ?? {}).body;
if (typeof text !== "string" || text.length === 0 || text.length > 200) return reply.code(400).send({ error: "body is required (at most 200 characters)" });
const owner = await db.get("SELECT id FROM ${parent} WHERE id = ${ph(1)} AND owner_id = ${ph(2)}", [id, user.id]);
if (!owner) return reply.code(404).send({ error: "not found" });
const row = await db.get("INSERT INTO ${children} (${key}, owner_id, body, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}) RETURNING id, ${key}, body", [id, user.id, text, new Date().toISOString()]);
return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      childPath,
      `user = require_user()
${idGuard.python}
text = (request.get_json(silent=True) or {}).get("body")
if not isinstance(text, str) or not 0 < len(text) <= 200:
    return jsonify(error="body is required (at most 200 characters)"), 400
if not db.get("SELECT id FROM ${parent} WHERE id = ${ph(1)} AND owner_id = ${ph(2)}", (int(id), user["id"])):
    return jsonify(error="not found"), 404
row = db.get("INSERT INTO ${children} (${key}, owner_id, body, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}) RETURNING id, ${key}, body", (int(id), user["id"], text, datetime.utcnow().isoformat()))
return jsonify(row), 201`,
    ),
  };
  // The children are listed by their own owner column, so a caller still sees entries whose parent is gone.
  const listChildren: Endpoint = {
    method: "GET",
    path: childPath,
    summary: `A ${place.singular}'s ${child}`,
    access: "user",
    responses: { "200": json(`the ${child}`, listOf(childSchema)), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      childPath,
      `${idGuard.node}
return { items: await db.all("SELECT id, ${key}, body FROM ${children} WHERE ${key} = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", [id, user.id]) };`,
    ),
    python: pyRoute(
      "GET",
      childPath,
      `user = require_user()
${idGuard.python}
return jsonify(items=db.all("SELECT id, ${key}, body FROM ${children} WHERE ${key} = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", (int(id), user["id"])))`,
    ),
  };
  const remove: Endpoint = {
    method: "DELETE",
    path: item,
    summary: `Delete a ${place.singular}`,
    access: "user",
    responses: {
      "204": { description: "deleted" },
      "404": err("no such record of yours"),
      "409": err(`the ${place.singular} still has ${child}`),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "DELETE",
      item,
      `${idGuard.node}
try {
  const result = await db.run("DELETE FROM ${parent} WHERE id = ${ph(1)} AND owner_id = ${ph(2)}", [id, user.id]);
  if (result.changes === 0) return reply.code(404).send({ error: "not found" });
} catch (error) {
  if (${REFUSED.node("foreign key")}) return reply.code(409).send({ error: "it still has ${child}" });
  throw error;
}
return reply.code(204).send();`,
    ),
    python: pyRoute(
      "DELETE",
      item,
      `user = require_user()
${idGuard.python}
try:
    changed = db.run("DELETE FROM ${parent} WHERE id = ${ph(1)} AND owner_id = ${ph(2)}", (int(id), user["id"]))
except Exception as error:
    if ${REFUSED.python("foreign key")}:
        return jsonify(error="it still has ${child}"), 409
    raise
if changed == 0:
    return jsonify(error="not found"), 404
return "", 204`,
    ),
  };
  const list: Endpoint = {
    method: "GET",
    path: base,
    summary: `List my ${place.plural}`,
    access: "user",
    responses: { "200": json(`my ${place.plural}`, listOf(parentSchema)), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      base,
      `return { items: await db.all("SELECT id, title, owner_id FROM ${parent} WHERE owner_id = ${ph(1)} ORDER BY id", [user.id]) };`,
    ),
    python: pyRoute(
      "GET",
      base,
      `user = require_user()
return jsonify(items=db.all("SELECT id, title, owner_id FROM ${parent} WHERE owner_id = ${ph(1)} ORDER BY id", (user["id"],)))`,
    ),
  };
  return {
    endpoint: remove,
    support: [create, list, read, addChild, listChildren],
    tables,
    dataPlaces: [children],
    title: vulnerable
      ? `${children}.${key} has no foreign key: deleting a ${place.singular} leaves its ${child} behind as orphans`
      : `${children}.${key} references ${parent} (ON DELETE ${onDelete.toUpperCase()})`,
    ...(vulnerable
      ? {}
      : {
          why:
            onDelete === "cascade"
              ? `the foreign key removes the ${child} with their ${place.singular}`
              : `the foreign key refuses the delete while ${child} remain (answered 409)`,
        }),
    oracle: async (client) => {
      const made = await client.ask({
        as: "alice",
        method: "POST",
        path: base,
        json: { title: marker("par") },
      });
      if (made.status !== 201) throw new Error(`create: ${brief(made)}`);
      const id = (made.json as { id: number }).id;
      const added = await client.ask({
        as: "alice",
        method: "POST",
        path: `${base}/${id}/${child}`,
        json: { body: "kept" },
      });
      if (added.status !== 201) throw new Error(`add child: ${brief(added)}`);
      const removed = await client.ask({ as: "alice", method: "DELETE", path: `${base}/${id}` });
      const parentNow = await client.ask({ as: "alice", path: `${base}/${id}` });
      const left = itemsOf(await client.ask({ as: "alice", path: `${base}/${id}/${child}` }));
      return verdict(
        parentNow.status === 404 && left.length > 0,
        `delete → ${brief(removed)}; parent now ${parentNow.status}; ${left.length} ${child} left`,
      );
    },
  };
}
