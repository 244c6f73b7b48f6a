import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";
import type { TransitionKnobs } from "./data-transitions.ts";
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

// Double submission of a payment (CWE-837, CWE-362; the Idempotency-Key header of the IETF draft and of
// payment APIs): the client sends a key with each payment so that a retry is answered with the payment it
// already made. Vulnerable: the handler looks the key up, then calls the slow card processor, then inserts
// — two requests with one key inside that window both pay. Safe: the key is unique in the table and the
// insert is `ON CONFLICT DO NOTHING`, so the second request finds the first payment and pays nothing.

export function buildIdempotentPayment(row: Row<TransitionKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const account: OwnedTable = {
    name: place.slug,
    columns: [{ name: "paid_total", ddl: "INTEGER NOT NULL DEFAULT 0", schema: INT }],
  };
  const payments: OwnedTable = {
    name: `${place.slug}_payments`,
    columns: [
      { name: "parent_id", ddl: "INTEGER NOT NULL", schema: INT },
      { name: "amount", ddl: "INTEGER NOT NULL", schema: INT },
      { name: "idem_key", ddl: "TEXT NOT NULL", schema: STR },
    ],
  };
  const paymentsDdl = tableDdl(payments);
  if (!vulnerable)
    paymentsDdl.ddl += `\nCREATE UNIQUE INDEX ${payments.name}_key ON ${payments.name} (parent_id, idem_key);`;
  const idParam = {
    name: "id",
    in: "path" as const,
    required: true,
    schema: { type: "string", pattern: ID_PATTERN },
  };
  const path = `${place.base}/{id}/payments`;
  const lookup = ownRowOr404(ctx, account);
  const columns = selectList(payments);
  const existing = `SELECT ${columns} FROM ${payments.name} WHERE parent_id = ${ph(1)} AND idem_key = ${ph(2)}`;
  const insertColumns = "owner_id, title, parent_id, amount, idem_key";
  const values = `${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}`;
  const insert = vulnerable
    ? `INSERT INTO ${payments.name} (${insertColumns}) VALUES (${values}) RETURNING ${columns}`
    : `INSERT INTO ${payments.name} (${insertColumns}) VALUES (${values}) ON CONFLICT (parent_id, idem_key) DO NOTHING RETURNING ${columns}`;
  const charge = `UPDATE ${account.name} SET paid_total = paid_total + ${ph(1)} WHERE id = ${ph(2)}`;
  // Vulnerable: the key is looked up, then the card processor is called (a slow outside step, 50 ms here),
  // then the payment is inserted — nothing stops a second request with the same key inside that window.
  const node = vulnerable
    ? `const found = await db.get("${existing}", [row.id, key]);
if (found) return found;
await new Promise((resolve) => setTimeout(resolve, 50));
const payment = await db.get("${insert}", [user.id, "payment", row.id, amount, key]);
await db.run("${charge}", [amount, row.id]);
return reply.code(201).send(payment);`
    : `const payment = await db.get("${insert}", [user.id, "payment", row.id, amount, key]);
if (!payment) return await db.get("${existing}", [row.id, key]);
await db.run("${charge}", [amount, row.id]);
return reply.code(201).send(payment);`;
  const python = vulnerable
    ? `found = db.get("${existing}", (row["id"], key))
if found is not None:
    return jsonify(found)
time.sleep(0.05)
payment = db.get("${insert}", (user["id"], "payment", row["id"], amount, key))
db.run("${charge}", (amount, row["id"]))
return jsonify(payment), 201`
    : `payment = db.get("${insert}", (user["id"], "payment", row["id"], amount, key))
if payment is None:
    return jsonify(db.get("${existing}", (row["id"], key)))
db.run("${charge}", (amount, row["id"]))
return jsonify(payment), 201`;
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: `Pay towards one of my ${place.plural}`,
    description:
      "Send a fresh Idempotency-Key with each payment; a retry with the same key answers the payment already made and charges nothing.",
    access: "user",
    alwaysDocumented: true,
    parameters: [
      idParam,
      { name: "Idempotency-Key", in: "header", required: true, schema: { type: "string", maxLength: 64 } },
    ],
    body: {
      contentType: "application/json",
      schema: obj({ amount: { type: "integer", minimum: 1, maximum: 1000 } }),
      required: true,
    },
    responses: {
      "201": json("the new payment", answerSchema(payments)),
      "200": json("the payment this key already made", answerSchema(payments)),
      "400": err("amount out of range or no Idempotency-Key"),
      "404": err(`no such ${place.singular} of the caller's`),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      path,
      `${lookup.node}
const key = String(request.headers["idempotency-key"] ?? "");
const amount = (request.body ?? {}).amount;
if (!key || key.length > 64 || !Number.isInteger(amount) || amount < 1 || amount > 1000) {
  return reply.code(400).send({ error: "an Idempotency-Key and an amount of 1 to 1000 are required" });
}
${node}`,
    ),
    python: pyRoute(
      "POST",
      path,
      `user = require_user()
${lookup.python}
key = request.headers.get("Idempotency-Key", "")
amount = (request.get_json(silent=True) or {}).get("amount")
if not key or len(key) > 64 or not isinstance(amount, int) or isinstance(amount, bool) or not 1 <= amount <= 1000:
    return jsonify(error="an Idempotency-Key and an amount of 1 to 1000 are required"), 400
${python}`,
    ),
  };
  const readPath = `${place.base}/payments/{id}`;
  const paymentLookup = ownRowOr404(ctx, payments);
  const read: Endpoint = {
    method: "GET",
    path: readPath,
    summary: "Read one of my payments",
    access: "user",
    parameters: [idParam],
    responses: {
      "200": json("the payment", answerSchema(payments)),
      "404": err("no such record of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute("GET", readPath, `${paymentLookup.node}\nreturn row;`),
    python: pyRoute("GET", readPath, `user = require_user()\n${paymentLookup.python}\nreturn jsonify(row)`),
  };
  return {
    endpoint,
    support: [...ownedResource(ctx, account, { body: {}, insert: [] }), read],
    tables: [tableDdl(account), paymentsDdl],
    title: vulnerable
      ? "Race: simultaneous payments with one Idempotency-Key all pass its lookup and are all charged"
      : "A payment's Idempotency-Key is unique: a retry, at once or in turn, charges nothing",
    ...(vulnerable
      ? {}
      : {
          why: "a unique index on (account, key) and INSERT … ON CONFLICT DO NOTHING let only one payment per key in",
        }),
    oracle: async (client) => {
      const charged: number[] = [];
      for (let round = 0; round < 3; round += 1) {
        const account = await createOwn(client, "alice", place.base, { title: "account" });
        const key = `key-${round}-${Math.random().toString(36).slice(2, 10)}`;
        const answers = await Promise.all(
          Array.from({ length: 6 }, () =>
            client.ask({
              as: "alice",
              method: "POST",
              path: `${place.base}/${String(account.id)}/payments`,
              headers: { "idempotency-key": key },
              json: { amount: 30 },
            }),
          ),
        );
        if (!answers.some((answer) => answer.status === 201))
          throw new Error(`no payment made: ${brief(answers[0]!)}`);
        charged.push(Number((await readOwn(client, "alice", place.base, account.id)).paid_total) / 30);
      }
      return verdict(
        charged.some((times) => times > 1),
        `one key charged ${charged.join(", ")} time(s)`,
      );
    },
  };
}
