// A small SQL tokenizer: enough to tell statements apart, normalise their literals and read their shape.
// It is not a parser; it never needs to be, because every question asked of a statement here is local
// (which tables, which columns compared to what, is there a LIMIT).
//
// Why not node-sql-parser (5.4, which knows the SQLite, PostgreSQL and MySQL dialects)? Measured against
// what this reader must read, it rejects too much of it: the statements qaas meets are often fragments of
// source (`WHERE id = ${id}`, psycopg2's `%s`), and on the demo's own statement log (204 shapes) its
// SQLite dialect refused 15, among them `task_id = 49.0` (a bound float) and every `ON CONFLICT … DO`
// upsert. A reader that refuses a statement learns nothing from it; this one reads every statement as far
// as its tokens go. Worth another look if a question ever needs a whole tree (nested subqueries, CTEs).

export type SqlTokenKind = "word" | "quoted" | "string" | "number" | "parameter" | "operator" | "punctuation";

export interface SqlToken {
  kind: SqlTokenKind;
  /** The text as written (strings keep their quotes; quoted identifiers lose theirs). */
  text: string;
  /** Lower-case for words and quoted identifiers, the text otherwise. */
  key: string;
}

const OPERATORS = [
  "<=",
  ">=",
  "<>",
  "!=",
  "==",
  "||",
  "::",
  "->>",
  "->",
  "=",
  "<",
  ">",
  "+",
  "-",
  "*",
  "/",
  "%",
];

