import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, STR } from "../schemas.ts";
import { buildIdempotentPayment } from "./data-races-idempotency.ts";
import { buildParentTransition } from "./data-transitions-parent.ts";
import {
  answerRow,
  answerSchema,
  createOwn,
  ID_PATTERN,
  type OwnedTable,
  ownedResource,
  ownRowOr404,
  readOwn,
  tableDdl,
} from "./owned-table.ts";

// One-shot state transitions (CWE-841 improper enforcement of a behavioural workflow, CWE-837 a single
// unique action, OWASP WSTG-BUSL-06/09): returning a loan puts the copy back in stock, paying a bill adds
// to what was paid, cancelling a booking refunds it. Each moves a state once; done twice it corrupts the
// counter it feeds. Vulnerable: the handler never checks the state (repeated-transition), or checks it in a
// read and writes later without the state in the UPDATE's WHERE, so two simultaneous requests both pass
// the check (double-submit-race, CWE-362). Safe: the state is part of the UPDATE's WHERE and a repeat is
// refused with 409, or answered idempotently without a second effect.

export type TransitionVerb = "return" | "pay" | "cancel" | "redeem" | "approve";

export interface TransitionKnobs {
  verb: TransitionVerb;
  /** How the safe twin answers a repeat: 409, or 200 with the row unchanged. */
  repeat?: "conflict" | "idempotent";
  /** Where the number the step moves is kept: on the record, or on the parent it was created under. */
  counter?: "own" | "parent";
  /** Races only: a one-shot step (default), or a payment made once per Idempotency-Key. */
  shape?: "transition" | "idempotency-key";
}

export interface VerbSpec {
  from: string;
  to: string;
  counter: string;
  /** The amount the transition adds: a constant or another column of the row. */
  delta: string;
  /** Extra columns the row carries (the amount a payment or refund is worth). */
  extra: Array<{ name: string; value: number }>;
  words: string;
}

export const VERBS: Record<TransitionVerb, VerbSpec> = {
  return: {
    from: "on-loan",
    to: "returned",
    counter: "in_stock",
    delta: "1",
    extra: [],
    words: "Return a loan (puts the copy back in stock)",
  },
  pay: {
    from: "due",
    to: "paid",
    counter: "paid_total",
    delta: "amount_due",
    extra: [{ name: "amount_due", value: 25 }],
    words: "Pay a bill (adds its amount to what was paid)",
  },
  cancel: {
    from: "booked",
    to: "cancelled",
    counter: "refunded",
    delta: "price",
    extra: [{ name: "price", value: 40 }],
    words: "Cancel a booking (refunds its price)",
  },
  redeem: {
    from: "issued",
    to: "redeemed",
    counter: "points",
    delta: "100",
    extra: [],
    words: "Redeem a voucher (credits 100 points)",
  },
  approve: {
    from: "pending",
    to: "approved",
    counter: "credit_limit",
    delta: "500",
    extra: [],
    words: "Approve a request (raises the credit limit by 500)",
  },
};

function transitionTable(ctx: BuildContext, spec: VerbSpec): OwnedTable {
  return {
    name: ctx.place.slug,
    columns: [
      { name: "status", ddl: `TEXT NOT NULL DEFAULT '${spec.from}'`, schema: STR },
      { name: spec.counter, ddl: "INTEGER NOT NULL DEFAULT 0", schema: INT },
      ...spec.extra.map((column) => ({
        name: column.name,
        ddl: `INTEGER NOT NULL DEFAULT ${column.value}`,
        schema: INT,
      })),
    ],
  };
}

export type Flaw = "unchecked" | "check-then-act" | "guarded";

/** The handler body after `row` holds the caller's row. */
function transitionCode(ctx: BuildContext, table: OwnedTable, spec: VerbSpec, flaw: Flaw, repeat: string) {
  const { ph } = ctx;
  const set = `status = '${spec.to}', ${spec.counter} = ${spec.counter} + ${spec.delta}`;
  const answer = answerRow(ctx, table);
  if (flaw === "unchecked") {
    const sql = `UPDATE ${table.name} SET ${set} WHERE id = ${ph(1)}`;
    return {
      node: `await db.run("${sql}", [row.id]);\n${answer.node}`,
      python: `db.run("${sql}", (row["id"],))\n${answer.python}`,
    };
  }
  if (flaw === "check-then-act") {
    // The state is checked in a read; the write comes after the provider is told (a slow outside call,
    // 50 ms here) and does not repeat the check, so two requests inside that window both pass.
    const sql = `UPDATE ${table.name} SET ${set} WHERE id = ${ph(1)}`;
    return {
      node: `if (row.status !== "${spec.from}") return reply.code(409).send({ error: "already ${spec.to}" });
await new Promise((resolve) => setTimeout(resolve, 50));
await db.run("${sql}", [row.id]);
${answer.node}`,
      python: `if row["status"] != "${spec.from}":
    return jsonify(error="already ${spec.to}"), 409
time.sleep(0.05)
db.run("${sql}", (row["id"],))
${answer.python}`,
    };
  }
  const sql = `UPDATE ${table.name} SET ${set} WHERE id = ${ph(1)} AND status = '${spec.from}'`;
  const refuse =
    repeat === "idempotent"
      ? { node: "", python: "" }
      : {
          node: `if (changed === 0) return reply.code(409).send({ error: "already ${spec.to}" });\n`,
          python: `if changed == 0:\n    return jsonify(error="already ${spec.to}"), 409\n`,
        };
  return {
    node: `const changed = (await db.run("${sql}", [row.id])).changes;\n${refuse.node}${answer.node}`,
    python: `changed = db.run("${sql}", (row["id"],))\n${refuse.python}${answer.python}`,
  };
}

