import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint, JsonSchema } from "../endpoint.ts";
import { err, guarded, htmlAnswer, INT, json, listOf, obj, PRODUCT, STR } from "../schemas.ts";
import { ID_PATTERN } from "./owned-table.ts";
import { pageDocument, pageEndpoint, pagePath } from "./ui-page.ts";

// A figure the page fixes and the server takes from the request (CWE-472, CWE-602): an order form shows a
// price, total or fee as a read-only or hidden control, the browser sends it back with the order, and the
// handler stores what arrived. The buyer's own orders page shows it. The safe twins work the figure out
// from the product and the quantity (the field is sent but never read), or refuse an order whose figure
// differs from theirs.

export interface ClientPriceKnobs {
  field: "price" | "total" | "unit_price" | "fee";
  /** How the figure reaches the server: a form control, or a JSON API naming a catalogue product. */
  control: "readonly" | "hidden" | "json";
  /** Safe rows: the server computes the figure itself, or checks the one sent against its own. */
  guard?: "computed" | "checked";
}

const SKU = "P-3";
const UNIT = "12.50";
const AMOUNT = { type: "string", pattern: "^[0-9]{1,9}(\\.[0-9]{1,2})?$" };

export function buildClientPrice(row: Row<ClientPriceKnobs>, ctx: BuildContext): Built {
  if (row.knobs.control === "json") return buildCatalogPrice(row, ctx);
  const { field, control, guard = "computed" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const computed = !vulnerable && guard === "computed";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const key = JSON.stringify(field);
  const orderPage = pagePath(ctx, "/order");
  const ordersPage = pagePath(ctx, "/orders");
  const action = `${place.base}/orders`;
  // What the server should store: the unit price, times the quantity for a total.
  const expected = field === "total" ? `${UNIT} * quantity` : UNIT;
  const amount = computed
    ? { node: expected, python: expected }
    : { node: "Number(sent)", python: "float(sent)" };
  const check =
    !vulnerable && guard === "checked"
      ? {
          node: `if (Math.abs(Number(sent) - (${expected})) > 0.001) return reply.code(409).send({ error: "the ${field} has changed: reload the page" });\n`,
          python: `if abs(float(sent) - (${expected})) > 0.001:\n    return jsonify(error="the ${field} has changed: reload the page"), 409\n`,
        }
      : { node: "", python: "" };
  // The field is read only where it is used; a server that computes the figure ignores it entirely.
  const read = computed
    ? { node: "", python: "" }
    : {
        node: `const sent = String(body[${key}] ?? "");
if (!/${AMOUNT.pattern}/.test(sent)) return reply.code(400).send({ error: "${field} must be an amount" });
`,
        python: `sent = request.form.get(${key}, "")
if not re.fullmatch(r"${AMOUNT.pattern.slice(1, -1)}", sent):
    return jsonify(error="${field} must be an amount"), 400
`,
      };
  const fieldSchema: JsonSchema = computed ? STR : AMOUNT;
  const create: Endpoint = {
    method: "POST",
    path: action,
    summary: `Order a ${place.singular}`,
    access: "user",
    body: {
      contentType: "application/x-www-form-urlencoded",
      schema: obj(
        {
          sku: { type: "string", enum: [SKU] },
          quantity: { type: "integer", minimum: 1, maximum: 20 },
          [field]: fieldSchema,
        },
        computed ? ["sku", "quantity"] : ["sku", "quantity", field],
      ),
      required: true,
    },
    responses: {
      "201": json("the order", obj({ id: INT, title: STR })),
      "400": err("an unknown product, a quantity outside 1 to 20, or a malformed amount"),
      ...(guard === "checked" && !vulnerable
        ? { "409": err(`the ${field} differs from the product's`) }
        : {}),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      action,
      `const body = request.body ?? {};
if (body.sku !== ${JSON.stringify(SKU)}) return reply.code(400).send({ error: "unknown product" });
const quantity = Number(body.quantity);
if (!Number.isInteger(quantity) || quantity < 1 || quantity > 20) return reply.code(400).send({ error: "quantity must be 1 to 20" });
${read.node}${check.node}const amount = ${amount.node};
const title = quantity + " x ${SKU} for " + amount.toFixed(2);
const row = await db.get(
  "INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}) RETURNING id, title",
  [crypto.randomUUID(), ${kind}, user.id, user.org_id, title, new Date().toISOString()],
);
return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      action,
      `user = require_user()
if request.form.get("sku") != ${JSON.stringify(SKU)}:
    return jsonify(error="unknown product"), 400
quantity_text = request.form.get("quantity", "")
if not re.fullmatch(r"[0-9]{1,2}", quantity_text) or not 1 <= int(quantity_text) <= 20:
    return jsonify(error="quantity must be 1 to 20"), 400
quantity = int(quantity_text)
${read.python}${check.python}amount = ${amount.python}
title = f"{quantity} x ${SKU} for {amount:.2f}"
row = db.get(
    "INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}) RETURNING id, title",
    (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], title, datetime.utcnow().isoformat()),
)
return jsonify(row), 201`,
    ),
  };
  const listDocument = JSON.stringify(
    pageDocument({ title: `My ${place.singular} orders`, body: "<ul>{rows}</ul>", nav: "back" }),
  );
  const orders: Endpoint = {
    method: "GET",
    path: ordersPage,
    summary: `My ${place.singular} orders, as a page`,
    access: "user",
    responses: { "200": htmlAnswer("the caller's orders"), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      ordersPage,
      `const rows = await db.all("SELECT title FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", [${kind}, user.id]);
return html(reply, 200, ${listDocument}.replace("{rows}", rows.map((row) => "<li>" + escapeHtml(row.title) + "</li>").join("")));`,
    ),
    python: pyRoute(
      "GET",
      ordersPage,
      `user = require_user()
rows = db.all("SELECT title FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", (${kind}, user["id"]))
return html_page(200, ${listDocument}.replace("{rows}", "".join("<li>" + escape(row["title"]) + "</li>" for row in rows)))`,
    ),
  };
  const fixed =
    control === "readonly"
      ? `<p><label>${label(field)} <input type="text" name="${field}" value="${UNIT}" readonly></label></p>`
      : `<p>${label(field)}: ${UNIT} €</p><input type="hidden" name="${field}" value="${UNIT}">`;
  const csrf = ctx.server.auth === "cookie" ? '<input type="hidden" name="csrf_token" value="{csrf}">' : "";
  const document = pageDocument({
    title: `Order a ${place.singular}`,
    body: `<form method="post" action="${action}"><input type="hidden" name="sku" value="${SKU}">
<p><label>Quantity <input type="number" name="quantity" value="1" min="1" max="20" required></label></p>
${fixed}${csrf}<button type="submit">Place the order</button></form><p><a href="${ordersPage}">My orders</a></p>`,
  });
  return {
    endpoint: pageEndpoint(orderPage, `The order form for a ${place.singular}`, document),
    page: { path: orderPage, label: `Order a ${place.singular}`, listed: "menu" },
    alsoAt: [create],
    support: [orders],
    title: vulnerable
      ? `Client-controlled ${field}: ordering a ${place.singular} stores the ${field} the ${control} form field sends`
      : `The order form sends a ${control} ${field} with each ${place.singular} order`,
    ...(vulnerable
      ? {}
      : {
          why: computed
            ? `the ${field} is worked out from the product and the quantity; the field sent is never read`
            : `an order whose ${field} differs from the product's is refused (409)`,
        }),
    oracle: async (client) => {
      const marker = String(100000 + Math.floor(Math.random() * 900000));
      const reply = await client.ask({
        as: "alice",
        method: "POST",
        path: action,
        form: { sku: SKU, quantity: "1", [field]: marker },
      });
      const after = await client.ask({ as: "alice", path: ordersPage });
      if (after.status !== 200) throw new Error(`the orders page answered ${brief(after)}`);
      return verdict(
        after.text.includes(`for ${marker}.00`),
        `order with ${field} ${marker} → ${brief(reply)}`,
      );
    },
  };
}