/** Splits SQL into tokens; comments and whitespace are dropped. */
export function tokenizeSql(sql: string): SqlToken[] {
  const tokens: SqlToken[] = [];
  let index = 0;
  const push = (kind: SqlTokenKind, text: string, key = text) => tokens.push({ kind, text, key });
  while (index < sql.length) {
    const char = sql[index]!;
    const rest = sql.slice(index);
    if (/\s/.test(char)) {
      index += 1;
    } else if (rest.startsWith("--") || rest.startsWith("#")) {
      const end = sql.indexOf("\n", index);
      index = end < 0 ? sql.length : end + 1;
    } else if (rest.startsWith("/*")) {
      const end = sql.indexOf("*/", index + 2);
      index = end < 0 ? sql.length : end + 2;
    } else if (char === "'") {
      let end = index + 1;
      while (end < sql.length) {
        if (sql[end] === "'" && sql[end + 1] === "'") end += 2;
        else if (sql[end] === "'") break;
        else end += 1;
      }
      push("string", sql.slice(index, end + 1));
      index = end + 1;
    } else if (char === '"' || char === "`" || char === "[") {
      const close = char === "[" ? "]" : char;
      const end = sql.indexOf(close, index + 1);
      const stop = end < 0 ? sql.length : end;
      const name = sql.slice(index + 1, stop);
      push("quoted", name, name.toLowerCase());
      index = stop + 1;
    } else if (/[0-9]/.test(char) || (char === "." && /[0-9]/.test(sql[index + 1] ?? ""))) {
      const match = rest.match(/^(0x[0-9a-f]+|[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?)/i)!;
      push("number", match[0]);
      index += match[0].length;
    } else if (/[?$:@%]/.test(char)) {
      const match =
        rest.match(/^\?[0-9]*/) ??
        rest.match(/^\$[0-9]+/) ??
        rest.match(/^%\([A-Za-z_][A-Za-z0-9_]*\)s/) ??
        rest.match(/^%s/) ??
        rest.match(/^[:@$][A-Za-z_][A-Za-z0-9_]*/);
      if (match && !(char === ":" && sql[index + 1] === ":")) {
        push("parameter", match[0]);
        index += match[0].length;
      } else {
        const operator = OPERATORS.find((candidate) => rest.startsWith(candidate)) ?? char;
        push("operator", operator);
        index += operator.length;
      }
    } else if (/[A-Za-z_\u0080-\uffff]/.test(char)) {
      const match = rest.match(/^[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/)!;
      push("word", match[0], match[0].toLowerCase());
      index += match[0].length;
    } else if ("(),;.".includes(char)) {
      push("punctuation", char);
      index += 1;
    } else {
      const operator = OPERATORS.find((candidate) => rest.startsWith(candidate)) ?? char;
      push("operator", operator);
      index += operator.length;
    }
  }
  return tokens;
}

const LEADING_VERB = /^\s*(\(\s*)*(select|insert|update|delete|with|replace|upsert)\b/i;

/** Whether a string from code or a log line is an SQL statement worth reading (not a fragment or prose). */
export function looksLikeSql(text: string): boolean {
  if (!LEADING_VERB.test(text)) return false;
  const verb = text
    .trim()
    .replace(/^\(+\s*/, "")
    .split(/\s+/)[0]!
    .toLowerCase();
  if (verb === "select") return /\bfrom\b/i.test(text) || /^\s*select\s+[\w(]/i.test(text);
  if (verb === "insert" || verb === "replace" || verb === "upsert") return /\binto\b/i.test(text);
  if (verb === "update") return /\bset\b/i.test(text);
  if (verb === "delete") return /\bfrom\b/i.test(text);
  return /\bselect\b|\binsert\b|\bupdate\b|\bdelete\b/i.test(text.slice(4));
}

const CONTROL =
  /^\s*(begin|commit|rollback|savepoint|release|pragma|set|show|reset|end|start\s+transaction|vacuum|analyze)\b/i;

/** Transaction control and session settings: not the queries a request is about. */
export function isControlStatement(sql: string): boolean {
  return CONTROL.test(sql);
}

/**
 * The shape of a statement: literals and parameters become `?`, `IN (?, ?, …)` becomes `IN (?)`, spacing
 * is canonical. Two executions of one statement with different values share a shape.
 */
export function normalizeStatement(sql: string): string {
  const tokens = tokenizeSql(sql);
  const parts: string[] = [];
  for (const token of tokens) {
    if (token.kind === "string" || token.kind === "number" || token.kind === "parameter") parts.push("?");
    else if (token.kind === "word") parts.push(isKeyword(token.key) ? token.key.toUpperCase() : token.text);
    else if (token.kind === "quoted") parts.push(`"${token.text}"`);
    else parts.push(token.text);
  }
  // A negative literal is a literal too.
  let text = parts.join(" ").replace(/([=<>(,]|\bIN|\bVALUES|\bLIMIT|\bOFFSET) - \?/g, "$1 ?");
  text = text.replace(/\( \?(?: , \?)+ \)/g, "( ? )");
  text = text.replace(/\( \( \? \)(?: , \( \? \))+ \)/g, "( ( ? ) )");
  text = text
    .replace(/ ([,)]) /g, "$1 ")
    .replace(/\( /g, "(")
    .replace(/ \)/g, ")")
    .replace(/ \./g, ".");
  text = text.replace(/\. /g, ".").replace(/ ,/g, ",").replace(/ ;$/, "").replace(/;$/, "");
  text = text.replace(/\b(COUNT|SUM|MIN|MAX|AVG|COALESCE|LOWER|UPPER|EXISTS) \(/g, "$1(");
  return text.trim();
}

/** How many bind parameters a statement takes (positional `?`, `$n`, named `:x`/`@x`/`$x`, `%s`). */
export function parameterCount(sql: string): { positional: number; named: string[] } {
  let positional = 0;
  const named = new Set<string>();
  let highest = 0;
  for (const token of tokenizeSql(sql)) {
    if (token.kind !== "parameter") continue;
    const numbered = token.text.match(/^[?$]([0-9]+)$/);
    if (numbered) highest = Math.max(highest, Number(numbered[1]));
    else if (token.text === "?" || token.text === "%s") positional += 1;
    else named.add(token.text.slice(1).replace(/^\(|\)s$/g, ""));
  }
  return { positional: Math.max(positional, highest), named: [...named] };
}

const KEYWORDS = new Set(
  (
    "select from where and or not in is null like ilike between exists insert into values update set delete " +
    "join inner left right full outer cross on using as group by order having limit offset asc desc distinct " +
    "union all case when then else end returning with replace conflict do nothing count sum min max avg " +
    "coalesce lower upper true false default primary key references unique check create table index"
  ).split(" "),
);

export function isKeyword(word: string): boolean {
  return KEYWORDS.has(word.toLowerCase());
}
