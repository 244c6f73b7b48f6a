import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, PRODUCT, STR } from "../schemas.ts";
import { createAs, ownedCollection, ownRecord, recordShape } from "./records.ts";

// How an API behaves on inputs that are valid but unusual (CWE-755), on inputs it should refuse (CWE-20,
// CWE-1284), and under HTTP's method semantics (RFC 9110 §9.2: GET is safe, PUT and DELETE idempotent).

export interface UnhandledErrorKnobs {
  trigger: "omitted-optional" | "apostrophe" | "unicode" | "long-string" | "boundary-number" | "empty-array";
}

export interface ValidationKnobs {
  rule: "wrong-type" | "negative-quantity" | "enum";
}

export interface HttpSemanticsKnobs {
  flaw: "get-side-effect" | "delete-twice" | "put-not-idempotent";
}

interface TriggerCode {
  method: "GET" | "POST";
  suffix: string;
  summary: string;
  params?: Endpoint["parameters"];
  body?: Endpoint["body"];
  answer: Record<string, unknown>;
  node: { vulnerable: string; safe: string };
  python: { vulnerable: string; safe: string };
  /** The unusual but valid request. */
  ask: { query?: Record<string, string>; json?: unknown };
  words: string;
}

function trigger(ctx: BuildContext, which: UnhandledErrorKnobs["trigger"]): TriggerCode {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  switch (which) {
    case "omitted-optional":
      return {
        method: "GET",
        suffix: "sorted",
        summary: "Products in a chosen order (sort defaults to name)",
        params: [
          {
            name: "sort",
            in: "query",
            required: false,
            schema: { type: "string", enum: ["name", "price", "sku"] },
          },
        ],
        answer: listOf(PRODUCT),
        node: {
          vulnerable: 'const keys = request.query["sort"].split(",");',
          safe: 'const keys = String(request.query["sort"] ?? "name").split(",");',
        },
        python: {
          vulnerable: 'keys = request.args.get("sort").split(",")',
          safe: 'keys = request.args.get("sort", "name").split(",")',
        },
        ask: {},
        words: "leaving out the optional sort parameter",
      };
    case "apostrophe":
      return {
        method: "GET",
        suffix: "phrases",
        summary: "Search products by words and 'quoted phrases'",
        params: [{ name: "q", in: "query", required: false, schema: STR }],
        answer: listOf(PRODUCT),
        node: {
          vulnerable: `const q = String(request.query["q"] ?? "");
if (q.split("'").length % 2 === 0) throw new SyntaxError("unbalanced quote in " + q);
const keys = ["name"];`,
          safe: `const q = String(request.query["q"] ?? "");
const keys = ["name"];`,
        },
        python: {
          vulnerable: 'terms = shlex.split(request.args.get("q", ""))\nkeys = ["name"]',
          safe: 'try:\n    terms = shlex.split(request.args.get("q", ""))\nexcept ValueError:\n    terms = request.args.get("q", "").split()\nkeys = ["name"]',
        },
        ask: { query: { q: "O'Brien hinge" } },
        words: "an apostrophe in the search",
      };
    case "unicode":
      return {
        method: "POST",
        suffix: "slugs",
        summary: "Make a shareable token from a name",
        body: {
          contentType: "application/json",
          schema: obj({ name: STR }, []),
          required: true,
        },
        answer: obj({ name: STR, token: STR }),
        node: {
          vulnerable:
            'const name = String((request.body ?? {}).name ?? "");\nreturn { name, token: btoa(name) };',
          safe: 'const name = String((request.body ?? {}).name ?? "");\nreturn { name, token: Buffer.from(name, "utf8").toString("base64") };',
        },
        python: {
          vulnerable:
            'name = str((request.get_json(silent=True) or {}).get("name", ""))\nreturn jsonify(name=name, token=base64.b64encode(name.encode("latin-1")).decode())',
          safe: 'name = str((request.get_json(silent=True) or {}).get("name", ""))\nreturn jsonify(name=name, token=base64.b64encode(name.encode("utf-8")).decode())',
        },
        ask: { json: { name: "Zoë’s café €5 名" } },
        words: "a name outside Latin-1",
      };
    case "long-string": {
      const insert = `INSERT INTO labels (kind, name, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}) RETURNING id, name`;
      return {
        method: "POST",
        suffix: "labels",
        summary: "Add a label (at most 40 characters)",
        body: {
          contentType: "application/json",
          schema: obj({ name: { type: "string", maxLength: 40 } }, []),
          required: true,
        },
        answer: obj({ id: INT, name: STR }),
        node: {
          vulnerable: `const name = String((request.body ?? {}).name ?? "");
return reply.code(201).send(await db.get("${insert}", [${kind}, name, new Date().toISOString()]));`,
          safe: `const name = String((request.body ?? {}).name ?? "");
if (name.length === 0 || name.length > 40) return reply.code(400).send({ error: "name must be 1 to 40 characters" });
return reply.code(201).send(await db.get("${insert}", [${kind}, name, new Date().toISOString()]));`,
        },
        python: {
          vulnerable: `name = str((request.get_json(silent=True) or {}).get("name", ""))
return jsonify(db.get("${insert}", (${kind}, name, datetime.utcnow().isoformat()))), 201`,
          safe: `name = str((request.get_json(silent=True) or {}).get("name", ""))
if not 0 < len(name) <= 40:
    return jsonify(error="name must be 1 to 40 characters"), 400
return jsonify(db.get("${insert}", (${kind}, name, datetime.utcnow().isoformat()))), 201`,
        },
        ask: { json: { name: "x".repeat(300) } },
        words: "a 300-character label",
      };
    }
    case "boundary-number":
      return {
        method: "GET",
        suffix: "pages",
        summary: "How many pages the catalogue takes",
        params: [
          {
            name: "per_page",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 100 },
          },
        ],
        answer: obj({ pages: INT, per_page: INT }),
        node: {
          vulnerable: `const perPage = Number(request.query["per_page"] ?? 10);
const slots = new Array(perPage).fill(null);
const total = (await db.get("SELECT COUNT(*) AS n FROM products")).n;
return { pages: Math.ceil(Number(total) / slots.length), per_page: perPage };`,
          safe: `const perPage = Number(request.query["per_page"] ?? 10);
if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) return reply.code(400).send({ error: "per_page must be an integer from 1 to 100" });
const total = (await db.get("SELECT COUNT(*) AS n FROM products")).n;
return { pages: Math.ceil(Number(total) / perPage), per_page: perPage };`,
        },
        python: {
          vulnerable: `per_page = int(request.args.get("per_page", "10"))
total = db.get("SELECT COUNT(*) AS n FROM products")["n"]
return jsonify(pages=-(-int(total) // per_page), per_page=per_page)`,
          safe: `raw = request.args.get("per_page", "10")
if not re.fullmatch(r"[0-9]{1,3}", raw) or not 1 <= int(raw) <= 100:
    return jsonify(error="per_page must be an integer from 1 to 100"), 400
per_page = int(raw)
total = db.get("SELECT COUNT(*) AS n FROM products")["n"]
return jsonify(pages=-(-int(total) // per_page), per_page=per_page)`,
        },
        ask: { query: { per_page: ctx.server.stack === "node" ? "-1" : "0" } },
        words: `per_page=${ctx.server.stack === "node" ? "-1" : "0"}`,
      };
    case "empty-array":
      return {
        method: "POST",
        suffix: "averages",
        summary: "Average of some readings",
        body: {
          contentType: "application/json",
          schema: obj({ values: { type: "array", items: { type: "number" } } }),
          required: true,
        },
        answer: obj({ average: { type: "number", nullable: true } }),
        node: {
          vulnerable: `const values = (request.body ?? {}).values;
if (!Array.isArray(values) || !values.every((value) => typeof value === "number")) return reply.code(400).send({ error: "values must be numbers" });
return { average: values.reduce((sum, value) => sum + value) / values.length };`,
          safe: `const values = (request.body ?? {}).values;
if (!Array.isArray(values) || !values.every((value) => typeof value === "number")) return reply.code(400).send({ error: "values must be numbers" });
return { average: values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length };`,
        },
        python: {
          vulnerable: `values = (request.get_json(silent=True) or {}).get("values")
if not isinstance(values, list) or not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in values):
    return jsonify(error="values must be numbers"), 400
return jsonify(average=sum(values) / len(values))`,
          safe: `values = (request.get_json(silent=True) or {}).get("values")
if not isinstance(values, list) or not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in values):
    return jsonify(error="values must be numbers"), 400
return jsonify(average=sum(values) / len(values) if values else None)`,
        },
        ask: { json: { values: [] } },
        words: "an empty list of values",
      };
  }
}

