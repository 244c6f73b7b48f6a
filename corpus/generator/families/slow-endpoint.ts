import type { Row } from "../../model/row.ts";
import { brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";
import { createAs, ownedCollection, ownRecordRead, recordShape } from "./records.ts";

// Slow endpoints (CWE-1050, CWE-400 when it ties up workers): a handler that waits on slow work inline —
// a pricing service called for a report, a confirmation mailed before a create answers, a document rendered
// before an action on a record answers — so every caller waits most of a second. Reads and writes both: a
// timing probe that only times reads misses two of the three. Safe twins answer at once (the report from a
// cache, the mail and the rendering queued), with the same operations and answers.

export interface SlowEndpointKnobs {
  /** report: `GET base/summary`; create: `POST base`; action: `POST base/{id}/send` on the caller's record. */
  shape: "report" | "create" | "action";
}

/** Long enough to be unmistakable against the profiles' 500 ms budget, short enough for a nightly to afford. */
const DELAY_MS = 900;

const WAIT = {
  node: `await new Promise((resolve) => setTimeout(resolve, ${DELAY_MS}));\n`,
  python: `time.sleep(${DELAY_MS / 1000})\n`,
};
const NO_WAIT = { node: "", python: "" };

function summaryRead(ctx: BuildContext, wait: typeof WAIT): Endpoint {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/summary`;
  const sql = `SELECT COUNT(*) AS total FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)}`;
  return {
    method: "GET",
    path,
    summary: `Summary of my ${place.plural}, with their current prices`,
    access: "user",
    responses: { "200": json("the summary", obj({ total: INT, priced_at: STR })), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      path,
      `${wait.node}const row = await db.get("${sql}", [${kind}, user.id]);
return { total: Number(row.total), priced_at: new Date().toISOString() };`,
    ),
    python: pyRoute(
      "GET",
      path,
      `user = require_user()
${wait.python}row = db.get("${sql}", (${kind}, user["id"]))
return jsonify(total=int(row["total"]), priced_at=datetime.utcnow().isoformat())`,
    ),
  };
}

function sendAction(ctx: BuildContext, wait: typeof WAIT): Endpoint {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/{id}/send`;
  const find = `SELECT id FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}`;
  return {
    method: "POST",
    path,
    summary: `Send one of my ${place.plural} as a document to its recipients`,
    access: "user",
    parameters: [{ name: "id", in: "path", required: true, schema: STR }],
    responses: {
      "200": json("sent", obj({ id: INT, sent: { type: "boolean" } })),
      "404": err("no such record of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      path,
      `const id = String(request.params["id"]);
const row = /^[0-9]{1,9}$/.test(id) ? await db.get("${find}", [${kind}, Number(id), user.id]) : undefined;
if (!row) return reply.code(404).send({ error: "not found" });
${wait.node}return { id: row.id, sent: true };`,
    ),
    python: pyRoute(
      "POST",
      path,
      `user = require_user()
row = db.get("${find}", (${kind}, int(id), user["id"])) if re.fullmatch(r"[0-9]{1,9}", id) else None
if row is None:
    return jsonify(error="not found"), 404
${wait.python}return jsonify(id=row["id"], sent=True)`,
    ),
  };
}

/** Milliseconds a request takes, the fastest of two (a busy machine's pause must not make a fast one slow). */
async function fastestOf(client: OracleClient, send: () => ReturnType<OracleClient["ask"]>): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < 2; index += 1) {
    const started = performance.now();
    const answer = await send();
    if (answer.status >= 300) throw new Error(`expected success, got ${brief(answer)}`);
    times.push(performance.now() - started);
  }
  return Math.min(...times);
}

export function buildSlowEndpoint(row: Row<SlowEndpointKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const wait = vulnerable ? WAIT : NO_WAIT;
  const shape = recordShape("sequential");
  const base = ctx.place.base;
  const [create] = ownedCollection(ctx, shape, base, "owner", row.knobs.shape === "create" ? wait : NO_WAIT);
  const read = ownRecordRead(ctx, {
    node: 'return reply.code(404).send({ error: "not found" });',
    python: 'return jsonify(error="not found"), 404',
  });
  const words = {
    report: {
      endpoint: summaryRead(ctx, wait),
      slow: "calls the pricing service inline",
      fast: "answers from its cache",
    },
    create: {
      endpoint: create!,
      slow: "mails the confirmation before answering",
      fast: "queues the confirmation",
    },
    action: {
      endpoint: sendAction(ctx, wait),
      slow: "renders and sends the document inline",
      fast: "queues the sending",
    },
  }[row.knobs.shape];
  const endpoint = words.endpoint;
  // No list: the plain "list my …" collection returns every row, an unlisted finding of its own.
  const support = [create!, read].filter((operation) => operation !== endpoint);
  const key = `${endpoint.method} ${endpoint.path}`;
  return {
    endpoint,
    support,
    title: vulnerable
      ? `Slow endpoint: ${key} ${words.slow} (${DELAY_MS} ms per call)`
      : `${key} ${words.fast}`,
    ...(vulnerable ? {} : { why: `the slow work is not done inline: it ${words.fast}` }),
    alone: true,
    oracle: async (client) => {
      const id = row.knobs.shape === "action" ? await createAs(client, "alice", base, "slow check") : "";
      const ms = await fastestOf(client, () => {
        if (row.knobs.shape === "report") return client.ask({ as: "alice", path: `${base}/summary` });
        if (row.knobs.shape === "create")
          return client.ask({ as: "alice", method: "POST", path: base, json: { title: "slow check" } });
        return client.ask({ as: "alice", method: "POST", path: `${base}/${id}/send` });
      });
      return verdict(ms > DELAY_MS * 0.8, `fastest of two: ${Math.round(ms)} ms`);
    },
  };
}
