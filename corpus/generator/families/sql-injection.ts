import type { Row } from "../../model/row.ts";
import { brief, itemsOf, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { methodFor, placed } from "../../oracles/placing.ts";
import { type InputLocation, inputBody, inputParam, nodeRoute, pyRoute, readInput } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, json, listOf, PRODUCT, STR } from "../schemas.ts";

// SQL injection over the products table, in the contexts sqlmap's boundary list enumerates: a string
// literal closed by `'`, `')` or `'))`, a `"`-quoted literal or identifier, a bare number, a LIKE pattern
// (`%'`), an IN list, an ORDER BY key and a LIMIT count, with the input in any part of the request. The
// error style decides what a broken query looks like from outside. Safe twins use the same query with the
// value bound as a parameter, an allow-listed sort key or an integer cast.

export type SqlShape =
  | "string"
  | "numeric"
  | "like"
  | "paren"
  | "double-paren"
  | "dquote"
  | "in-list"
  | "order-by"
  | "limit";

export interface SqlKnobs {
  shape: SqlShape;
  input: InputLocation;
  /** verbatim: the DB's message in a 500; bare-500: a generic 500; swallowed: an empty answer. */
  errors: "verbatim" | "bare-500" | "swallowed";
}

interface ShapeSpec {
  param: string;
  normal: string;
  /** Payloads that make the condition true / false once the boundary is closed. */
  truthy: string;
  falsy: string;
  /** Vulnerable query text as an expression in both languages, given the input's variable name. */
  query: (input: string) => string;
  /** The safe twin's statement: parameterised, allow-listed or cast. */
  guard: "parameterised" | "allow-listed sort key" | "integer cast" | "allow-listed column";
}

const SELECT = "SELECT id, sku, name, price FROM products";

function shapeSpec(shape: SqlShape, postgres: boolean): ShapeSpec {
  switch (shape) {
    case "string":
      return {
        param: "name",
        normal: "anchor bolt",
        truthy: "zz' OR 1=1-- ",
        falsy: "zz' OR 1=2-- ",
        query: (v) => `"${SELECT} WHERE name = '" + ${v} + "' ORDER BY id"`,
        guard: "parameterised",
      };
    case "numeric":
      return {
        param: "id",
        normal: "1",
        truthy: "0 OR 1=1",
        falsy: "0 OR 1=2",
        query: (v) => `"${SELECT} WHERE id = " + ${v} + " ORDER BY id"`,
        guard: "integer cast",
      };
    case "like":
      return {
        param: "q",
        normal: "bolt",
        truthy: "zz%' OR 1=1-- ",
        falsy: "zz%' OR 1=2-- ",
        query: (v) => `"${SELECT} WHERE name LIKE '%" + ${v} + "%' ORDER BY id"`,
        guard: "parameterised",
      };
    case "paren":
      return {
        param: "category",
        normal: "hardware",
        truthy: "zz') OR 1=1-- ",
        falsy: "zz') OR 1=2-- ",
        query: (v) => `"${SELECT} WHERE (category = '" + ${v} + "' AND stock >= 0) ORDER BY id"`,
        guard: "parameterised",
      };
    case "double-paren":
      return {
        param: "region",
        normal: "eu",
        truthy: "zz')) OR 1=1-- ",
        falsy: "zz')) OR 1=2-- ",
        query: (v) => `"${SELECT} WHERE ((region = '" + ${v} + "') AND (price > 0)) ORDER BY id"`,
        guard: "parameterised",
      };
    case "dquote":
      // SQLite reads a double-quoted word as a string when no column has that name; PostgreSQL reads it
      // as an identifier, so there the input picks a column.
      return postgres
        ? {
            param: "field",
            normal: "category",
            truthy: 'category" FROM products WHERE 1=1-- ',
            falsy: 'category" FROM products WHERE 1=2-- ',
            query: (v) =>
              `"SELECT id, sku, name, price, \\"" + ${v} + "\\" AS detail FROM products ORDER BY id"`,
            guard: "allow-listed column",
          }
        : {
            param: "sku",
            normal: "SKU-100",
            truthy: 'zz" OR 1=1-- ',
            falsy: 'zz" OR 1=2-- ',
            query: (v) => `"${SELECT} WHERE sku = \\"" + ${v} + "\\" ORDER BY id"`,
            guard: "parameterised",
          };
    case "in-list":
      return {
        param: "ids",
        normal: "1,2",
        truthy: "0) OR (1=1",
        falsy: "0) OR (1=2",
        query: (v) => `"${SELECT} WHERE id IN (" + ${v} + ") ORDER BY id"`,
        guard: "integer cast",
      };
    case "order-by":
      return {
        param: "sort",
        normal: "price",
        truthy: "(CASE WHEN 1=1 THEN id ELSE price END)",
        falsy: "(CASE WHEN 1=2 THEN id ELSE price END)",
        query: (v) => `"${SELECT} ORDER BY " + ${v}`,
        guard: "allow-listed sort key",
      };
    case "limit":
      return {
        param: "limit",
        normal: "3",
        truthy: "(CASE WHEN 1=1 THEN 3 ELSE 1 END)",
        falsy: "(CASE WHEN 1=2 THEN 3 ELSE 1 END)",
        query: (v) => `"${SELECT} ORDER BY id LIMIT " + ${v}`,
        guard: "integer cast",
      };
  }
}

