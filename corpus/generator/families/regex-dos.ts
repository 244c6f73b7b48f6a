import type { Row } from "../../model/row.ts";
import { type Answer, brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint, JsonSchema } from "../endpoint.ts";
import { err, guarded, json, obj, STR } from "../schemas.ts";
import {
  answerRow,
  answerSchema,
  createOwn,
  ID_PATTERN,
  type OwnedTable,
  ownedResource,
  ownRowOr404,
  tableDdl,
} from "./owned-table.ts";

// Regular expressions that backtrack catastrophically (CWE-1333, OWASP's "ReDoS" entry): a format check
// whose pattern nests one repetition inside another (`([a-z0-9]+[._-]?)*`), so a run of valid characters
// ending in one the pattern refuses makes the engine try every way of splitting the run before it fails;
// each extra character doubles the time. Both stacks' engines (Python's `re`, V8's Irregexp) backtrack. The
// check sits where real code puts it: an availability check's query, a creation's body, and the update of
// one of the caller's own records. The safe twins check the same format with a pattern that admits one way
// to match a run (one repetition, or repetitions split by a required separator).

export type PatternKind = "email" | "url" | "phone" | "username";

export interface RegexDosKnobs {
  /** Where the checked value travels: a check's query, a creation's JSON body, an own record's update. */
  input: "query" | "create" | "update";
  pattern: PatternKind;
  /** The field's name (it says what format it holds, as real fields do). */
  field: string;
  method?: "PUT" | "PATCH";
}

const PATTERNS: Record<PatternKind, { vulnerable: string; safe: string; example: string; words: string }> = {
  email: {
    vulnerable: String.raw`^([a-zA-Z0-9]+[._-]?)*[a-zA-Z0-9]+@[a-zA-Z0-9-]+(\.[a-zA-Z]{2,})+$`,
    safe: String.raw`^[a-zA-Z0-9._-]+@[a-zA-Z0-9-]+(\.[a-zA-Z]{2,})+$`,
    example: "ana.lopes@example.org",
    words: "an email address",
  },
  url: {
    vulnerable: String.raw`^(https?://)?([a-z0-9]+\.?)+(/[^\s]*)?$`,
    safe: String.raw`^(https?://)?[a-z0-9.-]+(/[^\s]*)?$`,
    example: "https://example.org/about",
    words: "a web address",
  },
  phone: {
    vulnerable: String.raw`^\+?([0-9]+[ -]?)+$`,
    safe: String.raw`^\+?[0-9]+([ -][0-9]+)*$`,
    example: "+351 912 345 678",
    words: "a phone number",
  },
  username: {
    vulnerable: "^([a-zA-Z0-9]+_?)+$",
    safe: "^[a-zA-Z0-9]+(_[a-zA-Z0-9]+)*$",
    example: "ana_lopes",
    words: "a user name",
  },
};

export function buildRegexDos(row: Row<RegexDosKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { field, input } = row.knobs;
  const kind = PATTERNS[row.knobs.pattern];
  const pattern = vulnerable ? kind.vulnerable : kind.safe;
  const check = formatCheck(field, pattern, kind.words);
  const fieldSchema: JsonSchema = { type: "string", maxLength: 120, example: kind.example };
  const built =
    input === "query"
      ? availabilityCheck(ctx, field, fieldSchema, check)
      : input === "create"
        ? checkedCreate(ctx, field, fieldSchema, check)
        : checkedUpdate(ctx, field, fieldSchema, check, row.knobs.method ?? "PUT");
  const where = `${built.endpoint.method} ${built.endpoint.path}`;
  return {
    ...built,
    title: vulnerable
      ? `ReDoS: ${field} of ${where} is checked with a pattern whose nested repetition backtracks exponentially`
      : `${where} checks ${field} with a regular expression (one way to match, linear time)`,
    ...(vulnerable
      ? {}
      : {
          why: `the pattern ${pattern} has no repetition inside a repetition: a refused input fails in linear time`,
        }),
    alone: true,
    oracle: async (client) => {
      const send = await built.sender(client);
      const ok = await send(kind.example);
      if (ok.status >= 300) throw new Error(`a well-formed ${field} was refused: ${brief(ok)}`);
      return backtrackingVerdict(send, row.knobs.pattern === "phone" ? "1" : "a");
    },
  };
}

interface Check {
  node: string;
  python: string;
}

/** Code that answers 400 unless `value` matches the pattern. */
function formatCheck(field: string, pattern: string, words: string): Check {
  const message = JSON.stringify(`${field} must be ${words}`);
  return {
    node: `if (!new RegExp(${JSON.stringify(pattern)}).test(value)) return reply.code(400).send({ error: ${message} });`,
    python: `if not re.match(${JSON.stringify(pattern)}, value):
    return jsonify(error=${message}), 400`,
  };
}

type Sender = (value: string) => Promise<Answer>;

interface Shape {
  endpoint: Endpoint;
  support?: Endpoint[];
  tables?: Built["tables"];
  sender: (client: OracleClient) => Promise<Sender>;
}

