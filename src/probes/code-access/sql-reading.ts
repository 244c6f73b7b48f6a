import type { ColumnReference } from "./sql-shape.ts";
import type { SqlToken } from "./sql-tokens.ts";
import { isKeyword } from "./sql-tokens.ts";

// Reading single items out of a token list: a name, a column reference, a value.

export function stripQuotes(text: string): string {
  return text.startsWith("'") && text.endsWith("'") ? text.slice(1, -1).replace(/''/g, "'") : text;
}

export function isName(token: SqlToken | undefined): boolean {
  return token !== undefined && (token.kind === "quoted" || (token.kind === "word" && !isKeyword(token.key)));
}

/**
 * Words the tokenizer knows as keywords that schemas nonetheless use as column names (`key`, `index`,
 * `count`): SQLite and PostgreSQL accept them unquoted. Read as a column where a column is expected and
 * no `(` makes them a function call.
 */
const SOFT_KEYWORDS = new Set(["key", "index", "count", "sum", "min", "max", "avg"]);

function isColumnWord(token: SqlToken | undefined): boolean {
  return isName(token) || (token?.kind === "word" && SOFT_KEYWORDS.has(token.key));
}

export function isValue(token: SqlToken | undefined): boolean {
  return (
    token !== undefined && (token.kind === "parameter" || token.kind === "string" || token.kind === "number")
  );
}

/** A column reference starting at `index` (`col`, `t.col`, `schema.t.col`) and the index after it. */
export function readColumn(
  tokens: SqlToken[],
  index: number,
): { ref: ColumnReference; next: number } | undefined {
  if (!isColumnWord(tokens[index])) return undefined;
  const parts = [tokens[index]!.key];
  let next = index + 1;
  while (tokens[next]?.text === "." && isColumnWord(tokens[next + 1])) {
    parts.push(tokens[next + 1]!.key);
    next += 2;
  }
  // A function call is not a column.
  if (tokens[next]?.text === "(") return undefined;
  const column = parts[parts.length - 1]!;
  const qualifier = parts.length > 1 ? parts[parts.length - 2] : undefined;
  return { ref: qualifier ? { qualifier, column } : { column }, next };
}

/** A value at `index`: a parameter, a literal, or `-` followed by a number. */
export function readValue(tokens: SqlToken[], index: number): { literal?: string; next: number } | undefined {
  const token = tokens[index];
  if (token?.text === "-" && tokens[index + 1]?.kind === "number") return { next: index + 2 };
  if (!isValue(token)) return undefined;
  return token!.kind === "string"
    ? { literal: stripQuotes(token!.text), next: index + 1 }
    : { next: index + 1 };
}