function buildTransition(row: Row<TransitionKnobs>, ctx: BuildContext, race: boolean): Built {
  if (row.knobs.counter === "parent") return buildParentTransition(row, ctx, race);
  const vulnerable = row.label === "vulnerable";
  const spec = VERBS[row.knobs.verb];
  const table = transitionTable(ctx, spec);
  const flaw: Flaw = !vulnerable ? "guarded" : race ? "check-then-act" : "unchecked";
  const repeat = row.knobs.repeat ?? "conflict";
  const path = `${ctx.place.base}/{id}/${row.knobs.verb}`;
  const lookup = ownRowOr404(ctx, table);
  const code = transitionCode(ctx, table, spec, flaw, repeat);
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: spec.words,
    description: `Moves a ${ctx.place.singular} from ${spec.from} to ${spec.to}, once: ${repeat === "idempotent" && !vulnerable ? "a repeat changes nothing" : `a repeat is refused with 409`}.`,
    access: "user",
    alwaysDocumented: true,
    parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", pattern: ID_PATTERN } }],
    responses: {
      "200": json(`the ${ctx.place.singular}, now ${spec.to}`, answerSchema(table)),
      "404": err("no such record of the caller's"),
      "409": err(`already ${spec.to}`),
      ...guarded("user"),
    },
    node: nodeUserRoute("POST", path, `${lookup.node}\n${code.node}`),
    python: pyRoute("POST", path, `user = require_user()\n${lookup.python}\n${code.python}`),
  };
  const noun = `${spec.words.split(" (")[0]!.toLowerCase()}`;
  const title = vulnerable
    ? race
      ? `Race: simultaneous requests to ${noun} all pass its state check, so ${spec.counter} grows more than once (check-then-act)`
      : `${noun} can be repeated: each repeat adds to ${spec.counter} again (the state is never checked)`
    : `${noun}: a repeat ${repeat === "idempotent" ? "changes nothing" : "is refused with 409"}`;
  return {
    endpoint,
    support: ownedResource(ctx, table, { body: {}, insert: [] }),
    tables: [tableDdl(table)],
    title,
    ...(vulnerable
      ? {}
      : {
          why: `the UPDATE's WHERE requires status '${spec.from}', so only one request (of any number, at once or in turn) moves it and adds to ${spec.counter}`,
        }),
    oracle: async (client) => {
      const once = await expectedDelta(client, ctx, spec, row.knobs.verb);
      const applied: number[] = [];
      for (let round = 0; round < (race ? 3 : 1); round += 1) {
        const created = await createOwn(client, "alice", ctx.place.base, { title: `transition ${round}` });
        const send = () =>
          client.ask({
            as: "alice",
            method: "POST",
            path: `${ctx.place.base}/${String(created.id)}/${row.knobs.verb}`,
          });
        const answers = race
          ? await Promise.all(Array.from({ length: 6 }, send))
          : [await send(), await send()];
        if (answers[0]!.status >= 500) throw new Error(`transition failed: ${brief(answers[0]!)}`);
        const after = await readOwn(client, "alice", ctx.place.base, created.id);
        applied.push(Number(after[spec.counter]) / once);
      }
      return verdict(
        applied.some((times) => times > 1),
        `${spec.counter} applied ${applied.join(", ")} time(s) (one transition adds ${once})`,
      );
    },
  };
}

/** What one transition adds, measured on a fresh row (never zero). */
async function expectedDelta(
  client: Parameters<Built["oracle"]>[0],
  ctx: BuildContext,
  spec: VerbSpec,
  verb: TransitionVerb,
): Promise<number> {
  const created = await createOwn(client, "alice", ctx.place.base, { title: "measure" });
  const answer = await client.ask({
    as: "alice",
    method: "POST",
    path: `${ctx.place.base}/${String(created.id)}/${verb}`,
  });
  const after = answer.json as Record<string, unknown> | null;
  const delta = Number(after?.[spec.counter]) - Number(created[spec.counter]);
  if (answer.status !== 200 || !(delta > 0)) throw new Error(`first ${verb} did not add: ${brief(answer)}`);
  return delta;
}

export const buildRepeatedTransition = (row: Row<TransitionKnobs>, ctx: BuildContext): Built =>
  buildTransition(row, ctx, false);

export const buildDoubleSubmitRace = (row: Row<TransitionKnobs>, ctx: BuildContext): Built =>
  row.knobs.shape === "idempotency-key" ? buildIdempotentPayment(row, ctx) : buildTransition(row, ctx, true);