/** `GET base/check?field=…`: whether a value is free to use, after its format is checked. */
function availabilityCheck(ctx: BuildContext, field: string, schema: JsonSchema, check: Check): Shape {
  const path = `${ctx.place.base}/check`;
  const key = JSON.stringify(field);
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `Check whether ${field} is free to use for a ${ctx.place.singular}`,
    access: "user",
    parameters: [{ name: field, in: "query", required: true, schema }],
    responses: {
      "200": json("whether the value is free", obj({ available: { type: "boolean" } })),
      "400": err(`${field} is not well formed`),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `const value = String(request.query[${key}] ?? "");
${check.node}
return { available: true };`,
    ),
    python: pyRoute(
      "GET",
      path,
      `require_user()
value = request.args.get(${key}, "")
${check.python}
return jsonify(available=True)`,
    ),
  };
  return {
    endpoint,
    sender: async (client) => (value) => client.ask({ as: "alice", path, query: { [field]: value } }),
  };
}

/** `POST base` taking the checked field beside a title. */
function checkedCreate(ctx: BuildContext, field: string, schema: JsonSchema, check: Check): Shape {
  const table = fieldTable(ctx, field);
  const key = JSON.stringify(field);
  const [create, read] = ownedResource(ctx, table, {
    body: { [field]: schema },
    validate: {
      node: `const value = String(body[${key}] ?? "");\n${check.node}`,
      python: `value = str(body.get(${key}, ""))\n${check.python}`,
    },
    insert: [{ column: field, node: "value", python: "value" }],
  });
  return {
    endpoint: create!,
    support: [read!],
    tables: [tableDdl(table)],
    sender: async (client) => (value) =>
      client.ask({
        as: "alice",
        method: "POST",
        path: ctx.place.base,
        json: { title: "regex", [field]: value },
      }),
  };
}

/** `PUT`/`PATCH base/{id}`: the caller changes the checked field of a record of their own. */
function checkedUpdate(
  ctx: BuildContext,
  field: string,
  schema: JsonSchema,
  check: Check,
  method: "PUT" | "PATCH",
): Shape {
  const table = fieldTable(ctx, field);
  const key = JSON.stringify(field);
  // The creation takes a title only: the checked field is set by the update alone.
  const [create, read] = ownedResource(ctx, table, { body: {}, insert: [] });
  const path = `${ctx.place.base}/{id}`;
  const lookup = ownRowOr404(ctx, table);
  const answer = answerRow(ctx, table);
  const sql = `UPDATE ${table.name} SET ${field} = ${ctx.ph(1)} WHERE id = ${ctx.ph(2)}`;
  const endpoint: Endpoint = {
    method,
    path,
    summary: `Change the ${field} of one of my ${ctx.place.plural}`,
    access: "user",
    parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", pattern: ID_PATTERN } }],
    body: { contentType: "application/json", schema: obj({ [field]: schema }), required: true },
    responses: {
      "200": json(`the ${ctx.place.singular}`, answerSchema(table)),
      "400": err(`${field} is not well formed`),
      "404": err("no such record of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      method,
      path,
      `${lookup.node}
const value = String((request.body ?? {})[${key}] ?? "");
${check.node}
await db.run("${sql}", [value, row.id]);
${answer.node}`,
    ),
    python: pyRoute(
      method,
      path,
      `user = require_user()
${lookup.python}
value = str((request.get_json(silent=True) or {}).get(${key}, ""))
${check.python}
db.run("${sql}", (value, row["id"]))
${answer.python}`,
    ),
  };
  return {
    endpoint,
    support: [create!, read!],
    tables: [tableDdl(table)],
    sender: async (client) => {
      const own = await createOwn(client, "alice", ctx.place.base, { title: "regex" });
      return (value) =>
        client.ask({
          as: "alice",
          method,
          path: `${ctx.place.base}/${String(own.id)}`,
          json: { [field]: value },
        });
    },
  };
}

function fieldTable(ctx: BuildContext, field: string): OwnedTable {
  return {
    name: ctx.place.slug,
    columns: [{ name: field, ddl: "TEXT NOT NULL DEFAULT ''", schema: STR }],
  };
}

/** An answer this slow, several times the one four characters shorter, is a backtracking pattern. */
const SLOW_MS = 200;
const LONGEST = 32;

/**
 * Times a run of `letter`s ending in "!" at growing lengths, stopping at the first slow answer so no request
 * stalls the server for long: flawed when the time grew fourfold or more over four characters.
 */
async function backtrackingVerdict(send: Sender, letter: string) {
  const times: Array<{ length: number; ms: number }> = [];
  for (let length = 10; length <= LONGEST; length += 2) {
    const started = performance.now();
    const answer = await send(`${letter.repeat(length)}!`);
    const ms = Math.round(performance.now() - started);
    if (answer.status !== 400) throw new Error(`a malformed value was not refused: ${brief(answer)}`);
    times.push({ length, ms });
    if (ms < SLOW_MS) continue;
    const earlier = times.find((time) => time.length === length - 4);
    const grew = earlier !== undefined && ms >= 4 * Math.max(earlier.ms, 5);
    return verdict(grew, times.map((time) => `${time.length + 1} chars ${time.ms} ms`).join(", "));
  }
  return verdict(false, `no slow answer up to ${LONGEST + 1} characters (${times.at(-1)?.ms} ms)`);
}
