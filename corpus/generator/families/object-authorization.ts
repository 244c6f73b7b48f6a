import type { Row } from "../../model/row.ts";
import { brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint, Method } from "../endpoint.ts";
import { err, guarded, json, obj } from "../schemas.ts";
import { createAs, type IdStyle, ownedCollection, ownRecord, recordShape } from "./records.ts";

// Broken object-level authorization (OWASP API1, CWE-639): an operation finds a record by the id it is
// given and forgets to ask whose it is. Reads, updates, deletes and actions; the id in the path, the
// query or the body; sequential or random ids; and nested routes where either the parent is not checked
// against the caller or the child is not checked against the parent. Safe twins scope every lookup.

export interface ObjectAuthorizationKnobs {
  op: "read" | "update" | "delete" | "action";
  idIn: "path" | "query" | "body";
  ids: IdStyle;
  /** parent-unchecked: /orgs/{org}/… never compares {org} with the caller's; child-mismatch: checks the
   * caller's org but not that the record belongs to it. */
  nested?: "parent-unchecked" | "child-mismatch";
}

export function buildObjectAuthorization(row: Row<ObjectAuthorizationKnobs>, ctx: BuildContext): Built {
  const { op, idIn, ids, nested } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const shape = recordShape(ids);
  const { ph } = ctx;
  const kind = JSON.stringify(ctx.place.kind);
  const base = nested
    ? `${ctx.place.base.replace(/\/[^/]+$/, "")}/orgs/{org}/${ctx.place.plural}`
    : ctx.place.base;
  const support = ownedCollection(ctx, shape, base, nested ? "org" : "owner");

  const { method, path, summary } = operationOf(op, idIn, base, ctx.place.singular);
  const readId = {
    path: { node: 'String(request.params["id"])', python: "str(id)" },
    query: { node: 'String(request.query["id"] ?? "")', python: 'request.args.get("id", "")' },
    body: {
      node: 'String((request.body ?? {}).id ?? "")',
      python: 'str((request.get_json(silent=True) or {}).get("id", ""))',
    },
  }[idIn];

  // The lookup's WHERE clause and parameters; the safe form adds the scope the vulnerable one forgets.
  const cast =
    ids === "sequential" ? { node: "Number(id)", python: "int(id)" } : { node: "id", python: "id" };
  let where: string;
  let nodeParams: string;
  let pyParams: string;
  let nodeGuard = "";
  let pyGuard = "";
  if (!nested) {
    where = `kind = ${ph(1)} AND ${shape.idColumn} = ${ph(2)}${vulnerable ? "" : ` AND owner_id = ${ph(3)}`}`;
    nodeParams = `[${kind}, ${cast.node}${vulnerable ? "" : ", user.id"}]`;
    pyParams = `(${kind}, ${cast.python}${vulnerable ? "" : ', user["id"]'})`;
  } else {
    const checksParent = !vulnerable || nested === "child-mismatch";
    const checksChild = !vulnerable || nested === "parent-unchecked";
    if (checksParent) {
      nodeGuard =
        'if (String(user.org_id) !== String(request.params["org"])) return reply.code(404).send({ error: "not found" });\n';
      pyGuard = 'if str(user["org_id"]) != str(org):\n    return jsonify(error="not found"), 404\n';
    }
    where = `kind = ${ph(1)} AND ${shape.idColumn} = ${ph(2)}${checksChild ? ` AND org_id = ${ph(3)}` : ""}`;
    nodeParams = `[${kind}, ${cast.node}${checksChild ? ', Number(request.params["org"]) || 0' : ""}]`;
    pyParams = `(${kind}, ${cast.python}${checksChild ? ', int(org) if re.fullmatch(r"[0-9]{1,9}", org) else 0' : ""})`;
  }

  const effect = {
    read: {
      node: "return row;",
      python: "return jsonify(row)",
    },
    update: {
      node: `const title = (request.body ?? {}).title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) {
  return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
}
const updated = await db.get("UPDATE records SET title = ${ph(1)} WHERE kind = ${ph(2)} AND ${shape.idColumn} = ${ph(3)} RETURNING ${shape.columns}", [title, ${kind}, ${cast.node}]);
return updated;`,
      python: `title = (request.get_json(silent=True) or {}).get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
updated = db.get("UPDATE records SET title = ${ph(1)} WHERE kind = ${ph(2)} AND ${shape.idColumn} = ${ph(3)} RETURNING ${shape.columns}", (title, ${kind}, ${cast.python}))
return jsonify(updated)`,
    },
    delete: {
      node: `await db.run("DELETE FROM records WHERE kind = ${ph(1)} AND ${shape.idColumn} = ${ph(2)}", [${kind}, ${cast.node}]);
return reply.code(204).send();`,
      python: `db.run("DELETE FROM records WHERE kind = ${ph(1)} AND ${shape.idColumn} = ${ph(2)}", (${kind}, ${cast.python}))
return "", 204`,
    },
    action: {
      node: `const archived = await db.get("UPDATE records SET status = 'archived' WHERE kind = ${ph(1)} AND ${shape.idColumn} = ${ph(2)} RETURNING ${shape.columns}", [${kind}, ${cast.node}]);
return archived;`,
      python: `archived = db.get("UPDATE records SET status = 'archived' WHERE kind = ${ph(1)} AND ${shape.idColumn} = ${ph(2)} RETURNING ${shape.columns}", (${kind}, ${cast.python}))
return jsonify(archived)`,
    },
  }[op];

  const pattern = shape.idPattern;
  const nodeBody = `const user = await requireUser(request, reply);
if (!user) return reply;
${nodeGuard}const id = ${readId.node};
if (!/${pattern}/.test(id)) return reply.code(404).send({ error: "not found" });
const row = await db.get("SELECT ${shape.columns} FROM records WHERE ${where}", ${nodeParams});
if (!row) return reply.code(404).send({ error: "not found" });
${effect.node}`;
  const pythonBody = `user = require_user()
${pyGuard}id = ${readId.python}
if not re.fullmatch(r"${pattern.slice(1, -1)}", id):
    return jsonify(error="not found"), 404
row = db.get("SELECT ${shape.columns} FROM records WHERE ${where}", ${pyParams})
if row is None:
    return jsonify(error="not found"), 404
${effect.python}`;

  const idParam =
    ids === "sequential" ? { type: "string", pattern: pattern } : { type: "string", format: "uuid" };
  const bodyProps: Record<string, object> = {
    ...(idIn === "body" ? { id: idParam } : {}),
    ...(op === "update" ? { title: { type: "string", maxLength: 80 } } : {}),
  };
  const endpoint: Endpoint = {
    method,
    path,
    summary,
    access: "user",
    parameters: [
      ...(nested ? [{ name: "org", in: "path" as const, required: true, schema: { type: "string" } }] : []),
      ...(idIn === "path" ? [{ name: "id", in: "path" as const, required: true, schema: idParam }] : []),
      ...(idIn === "query" ? [{ name: "id", in: "query" as const, required: true, schema: idParam }] : []),
    ],
    ...(Object.keys(bodyProps).length > 0
      ? {
          body: {
            contentType: "application/json",
            schema: obj(bodyProps as Record<string, never>),
            required: true,
          },
        }
      : {}),
    responses: {
      ...(op === "delete"
        ? { "204": { description: "deleted" } }
        : { "200": json(`the ${ctx.place.singular}`, shape.schema) }),
      ...(op === "update" ? { "400": err("title missing or too long") } : {}),
      "404": err(`no such ${ctx.place.singular} of the caller's`),
      ...guarded("user"),
    },
    node: nodeRoute(method, path, nodeBody),
    python: pyRoute(method, path, pythonBody),
  };

  const opWords = { read: "read", update: "update", delete: "delete", action: "archive" }[op];
  const context = `${opWords} by ${ids} id in the ${idIn}${nested ? ` under /orgs/{org} (${nested === "parent-unchecked" ? "org not compared with the caller's" : "record not compared with the org"})` : ""}`;
  return {
    endpoint,
    support,
    records: [{ kind: ctx.place.kind, title: capitalise(ctx.place.singular) }],
    title: vulnerable
      ? `Any signed-in user can ${context} of another user's ${ctx.place.singular}`
      : `${capitalise(ctx.place.singular)} ${context} takes an id from the client`,
    ...(vulnerable
      ? {}
      : {
          why: nested
            ? "the lookup is scoped to the caller's org and the record to that org"
            : "the lookup is scoped to the caller (owner_id)",
        }),
    oracle: (client) => oracle(client, { op, idIn, nested, method, path, base }),
  };
}