function label(field: ClientPriceKnobs["field"]): string {
  return { price: "Price", total: "Total", unit_price: "Unit price", fee: "Fee" }[field];
}

// The JSON side: the catalogue serves each product's price, an order names a product and carries a price,
// and the order is read back by its id. The vulnerable handler stores the price sent; the safe twins take
// the catalogue's (the field is accepted and ignored) or refuse one that differs from it.
function buildCatalogPrice(row: Row<ClientPriceKnobs>, ctx: BuildContext): Built {
  const { field, guard = "computed" } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const key = JSON.stringify(field);
  const catalogue = `${place.base}/products`;
  const orders = `${place.base}/orders`;
  const order = `${orders}/{id}`;
  const amount = vulnerable
    ? { node: "sent", python: "sent" }
    : { node: "Number(product.price)", python: 'float(product["price"])' };
  const check =
    !vulnerable && guard === "checked"
      ? {
          node: `if (Math.abs(sent - Number(product.price)) > 0.001) return reply.code(409).send({ error: "the ${field} has changed" });\n`,
          python: `if abs(sent - float(product["price"])) > 0.001:\n    return jsonify(error="the ${field} has changed"), 409\n`,
        }
      : { node: "", python: "" };
  const create: Endpoint = {
    method: "POST",
    path: orders,
    summary: `Order a product as a ${place.singular}`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ product_id: INT, [field]: { type: "number", exclusiveMinimum: 0 } }, [
        "product_id",
        field,
      ]),
      required: true,
    },
    responses: {
      "201": json("the order", obj({ id: INT, product_id: INT, [field]: { type: "number" } })),
      "400": err("an unknown product or a malformed amount"),
      ...(guard === "checked" && !vulnerable
        ? { "409": err(`the ${field} differs from the catalogue's`) }
        : {}),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      orders,
      `const body = request.body ?? {};
const productId = Number(body.product_id);
// An id outside the column's range would be the database's error (a 500), not an unknown product.
const product = Number.isInteger(productId) && productId > 0 && productId < 2 ** 31
  ? await db.get("SELECT id, sku, price FROM products WHERE id = ${ph(1)}", [productId])
  : undefined;
if (!product) return reply.code(400).send({ error: "unknown product" });
const sent = Number(body[${key}]);
if (!Number.isFinite(sent) || sent <= 0) return reply.code(400).send({ error: "${field} must be an amount" });
${check.node}const amount = ${amount.node};
const row = await db.get(
  "INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}) RETURNING id",
  [crypto.randomUUID(), ${kind}, user.id, user.org_id, product.id + " at " + amount.toFixed(2), new Date().toISOString()],
);
return reply.code(201).send({ id: row.id, product_id: product.id, ${key}: amount });`,
    ),
    python: pyRoute(
      "POST",
      orders,
      `user = require_user()
body = request.get_json(silent=True) or {}
product_id = body.get("product_id")
in_range = isinstance(product_id, int) and not isinstance(product_id, bool) and 0 < product_id < 2 ** 31
product = db.get("SELECT id, sku, price FROM products WHERE id = ${ph(1)}", (product_id,)) if in_range else None
if not product:
    return jsonify(error="unknown product"), 400
sent = body.get(${key})
if isinstance(sent, bool) or not isinstance(sent, (int, float)) or sent <= 0:
    return jsonify(error="${field} must be an amount"), 400
${check.python}amount = ${amount.python}
row = db.get(
    "INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}) RETURNING id",
    (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], f"{product['id']} at {amount:.2f}", datetime.utcnow().isoformat()),
)
return jsonify(id=row["id"], product_id=product["id"], ${field}=amount), 201`,
    ),
  };
  const list: Endpoint = {
    method: "GET",
    path: catalogue,
    summary: `The products a ${place.singular} can order, with their prices`,
    access: "user",
    responses: { "200": json("the products", listOf(PRODUCT)), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      catalogue,
      'return reply.send({ items: await db.all("SELECT id, sku, name, price FROM products ORDER BY id LIMIT 5", []) });',
    ),
    python: pyRoute(
      "GET",
      catalogue,
      'require_user()\nreturn jsonify(items=db.all("SELECT id, sku, name, price FROM products ORDER BY id LIMIT 5", ()))',
    ),
  };
  const read: Endpoint = {
    method: "GET",
    path: order,
    summary: `One of my product orders as a ${place.singular}`,
    access: "user",
    parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", pattern: ID_PATTERN } }],
    responses: {
      "200": json("the order", obj({ id: INT, product_id: INT, [field]: { type: "number" } })),
      "404": err("no such order of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      order,
      `const row = /^[0-9]{1,9}$/.test(String(request.params["id"]))
  ? await db.get("SELECT id, title FROM records WHERE id = ${ph(1)} AND kind = ${ph(2)} AND owner_id = ${ph(3)}", [Number(request.params["id"]), ${kind}, user.id])
  : undefined;
if (!row) return reply.code(404).send({ error: "no such order" });
const [productId, amount] = row.title.split(" at ");
return reply.send({ id: row.id, product_id: Number(productId), ${key}: Number(amount) });`,
    ),
    python: pyRoute(
      "GET",
      order,
      `user = require_user()
row = db.get("SELECT id, title FROM records WHERE id = ${ph(1)} AND kind = ${ph(2)} AND owner_id = ${ph(3)}", (int(id), ${kind}, user["id"])) if re.fullmatch(r"[0-9]{1,9}", id) else None
if not row:
    return jsonify(error="no such order"), 404
product_id, amount = row["title"].split(" at ")
return jsonify(id=row["id"], product_id=int(product_id), ${field}=float(amount))`,
    ),
  };
  return {
    endpoint: create,
    support: [list, read],
    title: vulnerable
      ? `Client-controlled ${field}: an order stores the ${field} its JSON body names, not the catalogue's`
      : `An order's JSON body carries a ${field} beside the product it names`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "computed"
              ? `the ${field} is the catalogue's; the one sent is checked for shape and never stored`
              : `an order whose ${field} differs from the catalogue's is refused (409)`,
        }),
    oracle: async (client) => {
      const marker = 100000 + Math.floor(Math.random() * 900000);
      const reply = await client.ask({
        as: "alice",
        method: "POST",
        path: orders,
        json: { product_id: 1, [field]: marker },
      });
      const id = (reply.json as { id?: number } | undefined)?.id;
      if (id === undefined) return verdict(false, `order with ${field} ${marker} → ${brief(reply)}`);
      const after = await client.ask({ as: "alice", path: `${orders}/${id}` });
      if (after.status !== 200) throw new Error(`the order answered ${brief(after)}`);
      return verdict(
        Number((after.json as Record<string, unknown>)[field]) === marker,
        `order with ${field} ${marker} → ${brief(reply)}, read back ${brief(after)}`,
      );
    },
  };
}
