import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Endpoint, JsonSchema } from "../endpoint.ts";
import { err, guarded, json } from "../schemas.ts";

// The read of one record of the caller's own, from a variant's own table: the supporting read the data
// families' trials come back to after each write.

export function ownedReadEndpoint(
  ctx: BuildContext,
  spec: { table: string; fields: string; item: string; resource: JsonSchema },
): Endpoint {
  const { ph, place } = ctx;
  const sql = `SELECT ${spec.fields} FROM ${spec.table} WHERE id = ${ph(1)} AND owner_id = ${ph(2)}`;
  return {
    method: "GET",
    path: spec.item,
    summary: `One of my ${place.plural}`,
    access: "user",
    responses: {
      "200": json(`the ${place.singular}`, spec.resource),
      "404": err("no such record of yours"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      spec.item,
      `const id = Number(request.params["id"]);
if (!Number.isInteger(id)) return reply.code(404).send({ error: "not found" });
const row = await db.get("${sql}", [id, user.id]);
if (!row) return reply.code(404).send({ error: "not found" });
return row;`,
    ),
    python: pyRoute(
      "GET",
      spec.item,
      `user = require_user()
if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
row = db.get("${sql}", (int(id), user["id"]))
if not row:
    return jsonify(error="not found"), 404
return jsonify(row)`,
    ),
  };
}
