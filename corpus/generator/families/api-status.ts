import AjvModule from "ajv";
import type { Row } from "../../model/row.ts";
import { brief, itemsOf, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint, JsonSchema } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, STR } from "../schemas.ts";
import { buildConventionStatus, isConventionFlaw } from "./api-status-conventions.ts";
import { ownedCollection, ownRecordRead, recordShape } from "./records.ts";

const Ajv = AjvModule.default ?? AjvModule;

// Statuses and contracts (RFC 9110 §15, OpenAPI 3.0): an error answered 200, a client error answered 500,
// a status the document never lists, and answers that drift from their documented schema (a renamed,
// retyped, undeclared-null or missing field). Safe twins answer the right status and match the document,
// including its declared-nullable and optional fields.

export interface WrongStatusKnobs {
  flaw:
    | "error-200"
    | "client-error-500"
    | "auth-error-200"
    /** Without a document: a missing record answered 200 with nothing in it (api-status-conventions.ts). */
    | "missing-200-empty"
    /** Without a document: a creation answered 200 where the API's other creations answer 201. */
    | "create-200-inconsistent";
  /** missing-200-empty, vulnerable rows: what the empty answer is. */
  empty?: "null" | "object";
  /** Safe rows of the two flaws above: a look-alike instead of the correct twin. */
  lookalike?: "search-empty" | "upsert-200";
}

export type UndocumentedStatusKnobs = Record<string, never>;

export interface ContractDriftKnobs {
  /** Vulnerable rows: how the answer drifts. */
  drift?: "renamed" | "retyped" | "nullable" | "missing-required";
  /** Safe rows: what looks like drift and is not. */
  lookalike?: "declared-nullable" | "optional-absent" | "exact";
}

export function buildWrongStatus(row: Row<WrongStatusKnobs>, ctx: BuildContext): Built {
  const { flaw } = row.knobs;
  if (isConventionFlaw(flaw)) return buildConventionStatus(row, ctx);
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const shape = recordShape("sequential");
  let endpoint: Endpoint;
  let support: Endpoint[] | undefined;
  let oracle: Built["oracle"];
  if (flaw === "error-200") {
    const path = `${place.base}/{id}`;
    support = ownedCollection(ctx, shape);
    const missing = vulnerable
      ? { node: 'return { error: "not found" };', python: 'return jsonify(error="not found")' }
      : {
          node: 'return reply.code(404).send({ error: "not found" });',
          python: 'return jsonify(error="not found"), 404',
        };
    endpoint = ownRecordRead(ctx, missing);
    oracle = async (client) => {
      const reply = await client.ask({ as: "alice", path: path.replace("{id}", "987654") });
      return verdict(reply.status === 200, `unknown id → ${brief(reply)}`);
    };
  } else if (flaw === "client-error-500") {
    const path = `${place.base}/drafts`;
    const status = vulnerable ? 500 : 400;
    endpoint = {
      method: "POST",
      path,
      summary: `Save a ${place.singular} draft`,
      access: "user",
      body: {
        contentType: "application/json",
        schema: obj({ title: { type: "string", maxLength: 80 } }),
        required: true,
      },
      responses: {
        "201": json("saved", obj({ id: INT, title: STR })),
        "400": err("title missing or too long"),
        ...guarded("user"),
      },
      node: nodeUserRoute(
        "POST",
        path,
        `const title = (request.body ?? {}).title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) {
  return reply.code(${status}).send({ error: "title is required (1 to 80 characters)" });
}
const row = await db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")}) RETURNING id, title", [crypto.randomUUID(), ${kind}, user.id, user.org_id, title, new Date().toISOString()]);
return reply.code(201).send(row);`,
      ),
      python: pyRoute(
        "POST",
        path,
        `user = require_user()
title = (request.get_json(silent=True) or {}).get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title is required (1 to 80 characters)"), ${status}
row = db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")}) RETURNING id, title", (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], title, datetime.utcnow().isoformat()))
return jsonify(row), 201`,
      ),
    };
    oracle = async (client) => {
      const reply = await client.ask({ as: "alice", method: "POST", path, json: {} });
      return verdict(reply.status >= 500, `no title → ${brief(reply)}`);
    };
  } else {
    const path = `${place.base}/inbox`;
    const missing = vulnerable
      ? { node: 'return { error: "please sign in" };', python: 'return jsonify(error="please sign in")' }
      : {
          node: 'return reply.code(401).send({ error: "please sign in" });',
          python: 'return jsonify(error="please sign in"), 401',
        };
    endpoint = {
      method: "GET",
      path,
      summary: `My ${place.singular} inbox`,
      access: "user",
      responses: { "200": json("the inbox", listOf(shape.schema)), ...guarded("user") },
      node: nodeRoute(
        "GET",
        path,
        `const user = await signedIn(request);
if (!user) ${missing.node}
return { items: await db.all("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", [${kind}, user.id]) };`,
      ),
      python: pyRoute(
        "GET",
        path,
        `user = signed_in()
if user is None:
    ${missing.python}
return jsonify(items=db.all("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", (${kind}, user["id"])))`,
      ),
    };
    oracle = async (client) => {
      const reply = await client.ask({ path });
      return verdict(reply.status === 200, `no credentials → ${brief(reply)}`);
    };
  }
  const words = {
    "error-200": "a missing record answers 200 with an error body",
    "client-error-500": "a missing title answers 500",
    "auth-error-200": "a request without credentials answers 200 with an error body",
  }[flaw];
  return {
    endpoint,
    ...(support ? { support } : {}),
    records: [{ kind: place.kind, title: "Kept" }],
    title: vulnerable
      ? `Wrong status: ${words}`
      : `${capitalise(place.plural)}: errors of the kind "${flaw}"`,
    ...(vulnerable
      ? {}
      : {
          why: `answers ${{ "error-200": "404", "client-error-500": "400", "auth-error-200": "401" }[flaw]} as it should`,
        }),
    oracle,
  };
}