/** The safe statement and its checks, per stack; `v` is the input variable. */
function safeCode(shape: SqlShape, postgres: boolean, ctx: BuildContext, v: string) {
  const ph = ctx.ph;
  const node = (check: string, sql: string, params: string) =>
    `${check}rows = await db.all(${sql}, ${params});`.trim();
  const py = (check: string, sql: string, params: string) =>
    `${check}rows = db.all(${sql}, ${params})`.trim();
  switch (shape) {
    case "numeric":
      return {
        node: node(
          `if (!/^[0-9]{1,9}$/.test(${v})) return reply.code(400).send({ error: "id must be an integer" });\n`,
          `"${SELECT} WHERE id = ${ph(1)} ORDER BY id"`,
          `[Number(${v})]`,
        ),
        python: py(
          `if not re.fullmatch(r"[0-9]{1,9}", ${v}):\n    return jsonify(error="id must be an integer"), 400\n`,
          `"${SELECT} WHERE id = ${ph(1)} ORDER BY id"`,
          `(int(${v}),)`,
        ),
      };
    case "in-list":
      return {
        node: node(
          `const parts = ${v}.split(",").map((part) => part.trim());\nif (!parts.every((part) => /^[0-9]{1,9}$/.test(part))) return reply.code(400).send({ error: "ids must be integers" });\n`,
          `"${SELECT} WHERE id IN (" + parts.map((_, index) => p(index + 1)).join(", ") + ") ORDER BY id"`,
          "parts.map(Number)",
        ),
        python: py(
          `parts = [part.strip() for part in ${v}.split(",")]\nif not all(re.fullmatch(r"[0-9]{1,9}", part) for part in parts):\n    return jsonify(error="ids must be integers"), 400\n`,
          `"${SELECT} WHERE id IN (" + ", ".join(p(index + 1) for index in range(len(parts))) + ") ORDER BY id"`,
          "[int(part) for part in parts]",
        ),
      };
    case "order-by":
      return {
        node: node(
          `const SORT_KEYS = { name: "name", price: "price", sku: "sku", id: "id" };\nif (!Object.hasOwn(SORT_KEYS, ${v})) return reply.code(400).send({ error: "unknown sort key" });\n`,
          `"${SELECT} ORDER BY " + SORT_KEYS[${v}]`,
          "[]",
        ),
        python: py(
          `SORT_KEYS = {"name": "name", "price": "price", "sku": "sku", "id": "id"}\nif ${v} not in SORT_KEYS:\n    return jsonify(error="unknown sort key"), 400\n`,
          `"${SELECT} ORDER BY " + SORT_KEYS[${v}]`,
          "()",
        ),
      };
    case "limit":
      return {
        node: node(
          `if (!/^[0-9]{1,3}$/.test(${v})) return reply.code(400).send({ error: "limit must be an integer from 0 to 999" });\n`,
          `"${SELECT} ORDER BY id LIMIT ${ph(1)}"`,
          `[Number(${v})]`,
        ),
        python: py(
          `if not re.fullmatch(r"[0-9]{1,3}", ${v}):\n    return jsonify(error="limit must be an integer from 0 to 999"), 400\n`,
          `"${SELECT} ORDER BY id LIMIT ${ph(1)}"`,
          `(int(${v}),)`,
        ),
      };
    case "dquote":
      if (postgres) {
        return {
          node: node(
            `const COLUMNS = ["category", "region", "stock"];\nif (!COLUMNS.includes(${v})) return reply.code(400).send({ error: "unknown field" });\n`,
            `"SELECT id, sku, name, price, \\"" + ${v} + "\\" AS detail FROM products ORDER BY id"`,
            "[]",
          ),
          python: py(
            `COLUMNS = ["category", "region", "stock"]\nif ${v} not in COLUMNS:\n    return jsonify(error="unknown field"), 400\n`,
            `"SELECT id, sku, name, price, \\"" + ${v} + "\\" AS detail FROM products ORDER BY id"`,
            "()",
          ),
        };
      }
      return {
        node: node("", `"${SELECT} WHERE sku = ${ph(1)} ORDER BY id"`, `[${v}]`),
        python: py("", `"${SELECT} WHERE sku = ${ph(1)} ORDER BY id"`, `(${v},)`),
      };
    default: {
      const condition = {
        string: `name = ${ph(1)}`,
        like: `name LIKE ${ph(1)}`,
        paren: `(category = ${ph(1)} AND stock >= 0)`,
        "double-paren": `((region = ${ph(1)}) AND (price > 0))`,
      }[shape];
      const value =
        shape === "like" ? { node: `"%" + ${v} + "%"`, python: `"%" + ${v} + "%"` } : { node: v, python: v };
      return {
        node: node("", `"${SELECT} WHERE ${condition} ORDER BY id"`, `[${value.node}]`),
        python: py("", `"${SELECT} WHERE ${condition} ORDER BY id"`, `(${value.python},)`),
      };
    }
  }
}