function operationOf(
  op: ObjectAuthorizationKnobs["op"],
  idIn: ObjectAuthorizationKnobs["idIn"],
  base: string,
  singular: string,
) {
  const table: Record<string, { method: Method; path: string; summary: string }> = {
    "read/path": { method: "GET", path: `${base}/{id}`, summary: `Read a ${singular}` },
    "read/query": { method: "GET", path: `${base}/detail`, summary: `Read a ${singular} by id` },
    "read/body": { method: "POST", path: `${base}/lookup`, summary: `Look a ${singular} up by id` },
    "update/path": { method: "PATCH", path: `${base}/{id}`, summary: `Rename a ${singular}` },
    "update/query": { method: "POST", path: `${base}/rename`, summary: `Rename a ${singular} by id` },
    "update/body": {
      method: "PUT",
      path: `${base}/current`,
      summary: `Rename the ${singular} named in the body`,
    },
    "delete/path": { method: "DELETE", path: `${base}/{id}`, summary: `Delete a ${singular}` },
    "delete/query": { method: "DELETE", path: base, summary: `Delete a ${singular} by id` },
    "delete/body": {
      method: "POST",
      path: `${base}/remove`,
      summary: `Delete the ${singular} named in the body`,
    },
    "action/path": { method: "POST", path: `${base}/{id}/archive`, summary: `Archive a ${singular}` },
    "action/query": { method: "POST", path: `${base}/archive`, summary: `Archive a ${singular} by id` },
    "action/body": {
      method: "POST",
      path: `${base}/archival`,
      summary: `Archive the ${singular} named in the body`,
    },
  };
  return table[`${op}/${idIn}`]!;
}