export function buildUndocumentedStatus(row: Row<UndocumentedStatusKnobs>, ctx: BuildContext): Built {
  if (ctx.server.doc === "none") throw new Error(`${row.id}: undocumented-status variants need a document`);
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/codes`;
  const responses = {
    "201": json("registered", obj({ id: INT, code: STR })),
    "400": err("code missing or malformed"),
    ...(vulnerable ? {} : { "409": err("the code is taken") }),
    ...guarded("user"),
  };
  const documented = Object.keys(responses).map(Number);
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: `Register a ${place.singular} code`,
    access: "user",
    alwaysDocumented: true,
    body: {
      contentType: "application/json",
      schema: obj({ code: { type: "string", pattern: "^[A-Z0-9-]{3,20}$" } }),
      required: true,
    },
    responses,
    node: nodeUserRoute(
      "POST",
      path,
      `const code = (request.body ?? {}).code;
if (typeof code !== "string" || !/^[A-Z0-9-]{3,20}$/.test(code)) return reply.code(400).send({ error: "code must be 3 to 20 of A-Z, 0-9 and -" });
const taken = await db.get("SELECT id FROM records WHERE kind = ${ph(1)} AND title = ${ph(2)}", [${kind}, code]);
if (taken) return reply.code(409).send({ error: "the code is taken" });
const row = await db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")}) RETURNING id, title AS code", [crypto.randomUUID(), ${kind}, user.id, user.org_id, code, new Date().toISOString()]);
return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      path,
      `user = require_user()
code = (request.get_json(silent=True) or {}).get("code")
if not isinstance(code, str) or not re.fullmatch(r"[A-Z0-9-]{3,20}", code):
    return jsonify(error="code must be 3 to 20 of A-Z, 0-9 and -"), 400
if db.get("SELECT id FROM records WHERE kind = ${ph(1)} AND title = ${ph(2)}", (${kind}, code)):
    return jsonify(error="the code is taken"), 409
row = db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")}) RETURNING id, title AS code", (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], code, datetime.utcnow().isoformat()))
return jsonify(row), 201`,
    ),
  };
  return {
    endpoint,
    title: vulnerable
      ? "A taken code answers 409, a status the document does not list"
      : "A taken code answers 409",
    ...(vulnerable ? {} : { why: "409 is documented for this operation" }),
    oracle: async (client) => {
      const code = `C-${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
      await client.ask({ as: "alice", method: "POST", path, json: { code } });
      const reply = await client.ask({ as: "alice", method: "POST", path, json: { code } });
      return verdict(
        !documented.includes(reply.status),
        `second registration → ${brief(reply)}; documented ${documented.join(", ")}`,
      );
    },
  };
}

export function buildContractDrift(row: Row<ContractDriftKnobs>, ctx: BuildContext): Built {
  if (ctx.server.doc === "none") throw new Error(`${row.id}: contract-drift variants need a document`);
  const vulnerable = row.label === "vulnerable";
  const { drift = "renamed", lookalike = "exact" } = row.knobs;
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/prices`;
  const label: JsonSchema =
    !vulnerable && lookalike === "declared-nullable" ? { type: "string", nullable: true } : STR;
  const properties: Record<string, JsonSchema> = { id: INT, sku: STR, unit_price: INT, label };
  if (!vulnerable && lookalike === "optional-absent") properties.note = STR;
  const item = obj(properties, ["id", "sku", "unit_price", "label"]);
  // One mapping per behaviour, written once for both languages' object syntax.
  const fields = (language: "node" | "python") => {
    const get = (name: string) => (language === "node" ? `row.${name}` : `row["${name}"]`);
    const nullWhenOdd =
      language === "node"
        ? `row.id % 2 === 1 ? null : ${get("status")}`
        : `None if row["id"] % 2 == 1 else ${get("status")}`;
    const entries: Array<[string, string]> = [
      ["id", get("id")],
      ["sku", get("title")],
      ["unit_price", get("price")],
      ["label", get("status")],
    ];
    if (vulnerable && drift === "renamed") entries[2] = ["unitPrice", get("price")];
    if (vulnerable && drift === "retyped")
      entries[2] = [
        "unit_price",
        language === "node" ? `(${get("price")} / 100).toFixed(2)` : `"%.2f" % (${get("price")} / 100)`,
      ];
    if ((vulnerable && drift === "nullable") || (!vulnerable && lookalike === "declared-nullable"))
      entries[3] = ["label", nullWhenOdd];
    if (vulnerable && drift === "missing-required") entries.splice(1, 1);
    return entries
      .map(([key, value]) => (language === "node" ? `${key}: ${value}` : `"${key}": ${value}`))
      .join(", ");
  };
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `Price list of the ${place.plural}`,
    access: "user",
    alwaysDocumented: true,
    responses: { "200": json("prices", listOf(item)), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      path,
      `const rows = await db.all("SELECT id, title, price, status FROM records WHERE kind = ${ph(1)} ORDER BY id", [${kind}]);
return { items: rows.map((row) => ({ ${fields("node")} })) };`,
    ),
    python: pyRoute(
      "GET",
      path,
      `require_user()
rows = db.all("SELECT id, title, price, status FROM records WHERE kind = ${ph(1)} ORDER BY id", (${kind},))
return jsonify(items=[{${fields("python")}} for row in rows])`,
    ),
  };
  const schema = listOf(item);
  const words = {
    renamed: "unit_price comes back as unitPrice",
    retyped: "unit_price comes back as a string",
    nullable: "label comes back null though the document does not allow it",
    "missing-required": "the required sku is missing",
  }[drift];
  return {
    endpoint,
    records: [{ kind: place.kind, title: "SKU", owners: ["alice", "bruno", "dana"], count: 2 }],
    title: vulnerable
      ? `Contract drift: ${words}`
      : `The ${place.plural} price list ${lookalike === "declared-nullable" ? "has null labels" : lookalike === "optional-absent" ? "omits a documented field" : "follows its schema"}`,
    ...(vulnerable
      ? {}
      : {
          why:
            lookalike === "declared-nullable"
              ? "label is declared nullable"
              : lookalike === "optional-absent"
                ? "note is optional (not in required)"
                : "every field is as documented",
        }),
    oracle: async (client) => {
      const reply = await client.ask({ as: "alice", path });
      const validate = new Ajv({ strict: false }).compile(schema);
      const valid = validate(reply.json);
      return verdict(
        reply.status === 200 && !valid && itemsOf(reply).length > 0,
        `${valid ? "valid" : JSON.stringify(validate.errors?.[0])}; ${brief(reply)}`,
      );
    },
  };
}

function capitalise(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}