const HEADER_NAMES: Partial<Record<SqlShape, string>> = { string: "X-Product-Name", numeric: "X-Product-Id" };

export function buildSqlInjection(row: Row<SqlKnobs>, ctx: BuildContext): Built {
  const { shape, input, errors } = row.knobs;
  const postgres = ctx.server.database === "postgres";
  const spec = shapeSpec(shape, postgres);
  const name = input === "header" ? (HEADER_NAMES[shape] ?? "X-Filter") : spec.param;
  const variable = "value";
  const method = methodFor(input);
  const path =
    input === "path"
      ? `${ctx.place.base}/{${spec.param}}`
      : input === "json" || input === "form"
        ? `${ctx.place.base}/search`
        : ctx.place.base;
  const vulnerable = row.label === "vulnerable";
  const read = { node: readInput("node", input, name), python: readInput("python", input, name) };

  let nodeBody: string;
  let pythonBody: string;
  if (vulnerable) {
    const sql = spec.query(variable);
    const nodeCatch = {
      verbatim: "return reply.code(500).send({ error: String(error.message) });",
      "bare-500": "",
      swallowed: "return { items: [] };",
    }[errors];
    const pyCatch = {
      verbatim: "return jsonify(error=str(error)), 500",
      "bare-500": "",
      swallowed: "return jsonify(items=[])",
    }[errors];
    nodeBody =
      errors === "bare-500"
        ? `const rows = await db.all(${sql});\nreturn { items: rows };`
        : `let rows;\ntry {\n  rows = await db.all(${sql});\n} catch (error) {\n  ${nodeCatch}\n}\nreturn { items: rows };`;
    pythonBody =
      errors === "bare-500"
        ? `rows = db.all(${sql})\nreturn jsonify(items=rows)`
        : `try:\n    rows = db.all(${sql})\nexcept Exception as error:\n    ${pyCatch}\nreturn jsonify(items=rows)`;
  } else {
    const safe = safeCode(shape, postgres, ctx, variable);
    nodeBody = `let rows;\n${safe.node}\nreturn { items: rows };`;
    pythonBody = `${safe.python}\nreturn jsonify(items=rows)`;
  }
  const lead = {
    node: `const user = await requireUser(request, reply);\nif (!user) return reply;\nconst ${variable} = ${read.node};\n`,
    python: `require_user()\n${variable} = ${read.python}\n`,
  };

  const itemSchema =
    shape === "dquote" && postgres
      ? { ...PRODUCT, properties: { ...(PRODUCT.properties as object), detail: {} } }
      : PRODUCT;
  const endpoint: Endpoint = {
    method,
    path,
    summary: `Find ${ctx.place.plural} by ${spec.param}`,
    access: "user",
    parameters: inputParam(input, name, STR, false),
    ...(inputBody(input, { [name]: STR }, []) ? { body: inputBody(input, { [name]: STR }, []) } : {}),
    responses: {
      "200": json("matching entries", listOf(itemSchema)),
      ...(vulnerable ? {} : { "400": err("the value is not acceptable") }),
      ...guarded("user"),
    },
    node: nodeRoute(method, path, lead.node + nodeBody),
    python: pyRoute(method, path, lead.python + pythonBody),
  };

  const context = `${shapeWords(shape, postgres)} in the ${where(input, name)}`;
  const errorWords = {
    verbatim: "the database error is returned",
    "bare-500": "a bare 500",
    swallowed: "errors are swallowed",
  }[errors];
  const compact = input === "header" || input === "cookie";
  const payload = (text: string) => (compact ? text.replaceAll(" ", "/**/") : text);
  return {
    endpoint,
    title: vulnerable
      ? `SQL injection through ${context} (${errorWords})`
      : `Search by ${context} looks injectable`,
    ...(vulnerable ? {} : { why: `the value reaches SQL only through ${article(spec.guard)} ${spec.guard}` }),
    ...(vulnerable && errors !== "swallowed"
      ? {
          collateral: {
            class: "unhandled-error" as const,
            title: `A quote in the ${where(input, name)} answers 500`,
          },
        }
      : {}),
    oracle: async (client: OracleClient) => {
      const base = { as: "alice" as const, method, path };
      const signature = async (value: string) => {
        const answer = await client.ask(placed(base, input, name, payload(value)));
        return {
          answer,
          text: `${answer.status}:${itemsOf(answer)
            .map((item) => item.id)
            .join(",")}`,
        };
      };
      const truthy = await signature(spec.truthy);
      const falsy = await signature(spec.falsy);
      const normal = await signature(spec.normal);
      if (vulnerable) {
        // The label also promises an error style: a lone quote must break the query the way it says.
        const broken = await signature(`${spec.normal}${shape === "dquote" ? '"' : "'"}`);
        const style =
          broken.answer.status === 500
            ? (broken.answer.json as { error?: string } | null)?.error === "internal error"
              ? "bare-500"
              : "verbatim"
            : broken.answer.status === 200 && itemsOf(broken.answer).length === 0
              ? "swallowed"
              : `unexpected ${broken.answer.status}`;
        if (style !== errors) return verdict(false, `error style is ${style}, the row says ${errors}`);
      }
      return verdict(
        truthy.text !== falsy.text,
        `true → ${brief(truthy.answer)}; false → ${brief(falsy.answer)}; normal → ${normal.text}`,
      );
    },
  };
}

function shapeWords(shape: SqlShape, postgres: boolean): string {
  return {
    string: "a quoted string",
    numeric: "a bare number",
    like: "a LIKE pattern",
    paren: "a string inside parentheses",
    "double-paren": "a string inside double parentheses",
    dquote: postgres ? "a double-quoted column name" : "a double-quoted string",
    "in-list": "an IN list",
    "order-by": "an ORDER BY key",
    limit: "a LIMIT count",
  }[shape];
}

function where(input: InputLocation, name: string): string {
  return {
    query: `query parameter ${name}`,
    path: `path segment {${name}}`,
    json: `JSON field ${name}`,
    form: `form field ${name}`,
    header: `header ${name}`,
    cookie: `cookie ${name}`,
  }[input];
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}
