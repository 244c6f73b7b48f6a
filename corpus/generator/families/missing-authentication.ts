import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, PRODUCT, STR } from "../schemas.ts";
import { createOwn, type OwnedTable, ownedResource, tableDdl } from "./owned-table.ts";

// Missing authentication (CWE-306, OWASP API2): an operation the document marks as needing credentials (or,
// with no document, one beside others that need them) answers anyone: a list of private records, a write,
// one person's profile, a CSV export of every record whose own read asks for credentials. Safe look-alikes:
// an operation documented as public that serves public data, and the same private operation with its check
// in place.

export interface MissingAuthenticationKnobs {
  data: "private-list" | "write" | "profile" | "export";
  /** Safe rows: `public` serves public data and says so; `enforced` checks the caller. */
  safeStyle?: "public" | "enforced";
}

export function buildMissingAuthentication(row: Row<MissingAuthenticationKnobs>, ctx: BuildContext): Built {
  const { data, safeStyle = "enforced" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const check = vulnerable
    ? { node: "", python: "" }
    : {
        node: "const user = await requireUser(request, reply);\nif (!user) return reply;\n",
        python: "require_user()\n",
      };
  const publicData = !vulnerable && safeStyle === "public";
  let endpoint: Endpoint;
  let exportTable: OwnedTable | undefined;

  if (publicData) {
    const path = `${place.base}/catalogue`;
    endpoint = {
      method: "GET",
      path,
      summary: "The public product catalogue",
      description: "Public on purpose: the shop's landing page shows it before sign-in.",
      access: "public",
      responses: { "200": json("products on sale", listOf(PRODUCT)) },
      node: nodeRoute(
        "GET",
        path,
        'return { items: await db.all("SELECT id, sku, name, price FROM products ORDER BY id") };',
      ),
      python: pyRoute(
        "GET",
        path,
        'return jsonify(items=db.all("SELECT id, sku, name, price FROM products ORDER BY id"))',
      ),
    };
  } else if (data === "private-list") {
    const path = `${place.base}/all`;
    const schema = obj({ id: INT, title: STR, body: STR, owner_id: INT });
    endpoint = {
      method: "GET",
      path,
      summary: `Every ${place.singular} with its private note`,
      access: "user",
      responses: { "200": json("the notes", listOf(schema)), ...guarded("user") },
      node: nodeRoute(
        "GET",
        path,
        `${check.node}return { items: await db.all("SELECT id, title, body, owner_id FROM records WHERE kind = ${ph(1)} ORDER BY id", [${kind}]) };`,
      ),
      python: pyRoute(
        "GET",
        path,
        `${check.python}return jsonify(items=db.all("SELECT id, title, body, owner_id FROM records WHERE kind = ${ph(1)} ORDER BY id", (${kind},)))`,
      ),
    };
  } else if (data === "export") {
    // Records users create through the variant's own create, each readable by its owner alone; the export
    // serves them all as CSV (safe: the caller's own, to a signed-in caller only).
    exportTable = {
      name: place.slug,
      columns: [{ name: "address", ddl: "TEXT NOT NULL DEFAULT ''", schema: STR }],
    };
    // Beside the collection, not under it, where the item read `{id}` would stand for it too.
    const path = `${place.base}-export`;
    const select = vulnerable
      ? `SELECT id, owner_id, title, address FROM ${place.slug} ORDER BY id`
      : `SELECT id, owner_id, title, address FROM ${place.slug} WHERE owner_id = ${ph(1)} ORDER BY id`;
    const header = '"id,owner_id,title,address"';
    endpoint = {
      method: "GET",
      path,
      summary: `Download every ${place.singular} as CSV`,
      access: "user",
      responses: {
        "200": { description: `the ${place.plural}, one per line`, contentType: "text/csv", schema: STR },
        ...guarded("user"),
      },
      node: nodeRoute(
        "GET",
        path,
        `${check.node}const rows = await db.all("${select}"${vulnerable ? "" : ", [user.id]"});
const lines = [${header}, ...rows.map((row) => [row.id, row.owner_id, row.title, row.address].join(","))];
return reply.type("text/csv; charset=utf-8").send(lines.join("\\n") + "\\n");`,
      ),
      python: pyRoute(
        "GET",
        path,
        `${vulnerable ? "" : "user = require_user()\n"}rows = db.all("${select}"${vulnerable ? "" : ', (user["id"],)'})
lines = [${header}] + [",".join(str(row[key]) for key in ("id", "owner_id", "title", "address")) for row in rows]
return "\\n".join(lines) + "\\n", 200, {"Content-Type": "text/csv; charset=utf-8"}`,
      ),
    };
  } else if (data === "profile") {
    const path = `${place.base}/people/{id}`;
    const schema = obj({ id: INT, email: STR, name: STR, role: STR });
    endpoint = {
      method: "GET",
      path,
      summary: "One person's profile",
      access: "user",
      parameters: [{ name: "id", in: "path", required: true, schema: STR }],
      responses: { "200": json("the profile", schema), "404": err("no such person"), ...guarded("user") },
      node: nodeRoute(
        "GET",
        path,
        `${check.node}const id = String(request.params["id"]);
if (!/^[0-9]{1,9}$/.test(id)) return reply.code(404).send({ error: "not found" });
const person = await db.get("SELECT id, email, name, role FROM users WHERE id = ${ph(1)}", [Number(id)]);
if (!person) return reply.code(404).send({ error: "not found" });
return person;`,
      ),
      python: pyRoute(
        "GET",
        path,
        `${check.python}if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
person = db.get("SELECT id, email, name, role FROM users WHERE id = ${ph(1)}", (int(id),))
if person is None:
    return jsonify(error="not found"), 404
return jsonify(person)`,
      ),
    };
  } else {
    const path = `${place.base}/notes`;
    const schema = obj({ id: INT, title: STR });
    endpoint = {
      method: "POST",
      path,
      summary: `File a ${place.singular} note`,
      access: "user",
      body: {
        contentType: "application/json",
        schema: obj({ title: { type: "string", maxLength: 80 } }),
        required: true,
      },
      responses: {
        "201": json("filed", schema),
        "400": err("title missing or too long"),
        ...guarded("user"),
      },
      node: nodeRoute(
        "POST",
        path,
        `${check.node}const title = (request.body ?? {}).title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
const row = await db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")}) RETURNING id, title", [crypto.randomUUID(), ${kind}, ${vulnerable ? "0" : "user.id"}, ${vulnerable ? "0" : "user.org_id"}, title, new Date().toISOString()]);
return reply.code(201).send(row);`,
      ),
      python: pyRoute(
        "POST",
        path,
        `${vulnerable ? "" : "user = require_user()\n"}title = (request.get_json(silent=True) or {}).get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
row = db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")}) RETURNING id, title", (str(uuid.uuid4()), ${kind}, ${vulnerable ? "0" : 'user["id"]'}, ${vulnerable ? "0" : 'user["org_id"]'}, title, datetime.utcnow().isoformat()))
return jsonify(row), 201`,
      ),
    };
  }

  const words = {
    "private-list": `every ${place.singular}'s private note`,
    profile: "any person's email and role",
    write: `filing ${place.singular} notes`,
    export: `every user's ${place.plural} as CSV`,
  }[data];
  const method = endpoint.method;
  const path = endpoint.path;
  return {
    endpoint,
    ...(exportTable
      ? {
          support: ownedResource(ctx, exportTable, {
            body: { address: { type: "string" } },
            required: ["address"],
            validate: {
              node: `if (typeof body.address !== "string") return reply.code(400).send({ error: "address is required" });`,
              python: `if not isinstance(body.get("address"), str):
    return jsonify(error="address is required"), 400`,
            },
            insert: [
              {
                column: "address",
                node: 'String(body.address ?? "")',
                python: 'str(body.get("address", ""))',
              },
            ],
          }),
          tables: [tableDdl(exportTable)],
        }
      : {}),
    records: [{ kind: place.kind, title: "Confidential" }],
    title: vulnerable
      ? `${capitalise(words)} ${data === "write" ? "is open" : "is served"} without credentials`
      : publicData
        ? "The product catalogue answers without credentials"
        : `${capitalise(words)} needs credentials`,
    ...(vulnerable
      ? {}
      : {
          why: publicData
            ? "public data, documented as public (security: [])"
            : "the handler requires a signed-in user and answers 401 without one",
        }),
    oracle: async (client) => {
      if (data === "export") {
        const marker = `oracle-${Date.now().toString(36)}`;
        await createOwn(client, "alice", place.base, { title: marker, address: "1 Private Lane" });
        const answer = await client.ask({ path });
        return verdict(answer.status < 300 && answer.text.includes(marker), `anonymous → ${brief(answer)}`);
      }
      const answer = await client.ask({
        method,
        path: path.replace("{id}", "1"),
        ...(method === "POST" ? { json: { title: "anonymous" } } : {}),
      });
      const exposed =
        answer.status < 300 &&
        (method === "POST" || answer.text.includes("private note") || answer.text.includes("@corpus.test"));
      return verdict(exposed, `anonymous → ${brief(answer)}`);
    },
  };
}

function capitalise(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}
