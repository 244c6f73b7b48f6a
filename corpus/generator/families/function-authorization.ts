import type { Row } from "../../model/row.ts";
import { brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { BOOL, err, guarded, INT, json, listOf, obj, RECORD, STR } from "../schemas.ts";
import { createAs, ownedCollection, ownRecord, recordShape } from "./records.ts";

// Broken function-level authorization (OWASP API5, CWE-285): an operation meant for administrators checks
// that the caller is signed in and stops there. The intent shows in the path (`/admin/`) or only in the
// document (`x-required-role: admin`). Safe twins check the role.

export interface FunctionAuthorizationKnobs {
  op: "directory" | "approve" | "settings" | "export";
  /** Where a reader learns the operation is for administrators. */
  signal: "path" | "doc";
}

export function buildFunctionAuthorization(row: Row<FunctionAuthorizationKnobs>, ctx: BuildContext): Built {
  const { op, signal } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const prefix = place.base.slice(0, place.base.length - `/${place.group}/${place.plural}`.length);
  const root = signal === "path" ? `${prefix}/admin/${place.group}/${place.plural}` : place.base;
  const who = vulnerable
    ? { node: "const user = await requireUser(request, reply);", python: "user = require_user()" }
    : { node: "const user = await requireAdmin(request, reply);", python: "user = require_admin()" };
  const lead = { node: `${who.node}\nif (!user) return reply;\n`, python: `${who.python}\n` };
  const shape = recordShape("sequential");
  let endpoint: Endpoint;
  let support: Endpoint[] | undefined;
  let top: Built["top"];
  let oracle: (client: OracleClient) => Promise<ReturnType<typeof verdict>>;

  switch (op) {
    case "directory": {
      const path = `${root}/people`;
      endpoint = {
        method: "GET",
        path,
        summary: "Every account with its role",
        access: "admin",
        responses: {
          "200": json(
            "all accounts",
            listOf(obj({ id: INT, email: STR, name: STR, role: STR, org_id: INT })),
          ),
          ...guarded("admin"),
        },
        node: nodeRoute(
          "GET",
          path,
          `${lead.node}return { items: await db.all("SELECT id, email, name, role, org_id FROM users ORDER BY id") };`,
        ),
        python: pyRoute(
          "GET",
          path,
          `${lead.python}return jsonify(items=db.all("SELECT id, email, name, role, org_id FROM users ORDER BY id"))`,
        ),
      };
      oracle = async (client) => {
        const answer = await client.ask({ as: "alice", path });
        return verdict(
          answer.status === 200 && answer.text.includes("bruno@corpus.test"),
          `member → ${brief(answer)}`,
        );
      };
      break;
    }
    case "export": {
      const path = `${root}/export`;
      endpoint = {
        method: "GET",
        path,
        summary: `Export every ${place.singular} of every org`,
        access: "admin",
        responses: {
          "200": json("all records", listOf(obj({ ...(RECORD.properties as object), org_id: INT }))),
          ...guarded("admin"),
        },
        node: nodeRoute(
          "GET",
          path,
          `${lead.node}return { items: await db.all("SELECT id, uid, title, status, owner_id, org_id FROM records WHERE kind = ${ph(1)} ORDER BY id", [${kind}]) };`,
        ),
        python: pyRoute(
          "GET",
          path,
          `${lead.python}return jsonify(items=db.all("SELECT id, uid, title, status, owner_id, org_id FROM records WHERE kind = ${ph(1)} ORDER BY id", (${kind},)))`,
        ),
      };
      oracle = async (client) => {
        const answer = await client.ask({ as: "alice", path });
        return verdict(
          answer.status === 200 && answer.text.includes('"org_id"'),
          `member → ${brief(answer)}`,
        );
      };
      break;
    }
    case "approve": {
      const path = `${root}/{id}/approve`;
      const collection = signal === "path" ? place.base : place.base;
      support = ownedCollection(ctx, shape, collection);
      endpoint = {
        method: "POST",
        path,
        summary: `Approve a ${place.singular}`,
        access: "admin",
        parameters: [{ name: "id", in: "path", required: true, schema: STR }],
        responses: {
          "200": json(`the approved ${place.singular}`, shape.schema),
          "404": err("no such record"),
          ...guarded("admin"),
        },
        node: nodeRoute(
          "POST",
          path,
          `${lead.node}const id = String(request.params["id"]);
if (!/^[0-9]{1,9}$/.test(id)) return reply.code(404).send({ error: "not found" });
const row = await db.get("UPDATE records SET status = 'approved' WHERE kind = ${ph(1)} AND id = ${ph(2)} RETURNING ${shape.columns}", [${kind}, Number(id)]);
if (!row) return reply.code(404).send({ error: "not found" });
return row;`,
        ),
        python: pyRoute(
          "POST",
          path,
          `${lead.python}if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
row = db.get("UPDATE records SET status = 'approved' WHERE kind = ${ph(1)} AND id = ${ph(2)} RETURNING ${shape.columns}", (${kind}, int(id)))
if row is None:
    return jsonify(error="not found"), 404
return jsonify(row)`,
        ),
      };
      oracle = async (client) => {
        const id = await createAs(client, "alice", collection, "needs approval");
        const answer = await client.ask({ as: "alice", method: "POST", path: path.replace("{id}", id) });
        const after = await ownRecord(client, "alice", collection, id);
        return verdict(after?.status === "approved", `member approves own → ${brief(answer)}`);
      };
      break;
    }
    case "settings": {
      const path = `${root}/settings`;
      const state = `SETTINGS_${place.slug.toUpperCase()}`;
      top = {
        node: `const ${state} = { maintenance: false, banner: "" };`,
        python: `${state} = {"maintenance": False, "banner": ""}`,
      };
      const schema = obj({ maintenance: BOOL, banner: { type: "string", maxLength: 120 } });
      endpoint = {
        method: "PUT",
        path,
        summary: "Change the site settings",
        access: "admin",
        body: { contentType: "application/json", schema, required: true },
        responses: {
          "200": json("the settings", schema),
          "400": err("invalid settings"),
          ...guarded("admin"),
        },
        node: nodeRoute(
          "PUT",
          path,
          `${lead.node}const body = request.body ?? {};
if (typeof body.maintenance !== "boolean" || typeof body.banner !== "string" || body.banner.length > 120) {
  return reply.code(400).send({ error: "maintenance must be a boolean and banner a string" });
}
${state}.maintenance = body.maintenance;
${state}.banner = body.banner;
return ${state};`,
        ),
        python: pyRoute(
          "PUT",
          path,
          `${lead.python}body = request.get_json(silent=True) or {}
if not isinstance(body.get("maintenance"), bool) or not isinstance(body.get("banner"), str) or len(body["banner"]) > 120:
    return jsonify(error="maintenance must be a boolean and banner a string"), 400
${state}["maintenance"] = body["maintenance"]
${state}["banner"] = body["banner"]
return jsonify(${state})`,
        ),
      };
      oracle = async (client) => {
        const marker = `note-${Math.random().toString(36).slice(2, 8)}`;
        const answer = await client.ask({
          as: "alice",
          method: "PUT",
          path,
          json: { maintenance: false, banner: marker },
        });
        return verdict(answer.status === 200 && answer.text.includes(marker), `member → ${brief(answer)}`);
      };
      break;
    }
  }

  const words = {
    directory: "list every account",
    export: `export every org's ${place.plural}`,
    approve: `approve ${place.plural}`,
    settings: "change the site settings",
  }[op];
  if (signal === "doc") endpoint.alwaysDocumented = true;
  return {
    endpoint,
    ...(support ? { support } : {}),
    ...(top ? { top } : {}),
    records: [{ kind: place.kind, title: "Filed" }],
    title: vulnerable
      ? `A member can ${words}, an administrators' operation (${signal === "path" ? "under /admin/" : "marked in the document"})`
      : `An administrators' operation to ${words} is reachable by members`,
    ...(vulnerable ? {} : { why: "the handler requires the admin role and answers 403 to members" }),
    oracle,
  };
}
