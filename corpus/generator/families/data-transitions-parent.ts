import type { Row } from "../../model/row.ts";
import { brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";
import type { Flaw, TransitionKnobs, VerbSpec } from "./data-transitions.ts";
import { VERBS } from "./data-transitions.ts";
import {
  answerRow,
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

// The same one-shot steps with the number kept on the parent the record was created under: returning a
// loan puts the copy back in its title's stock, paying a bill adds to its account's paid total. The step's
// own record only changes state; the effect lands one level up (`UPDATE parent SET n = n + …`), where a
// reader that looks only at the record would never see it move.

const CHILDREN: Record<TransitionKnobs["verb"], string> = {
  return: "loans",
  pay: "bills",
  cancel: "bookings",
  redeem: "vouchers",
  approve: "requests",
};

function deltaOf(spec: VerbSpec, stack: "node" | "python"): string {
  if (/^[0-9]+$/.test(spec.delta)) return spec.delta;
  return stack === "node" ? `row.${spec.delta}` : `row["${spec.delta}"]`;
}

export function buildParentTransition(row: Row<TransitionKnobs>, ctx: BuildContext, race: boolean): Built {
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const verb = row.knobs.verb;
  const spec = VERBS[verb];
  const child = CHILDREN[verb];
  const repeat = row.knobs.repeat ?? "conflict";
  const flaw: Flaw = !vulnerable ? "guarded" : race ? "check-then-act" : "unchecked";
  const parent: OwnedTable = {
    name: place.slug,
    columns: [{ name: spec.counter, ddl: "INTEGER NOT NULL DEFAULT 0", schema: INT }],
  };
  const items: OwnedTable = {
    name: `${place.slug}_${child}`,
    columns: [
      { name: "parent_id", ddl: "INTEGER NOT NULL", schema: INT },
      { name: "status", ddl: `TEXT NOT NULL DEFAULT '${spec.from}'`, schema: STR },
      ...spec.extra.map((column) => ({
        name: column.name,
        ddl: `INTEGER NOT NULL DEFAULT ${column.value}`,
        schema: INT,
      })),
    ],
  };
  const idParam = [
    { name: "id", in: "path" as const, required: true, schema: { type: "string", pattern: ID_PATTERN } },
  ];
  const parentLookup = ownRowOr404(ctx, parent);
  const createPath = `${place.base}/{id}/${child}`;
  const insert = `INSERT INTO ${items.name} (owner_id, title, parent_id) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}) RETURNING ${selectList(items)}`;
  const createChild: Endpoint = {
    method: "POST",
    path: createPath,
    summary: `Open a ${child.replace(/s$/, "")} on one of my ${place.plural}`,
    access: "user",
    parameters: idParam,
    body: {
      contentType: "application/json",
      schema: obj({ title: { type: "string", maxLength: 80 } }),
      required: true,
    },
    responses: {
      "201": json(`the new ${child.replace(/s$/, "")}`, answerSchema(items)),
      "400": err("title missing or longer than 80 characters"),
      "404": err(`no such ${place.singular} of the caller's`),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      createPath,
      `${parentLookup.node}
const title = (request.body ?? {}).title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) {
  return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
}
return reply.code(201).send(await db.get("${insert}", [user.id, title, row.id]));`,
    ),
    python: pyRoute(
      "POST",
      createPath,
      `user = require_user()
${parentLookup.python}
title = (request.get_json(silent=True) or {}).get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
return jsonify(db.get("${insert}", (user["id"], title, row["id"]))), 201`,
    ),
  };
  const itemLookup = ownRowOr404(ctx, items);
  const readPath = `${place.base}/${child}/{id}`;
  const readChild: Endpoint = {
    method: "GET",
    path: readPath,
    summary: `Read one of my ${child}`,
    access: "user",
    parameters: idParam,
    responses: {
      "200": json(`the ${child.replace(/s$/, "")}`, answerSchema(items)),
      "404": err("no such record of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute("GET", readPath, `${itemLookup.node}\nreturn row;`),
    python: pyRoute("GET", readPath, `user = require_user()\n${itemLookup.python}\nreturn jsonify(row)`),
  };
  const path = `${readPath}/${verb}`;
  const effect = `UPDATE ${parent.name} SET ${spec.counter} = ${spec.counter} + ${ph(1)} WHERE id = ${ph(2)}`;
  const applyEffect = {
    node: `await db.run("${effect}", [${deltaOf(spec, "node")}, row.parent_id]);`,
    python: `db.run("${effect}", (${deltaOf(spec, "python")}, row["parent_id"]))`,
  };
  const answer = answerRow(ctx, items);
  let code: { node: string; python: string };
  if (flaw === "guarded") {
    const move = `UPDATE ${items.name} SET status = '${spec.to}' WHERE id = ${ph(1)} AND status = '${spec.from}'`;
    const refuse =
      repeat === "idempotent"
        ? { node: "", python: "" }
        : {
            node: `if (changed === 0) return reply.code(409).send({ error: "already ${spec.to}" });\n`,
            python: `if changed == 0:\n    return jsonify(error="already ${spec.to}"), 409\n`,
          };
    code = {
      node: `const changed = (await db.run("${move}", [row.id])).changes;
${refuse.node}if (changed > 0) ${applyEffect.node}
${answer.node}`,
      python: `changed = db.run("${move}", (row["id"],))
${refuse.python}if changed > 0:
    ${applyEffect.python}
${answer.python}`,
    };
  } else {
    const move = `UPDATE ${items.name} SET status = '${spec.to}' WHERE id = ${ph(1)}`;
    // The race variant checks the state in the read above, then waits on a slow outside call (50 ms) before
    // writing without the check: requests inside that window all pass.
    const check =
      flaw === "check-then-act"
        ? {
            node: `if (row.status !== "${spec.from}") return reply.code(409).send({ error: "already ${spec.to}" });
await new Promise((resolve) => setTimeout(resolve, 50));\n`,
            python: `if row["status"] != "${spec.from}":\n    return jsonify(error="already ${spec.to}"), 409\ntime.sleep(0.05)\n`,
          }
        : { node: "", python: "" };
    code = {
      node: `${check.node}await db.run("${move}", [row.id]);\n${applyEffect.node}\n${answer.node}`,
      python: `${check.python}db.run("${move}", (row["id"],))\n${applyEffect.python}\n${answer.python}`,
    };
  }
  const endpoint: Endpoint = {
    method: "POST",
    path,
    summary: spec.words.replace(/\(.*\)/, `(updates its ${place.singular}'s ${spec.counter})`),
    description: `Moves a ${child.replace(/s$/, "")} from ${spec.from} to ${spec.to}, once.`,
    access: "user",
    alwaysDocumented: true,
    parameters: idParam,
    responses: {
      "200": json(`the ${child.replace(/s$/, "")}, now ${spec.to}`, answerSchema(items)),
      "404": err("no such record of the caller's"),
      "409": err(`already ${spec.to}`),
      ...guarded("user"),
    },
    node: nodeUserRoute("POST", path, `${itemLookup.node}\n${code.node}`),
    python: pyRoute("POST", path, `user = require_user()\n${itemLookup.python}\n${code.python}`),
  };
  const noun = spec.words.split(" (")[0]!.toLowerCase();
  return {
    endpoint,
    support: [...ownedResource(ctx, parent, { body: {}, insert: [] }), createChild, readChild],
    tables: [tableDdl(parent), tableDdl(items)],
    title: vulnerable
      ? race
        ? `Race: simultaneous requests to ${noun} all pass its state check, so the ${place.singular}'s ${spec.counter} grows more than once`
        : `${noun} can be repeated: each repeat adds to the ${place.singular}'s ${spec.counter} again`
      : `${noun}: a repeat ${repeat === "idempotent" ? "changes nothing" : "is refused with 409"}`,
    ...(vulnerable
      ? {}
      : {
          why: `the UPDATE's WHERE requires status '${spec.from}' and the ${spec.counter} moves only when it changed a row`,
        }),
    oracle: async (client) => {
      const once = await parentDelta(client, ctx, child, verb, spec.counter, 1);
      const applied: number[] = [];
      for (let round = 0; round < (race ? 3 : 1); round += 1) {
        applied.push((await parentDelta(client, ctx, child, verb, spec.counter, race ? 6 : 2, race)) / once);
      }
      return verdict(
        applied.some((times) => times > 1),
        `${place.singular}.${spec.counter} applied ${applied.join(", ")} time(s) (one step adds ${once})`,
      );
    },
  };
}

/** How far the parent's counter moves when `count` steps are sent to one fresh child (at once or in turn). */
async function parentDelta(
  client: OracleClient,
  ctx: BuildContext,
  child: string,
  verb: string,
  counter: string,
  count: number,
  together = false,
): Promise<number> {
  const parent = await createOwn(client, "alice", ctx.place.base, { title: "parent" });
  const item = await createOwn(client, "alice", `${ctx.place.base}/${String(parent.id)}/${child}`, {
    title: "step",
  });
  const send = () =>
    client.ask({
      as: "alice",
      method: "POST",
      path: `${ctx.place.base}/${child}/${String(item.id)}/${verb}`,
    });
  const answers = together
    ? await Promise.all(Array.from({ length: count }, send))
    : await Array.from({ length: count }).reduce<Promise<Array<Awaited<ReturnType<typeof send>>>>>(
        async (done) => [...(await done), await send()],
        Promise.resolve([]),
      );
  if (answers[0]!.status >= 500) throw new Error(`${verb} failed: ${brief(answers[0]!)}`);
  const after = await readOwn(client, "alice", ctx.place.base, parent.id);
  const delta = Number(after[counter]) - Number(parent[counter]);
  if (count === 1 && !(delta > 0))
    throw new Error(`one ${verb} did not move ${counter}: ${brief(answers[0]!)}`);
  return delta;
}