export function buildUnhandledError(row: Row<UnhandledErrorKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const spec = trigger(ctx, row.knobs.trigger);
  const path = `${ctx.place.base}/${spec.suffix}`;
  const sorted = row.knobs.trigger === "omitted-optional" || row.knobs.trigger === "apostrophe";
  const listNode = sorted
    ? `\nconst allowed = keys.filter((key) => ["name", "price", "sku"].includes(key));
return { items: await db.all("SELECT id, sku, name, price FROM products ORDER BY " + (allowed[0] ?? "name")) };`
    : "";
  const listPy = sorted
    ? `\nallowed = [key for key in keys if key in ("name", "price", "sku")]
return jsonify(items=db.all("SELECT id, sku, name, price FROM products ORDER BY " + (allowed[0] if allowed else "name")))`
    : "";
  const endpoint: Endpoint = {
    method: spec.method,
    path,
    summary: spec.summary,
    access: "user",
    ...(spec.params ? { parameters: spec.params } : {}),
    ...(spec.body ? { body: spec.body } : {}),
    responses: {
      [row.knobs.trigger === "long-string" ? "201" : "200"]: json("the answer", spec.answer),
      "400": err("the input is not acceptable"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      spec.method,
      path,
      `${vulnerable ? spec.node.vulnerable : spec.node.safe}${listNode}`,
    ),
    python: pyRoute(
      spec.method,
      path,
      `require_user()\n${vulnerable ? spec.python.vulnerable : spec.python.safe}${listPy}`,
    ),
  };
  return {
    endpoint,
    title: vulnerable ? `Unhandled error: ${spec.words} answers 500` : `${spec.summary}: takes ${spec.words}`,
    ...(vulnerable ? {} : { why: `${spec.words} is handled (a normal answer or a 400)` }),
    oracle: async (client) => {
      const reply = await client.ask({ as: "alice", method: spec.method, path, ...spec.ask });
      return verdict(reply.status >= 500, `${spec.words} → ${brief(reply)}`);
    },
  };
}

export function buildValidationMissing(row: Row<ValidationKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { rule } = row.knobs;
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/lines`;
  const checks = {
    type: {
      node: 'if (!Number.isInteger(body.quantity)) return reply.code(400).send({ error: "quantity must be an integer" });',
      python:
        'if not isinstance(body.get("quantity"), int) or isinstance(body.get("quantity"), bool):\n    return jsonify(error="quantity must be an integer"), 400',
    },
    positive: {
      node: 'if (Number(body.quantity) < 1 || Number(body.quantity) > 1000) return reply.code(400).send({ error: "quantity must be from 1 to 1000" });',
      python:
        'if isinstance(body.get("quantity"), (int, float)) and not 1 <= body["quantity"] <= 1000:\n    return jsonify(error="quantity must be from 1 to 1000"), 400',
    },
    enum: {
      node: 'if (!["low", "normal", "high"].includes(body.priority)) return reply.code(400).send({ error: "priority must be low, normal or high" });',
      python:
        'if body.get("priority") not in ("low", "normal", "high"):\n    return jsonify(error="priority must be low, normal or high"), 400',
    },
  };
  const skipped = { "wrong-type": "type", "negative-quantity": "positive", enum: "enum" }[rule];
  const active = (["type", "positive", "enum"] as const).filter((name) => !vulnerable || name !== skipped);
  const insert = `INSERT INTO records (uid, kind, owner_id, org_id, title, attrs, created_at) VALUES (${[1, 2, 3, 4, 5, 6, 7].map(ph).join(", ")}) RETURNING id`;
  const schema = obj({
    sku: STR,
    quantity: { type: "integer", minimum: 1, maximum: 1000 },
    priority: { type: "string", enum: ["low", "normal", "high"] },
  });
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: `Add a line to my ${place.singular}`,
    looseBody: vulnerable && rule === "wrong-type",
    access: "user",
    body: { contentType: "application/json", schema, required: true },
    responses: {
      "201": json("the line", obj({ id: INT, sku: STR, quantity: INT, priority: STR })),
      "400": err("invalid line"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      path,
      `const body = request.body ?? {};
if (typeof body.sku !== "string" || body.sku.length === 0 || body.sku.length > 40) return reply.code(400).send({ error: "sku must be a string" });
${active.map((name) => checks[name].node).join("\n")}
const line = { sku: body.sku, quantity: body.quantity, priority: body.priority };
const row = await db.get("${insert}", [crypto.randomUUID(), ${kind}, user.id, user.org_id, body.sku, JSON.stringify(line), new Date().toISOString()]);
return reply.code(201).send({ id: row.id, ...line });`,
    ),
    python: pyRoute(
      "POST",
      path,
      `user = require_user()
body = request.get_json(silent=True) or {}
if not isinstance(body, dict) or not isinstance(body.get("sku"), str) or not 0 < len(body["sku"]) <= 40:
    return jsonify(error="sku must be a string"), 400
${active.map((name) => checks[name].python).join("\n")}
line = {"sku": body["sku"], "quantity": body.get("quantity"), "priority": body.get("priority")}
row = db.get("${insert}", (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], body["sku"], json.dumps(line), datetime.utcnow().isoformat()))
return jsonify(id=row["id"], **line), 201`,
    ),
  };
  const bad = {
    "wrong-type": { quantity: "many", priority: "normal" },
    "negative-quantity": { quantity: -5, priority: "normal" },
    enum: { quantity: 2, priority: "banana" },
  }[rule];
  const words = {
    "wrong-type": "a quantity that is not a number",
    "negative-quantity": "a negative quantity",
    enum: "a priority outside low/normal/high",
  }[rule];
  return {
    endpoint,
    title: vulnerable
      ? `Missing validation: ${words} is stored`
      : `Order lines take a quantity and a priority`,
    ...(vulnerable ? {} : { why: "type, range and enum are all checked (400)" }),
    oracle: async (client) => {
      const reply = await client.ask({ as: "alice", method: "POST", path, json: { sku: "SKU-101", ...bad } });
      return verdict(reply.status < 300, `${JSON.stringify(bad)} → ${brief(reply)}`);
    },
  };
}

export function buildHttpSemantics(row: Row<HttpSemanticsKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { flaw } = row.knobs;
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const shape = recordShape("sequential");
  const support = ownedCollection(ctx, shape);
  const collection = place.base;
  const find = {
    node: `const id = String(request.params["id"]);
if (!/^[0-9]{1,9}$/.test(id)) return reply.code(404).send({ error: "not found" });`,
    python: `if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404`,
  };
  let endpoint: Endpoint;
  let oracle: Built["oracle"];
  if (flaw === "get-side-effect") {
    const path = `${place.base}/{id}/confirm`;
    const effect = vulnerable
      ? {
          node: `const row = await db.get("UPDATE records SET status = 'confirmed' WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)} RETURNING ${shape.columns}", [${kind}, Number(id), user.id]);`,
          python: `row = db.get("UPDATE records SET status = 'confirmed' WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)} RETURNING ${shape.columns}", (${kind}, int(id), user["id"]))`,
        }
      : {
          node: `const row = await db.get("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", [${kind}, Number(id), user.id]);`,
          python: `row = db.get("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", (${kind}, int(id), user["id"]))`,
        };
    endpoint = {
      method: "GET",
      path,
      summary: `Confirmation state of a ${place.singular}`,
      access: "user",
      parameters: [{ name: "id", in: "path", required: true, schema: STR }],
      responses: {
        "200": json(`the ${place.singular}`, shape.schema),
        "404": err("not one of the caller's"),
        ...guarded("user"),
      },
      node: nodeUserRoute(
        "GET",
        path,
        `${find.node}\n${effect.node}\nif (!row) return reply.code(404).send({ error: "not found" });\nreturn row;`,
      ),
      python: pyRoute(
        "GET",
        path,
        `user = require_user()\n${find.python}\n${effect.python}\nif row is None:\n    return jsonify(error="not found"), 404\nreturn jsonify(row)`,
      ),
    };
    oracle = async (client) => {
      const id = await createAs(client, "alice", collection, "pending");
      await client.ask({ as: "alice", path: path.replace("{id}", id) });
      const after = await ownRecord(client, "alice", collection, id);
      return verdict(after?.status !== "open", `status after a GET: ${String(after?.status)}`);
    };
  } else if (flaw === "delete-twice") {
    const path = `${place.base}/{id}`;
    const node = vulnerable
      ? `const row = await db.get("SELECT id FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", [${kind}, Number(id), user.id]);
await db.run("DELETE FROM records WHERE id = ${ph(1)}", [row.id]);
return reply.code(204).send();`
      : `const row = await db.get("SELECT id FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", [${kind}, Number(id), user.id]);
if (!row) return reply.code(404).send({ error: "not found" });
await db.run("DELETE FROM records WHERE id = ${ph(1)}", [row.id]);
return reply.code(204).send();`;
    const python = vulnerable
      ? `row = db.get("SELECT id FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", (${kind}, int(id), user["id"]))
db.run("DELETE FROM records WHERE id = ${ph(1)}", (row["id"],))
return "", 204`
      : `row = db.get("SELECT id FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", (${kind}, int(id), user["id"]))
if row is None:
    return jsonify(error="not found"), 404
db.run("DELETE FROM records WHERE id = ${ph(1)}", (row["id"],))
return "", 204`;
    endpoint = {
      method: "DELETE",
      path,
      summary: `Delete one of my ${place.plural}`,
      access: "user",
      parameters: [{ name: "id", in: "path", required: true, schema: STR }],
      responses: {
        "204": { description: "deleted" },
        "404": err("not one of the caller's"),
        ...guarded("user"),
      },
      node: nodeUserRoute("DELETE", path, `${find.node}\n${node}`),
      python: pyRoute("DELETE", path, `user = require_user()\n${find.python}\n${python}`),
    };
    oracle = async (client) => {
      const id = await createAs(client, "alice", collection, "disposable");
      const first = await client.ask({ as: "alice", method: "DELETE", path: path.replace("{id}", id) });
      const second = await client.ask({ as: "alice", method: "DELETE", path: path.replace("{id}", id) });
      return verdict(second.status >= 500, `first → ${first.status}; second → ${brief(second)}`);
    };
  } else {
    const path = `${place.base}/{id}`;
    const quantity = vulnerable
      ? { node: "current.quantity + body.quantity", python: 'current["quantity"] + body["quantity"]' }
      : { node: "body.quantity", python: 'body["quantity"]' };
    endpoint = {
      method: "PUT",
      path,
      summary: `Replace one of my ${place.plural}`,
      access: "user",
      parameters: [{ name: "id", in: "path", required: true, schema: STR }],
      body: {
        contentType: "application/json",
        schema: obj({
          title: { type: "string", maxLength: 80 },
          quantity: { type: "integer", minimum: 1, maximum: 1000 },
        }),
        required: true,
      },
      responses: {
        "200": json("the replaced record", obj({ id: INT, title: STR, quantity: INT })),
        "400": err("invalid body"),
        "404": err("not one of the caller's"),
        ...guarded("user"),
      },
      node: nodeUserRoute(
        "PUT",
        path,
        `${find.node}
const body = request.body ?? {};
if (typeof body.title !== "string" || body.title.length === 0 || body.title.length > 80 || !Number.isInteger(body.quantity) || body.quantity < 1 || body.quantity > 1000) {
  return reply.code(400).send({ error: "title (1 to 80 characters) and quantity (1 to 1000) are required" });
}
const current = await db.get("SELECT id, quantity FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", [${kind}, Number(id), user.id]);
if (!current) return reply.code(404).send({ error: "not found" });
return db.get("UPDATE records SET title = ${ph(1)}, quantity = ${ph(2)} WHERE id = ${ph(3)} RETURNING id, title, quantity", [body.title, ${quantity.node}, current.id]);`,
      ),
      python: pyRoute(
        "PUT",
        path,
        `user = require_user()
${find.python}
body = request.get_json(silent=True) or {}
title, amount = body.get("title"), body.get("quantity")
if not isinstance(title, str) or not 0 < len(title) <= 80 or not isinstance(amount, int) or isinstance(amount, bool) or not 1 <= amount <= 1000:
    return jsonify(error="title (1 to 80 characters) and quantity (1 to 1000) are required"), 400
current = db.get("SELECT id, quantity FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", (${kind}, int(id), user["id"]))
if current is None:
    return jsonify(error="not found"), 404
return jsonify(db.get("UPDATE records SET title = ${ph(1)}, quantity = ${ph(2)} WHERE id = ${ph(3)} RETURNING id, title, quantity", (title, ${quantity.python}, current["id"])))`,
      ),
    };
    oracle = async (client) => {
      const id = await createAs(client, "alice", collection, "repeatable");
      const put = () =>
        client.ask({
          as: "alice",
          method: "PUT",
          path: path.replace("{id}", id),
          json: { title: "same", quantity: 2 },
        });
      const first = await put();
      const second = await put();
      return verdict(first.text !== second.text, `first → ${brief(first)}; second → ${brief(second)}`);
    };
  }
  const words = {
    "get-side-effect": "a GET confirms the record (a safe method with a side effect)",
    "delete-twice": "deleting a record twice answers 500",
    "put-not-idempotent": "repeating the same PUT keeps adding to the quantity",
  }[flaw];
  return {
    endpoint,
    support,
    ...(flaw === "delete-twice" ? { ledgerClass: "unhandled-error" } : {}),
    title: vulnerable
      ? `HTTP semantics: ${words}`
      : `${capitalise(place.plural)}: ${endpoint.method} ${flaw === "get-side-effect" ? "reads the confirmation state" : "is repeatable"}`,
    ...(vulnerable
      ? {}
      : {
          why:
            flaw === "get-side-effect"
              ? "the GET only reads"
              : flaw === "delete-twice"
                ? "the second DELETE answers 404"
                : "the PUT sets the quantity, so repeating it changes nothing",
        }),
    oracle,
  };
}

function capitalise(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}