interface OracleInput {
  op: ObjectAuthorizationKnobs["op"];
  idIn: ObjectAuthorizationKnobs["idIn"];
  nested: ObjectAuthorizationKnobs["nested"];
  method: Method;
  path: string;
  base: string;
}

/** Alice creates a record; Bruno (another member, another org) tries the operation on it. */
async function oracle(client: OracleClient, input: OracleInput) {
  const aliceBase = input.base.replace("{org}", "1");
  const title = `own-${Math.random().toString(36).slice(2, 8)}`;
  const id = await createAs(client, "alice", aliceBase, title);
  const attempts = input.nested ? ["1", "2"] : [""];
  const seen: string[] = [];
  for (const org of attempts) {
    const path = input.path.replace("{org}", org).replace("{id}", encodeURIComponent(id));
    const answer = await client.ask({
      as: "bruno",
      method: input.method,
      path,
      ...(input.idIn === "query" ? { query: { id } } : {}),
      ...(input.idIn === "body" || input.op === "update"
        ? {
            json: {
              ...(input.idIn === "body" ? { id } : {}),
              ...(input.op === "update" ? { title: "taken-over" } : {}),
            },
          }
        : {}),
    });
    seen.push(brief(answer));
    const after = await ownRecord(client, "alice", aliceBase, id);
    const leaked = input.op === "read" && answer.status === 200 && answer.text.includes(title);
    const changed =
      (input.op === "update" && after?.title === "taken-over") ||
      (input.op === "delete" && after === undefined) ||
      (input.op === "action" && after?.status === "archived");
    if (leaked || changed) return verdict(true, `bruno's ${input.method} ${path} → ${brief(answer)}`);
  }
  return verdict(false, `bruno was refused: ${seen.join(" | ")}`);
}

function capitalise(word: string): string {
  return word[0]!.toUpperCase() + word.slice(1);
}
