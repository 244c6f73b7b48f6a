import type { Row } from "../../model/row.ts";
import { brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";
import { createAs } from "./records.ts";

// Mass assignment (CWE-915, OWASP API3): the handler copies a body field the client must not control into
// the record: a membership's role, a record's owner, an order line's price. On create or on update. Safe
// twins either ignore the field or refuse it with 400.

export interface MassAssignmentKnobs {
  field: "role" | "owner" | "price";
  verb: "create" | "update";
  /** Safe rows: drop the field silently, or answer 400. */
  safeStyle?: "ignore" | "reject";
}

const COLUMNS = "id, title, role, owner_id, price, quantity";
const SCHEMA = obj({ id: INT, title: STR, role: STR, owner_id: INT, price: INT, quantity: INT });

export function buildMassAssignment(row: Row<MassAssignmentKnobs>, ctx: BuildContext): Built {
  const { field, verb, safeStyle = "ignore" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const bodyKey = { role: "role", owner: "owner_id", price: "price" }[field];

  // What the handler does with the protected field.
  const nodeTake = {
    role: 'const role = typeof body.role === "string" ? body.role : "viewer";',
    owner: "const ownerId = Number.isInteger(body.owner_id) ? body.owner_id : user.id;",
    price: "const price = Number.isInteger(body.price) ? body.price : product.price;",
  }[field];
  const pyTake = {
    role: 'role = body.get("role") if isinstance(body.get("role"), str) else "viewer"',
    owner: 'owner_id = body.get("owner_id") if isinstance(body.get("owner_id"), int) else user["id"]',
    price: 'price = body.get("price") if isinstance(body.get("price"), int) else product["price"]',
  }[field];
  const nodeDefault = {
    role: 'const role = "viewer";',
    owner: "const ownerId = user.id;",
    price: "const price = product.price;",
  }[field];
  const pyDefault = {
    role: 'role = "viewer"',
    owner: 'owner_id = user["id"]',
    price: 'price = product["price"]',
  }[field];
  const nodeReject = `if (${JSON.stringify(bodyKey)} in body) return reply.code(400).send({ error: "${bodyKey} is read-only" });\n`;
  const pyReject = `if ${JSON.stringify(bodyKey)} in body:\n    return jsonify(error="${bodyKey} is read-only"), 400\n`;
  const take = vulnerable
    ? { node: nodeTake, python: pyTake }
    : safeStyle === "reject"
      ? { node: nodeReject + nodeDefault, python: pyReject + pyDefault }
      : { node: nodeDefault, python: pyDefault };

  // Price lines look the product up by sku; the others carry a title.
  const product = field === "price";
  const nodeProduct = product
    ? `const product = await db.get("SELECT sku, price FROM products WHERE sku = ${ph(1)}", [String(body.sku ?? "")]);
if (!product) return reply.code(400).send({ error: "unknown sku" });
const quantity = Number.isInteger(body.quantity) && body.quantity > 0 && body.quantity <= 100 ? body.quantity : null;
if (quantity === null) return reply.code(400).send({ error: "quantity must be an integer from 1 to 100" });
`
    : `const title = body.title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
`;
  const pyProduct = product
    ? `product = db.get("SELECT sku, price FROM products WHERE sku = ${ph(1)}", (str(body.get("sku", "")),))
if product is None:
    return jsonify(error="unknown sku"), 400
quantity = body.get("quantity")
if not isinstance(quantity, int) or isinstance(quantity, bool) or not 0 < quantity <= 100:
    return jsonify(error="quantity must be an integer from 1 to 100"), 400
`
    : `title = body.get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
`;
  const values = {
    node: `[crypto.randomUUID(), ${kind}, ${field === "owner" ? "ownerId" : "user.id"}, user.org_id, ${product ? "product.sku" : "title"}, ${field === "role" ? "role" : '"viewer"'}, ${product ? "price" : "0"}, ${product ? "quantity" : "1"}, new Date().toISOString()]`,
    python: `(str(uuid.uuid4()), ${kind}, ${field === "owner" ? "owner_id" : 'user["id"]'}, user["org_id"], ${product ? 'product["sku"]' : "title"}, ${field === "role" ? "role" : '"viewer"'}, ${product ? "price" : "0"}, ${product ? "quantity" : "1"}, datetime.utcnow().isoformat())`,
  };
  const insert = `INSERT INTO records (uid, kind, owner_id, org_id, title, role, price, quantity, created_at) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(ph).join(", ")}) RETURNING ${COLUMNS}`;
  const inputSchema = product
    ? obj({ sku: STR, quantity: { type: "integer", minimum: 1, maximum: 100 } })
    : obj({ title: { type: "string", maxLength: 80 } });

  let endpoint: Endpoint;
  let support: Endpoint[] | undefined;
  const createPath = place.base;
  if (verb === "create") {
    endpoint = {
      method: "POST",
      path: createPath,
      summary: product ? `Add an order line for a product` : `Create a ${place.singular}`,
      access: "user",
      body: { contentType: "application/json", schema: inputSchema, required: true },
      responses: { "201": json("created", SCHEMA), "400": err("invalid input"), ...guarded("user") },
      node: nodeUserRoute(
        "POST",
        createPath,
        `const body = request.body ?? {};
${nodeProduct}${take.node}
const row = await db.get("${insert}", ${values.node});
return reply.code(201).send(row);`,
      ),
      python: pyRoute(
        "POST",
        createPath,
        `user = require_user()
body = request.get_json(silent=True) or {}
${pyProduct}${take.python}
row = db.get("${insert}", ${values.python})
return jsonify(row), 201`,
      ),
    };
  } else {
    // Update: the record is the caller's own (created through a correct collection); the body may carry
    // the protected field beside the title.
    const path = `${place.base}/{id}`;
    support = [correctCreate(ctx)];
    const assignments = { role: "role", owner: "owner_id", price: "price" }[field];
    const nodeValue = { role: "role", owner: "ownerId", price: "price" }[field];
    const pyValue = { role: "role", owner: "owner_id", price: "price" }[field];
    endpoint = {
      method: "PATCH",
      path,
      summary: `Edit one of my ${place.plural}`,
      access: "user",
      parameters: [{ name: "id", in: "path", required: true, schema: STR }],
      body: {
        contentType: "application/json",
        schema: obj({ title: { type: "string", maxLength: 80 } }, []),
        required: true,
      },
      responses: {
        "200": json("the edited record", SCHEMA),
        "400": err("invalid input"),
        "404": err("not one of the caller's"),
        ...guarded("user"),
      },
      node: nodeUserRoute(
        "PATCH",
        path,
        `const id = String(request.params["id"]);
if (!/^[0-9]{1,9}$/.test(id)) return reply.code(404).send({ error: "not found" });
const current = await db.get("SELECT ${COLUMNS} FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", [${kind}, Number(id), user.id]);
if (!current) return reply.code(404).send({ error: "not found" });
const body = request.body ?? {};
${field === "price" ? "const product = current;\n" : ""}${take.node}
if (body.title !== undefined && (typeof body.title !== "string" || body.title.length === 0 || body.title.length > 80)) {
  return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
}
const title = body.title ?? current.title;
const row = await db.get("UPDATE records SET title = ${ph(1)}, ${assignments} = ${ph(2)} WHERE id = ${ph(3)} RETURNING ${COLUMNS}", [title, ${nodeValue}, Number(id)]);
return row;`,
      ),
      python: pyRoute(
        "PATCH",
        path,
        `user = require_user()
if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
current = db.get("SELECT ${COLUMNS} FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", (${kind}, int(id), user["id"]))
if current is None:
    return jsonify(error="not found"), 404
body = request.get_json(silent=True) or {}
${field === "price" ? "product = current\n" : ""}${take.python}
if "title" in body and (not isinstance(body["title"], str) or not 0 < len(body["title"]) <= 80):
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
title = body.get("title", current["title"])
row = db.get("UPDATE records SET title = ${ph(1)}, ${assignments} = ${ph(2)} WHERE id = ${ph(3)} RETURNING ${COLUMNS}", (title, ${pyValue}, int(id)))
return jsonify(row)`,
      ),
    };
  }

  const words = { role: "its own role", owner: "the owner", price: "the price" }[field];
  return {
    endpoint,
    ...(support ? { support } : {}),
    records: [{ kind: place.kind, title: "Member" }],
    title: vulnerable
      ? `${verb === "create" ? "Creating" : "Editing"} a ${product ? "order line" : place.singular} lets the client set ${words} (${bodyKey})`
      : `${verb === "create" ? "Creating" : "Editing"} a ${product ? "order line" : place.singular} takes a body the client writes`,
    ...(vulnerable
      ? {}
      : {
          why: `${bodyKey} is ${safeStyle === "reject" ? "refused with 400" : "ignored"}; the server sets it`,
        }),
    oracle: (client) =>
      oracle(client, { field, verb, path: endpoint.path, createPath: support ? createPath : undefined }),
  };
}

/** The update variant's records come from a create that sets only the title. */
function correctCreate(ctx: BuildContext): Endpoint {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const insert = `INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")}) RETURNING ${COLUMNS}`;
  return {
    method: "POST",
    path: place.base,
    summary: `Create a ${place.singular}`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ title: { type: "string", maxLength: 80 } }),
      required: true,
    },
    responses: { "201": json("created", SCHEMA), "400": err("invalid input"), ...guarded("user") },
    node: nodeUserRoute(
      "POST",
      place.base,
      `const title = (request.body ?? {}).title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
const row = await db.get("${insert}", [crypto.randomUUID(), ${kind}, user.id, user.org_id, title, new Date().toISOString()]);
return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      place.base,
      `user = require_user()
title = (request.get_json(silent=True) or {}).get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
row = db.get("${insert}", (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], title, datetime.utcnow().isoformat()))
return jsonify(row), 201`,
    ),
  };
}

interface OracleInput {
  field: MassAssignmentKnobs["field"];
  verb: MassAssignmentKnobs["verb"];
  path: string;
  createPath: string | undefined;
}

/** Sends the protected field with a value the server would never choose and looks at what was stored. */
async function oracle(client: OracleClient, input: OracleInput) {
  const bruno = (await client.ask({ as: "bruno", path: "/api/me" })).json as { id: number };
  const forced = { role: { role: "owner" }, owner: { owner_id: bruno.id }, price: { price: 1 } }[input.field];
  const base = input.field === "price" ? { sku: "SKU-105", quantity: 2 } : { title: "assigned" };
  let answer: Awaited<ReturnType<OracleClient["ask"]>>;
  if (input.verb === "create") {
    answer = await client.ask({
      as: "alice",
      method: "POST",
      path: input.path,
      json: { ...base, ...forced },
    });
  } else {
    const id = await createAs(client, "alice", input.createPath!, "editable");
    answer = await client.ask({
      as: "alice",
      method: "PATCH",
      path: input.path.replace("{id}", id),
      json: { title: "edited", ...forced },
    });
  }
  const stored = (answer.json ?? {}) as Record<string, unknown>;
  const took = Object.entries(forced).every(([key, value]) => stored[key] === value);
  return verdict(answer.status < 300 && took, `alice sent ${JSON.stringify(forced)} → ${brief(answer)}`);
}
