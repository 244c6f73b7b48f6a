// Database error messages that only appear when the SQL text itself was broken (after sqlmap's errors.xml):
// a syntax error, an unterminated literal, an unknown column or operator. Type errors on a bound value
// ("invalid input syntax for type integer", "datatype mismatch") are left out on purpose: a parameterised
// query raises them too, so they prove nothing about the SQL text.

export type Dbms = "sqlite" | "postgres" | "mysql" | "mssql" | "oracle";

interface Signature {
  dbms: Dbms | undefined;
  /**
   * syntax: the SQL text no longer parses — only input pasted into it does that. reference: an unknown
   * column or a type clash — also what a safely quoted identifier (`sql.Identifier`) answers to a name that
   * does not exist, so it shows the SQL failed but not that the input broke out of its place.
   */
  kind: "syntax" | "reference";
  pattern: RegExp;
}

const SIGNATURES: readonly Signature[] = [
  {
    dbms: "sqlite",
    kind: "syntax",
    pattern:
      /SQLITE_ERROR|SqliteError|SQLite3?::|sqlite3?\.OperationalError|System\.Data\.SQLite|near "[^"\n]{0,80}": syntax error|unrecognized token: |incomplete input|Warning.*\bsqlite_/i,
  },
  {
    dbms: "sqlite",
    kind: "reference",
    pattern: /no such column: |\d+(st|nd|rd|th) ORDER BY term out of range/i,
  },
  {
    dbms: "postgres",
    kind: "syntax",
    pattern:
      /syntax error at or near|syntax error at end of input|unterminated quoted (string|identifier) at or near|PG::SyntaxError|psycopg2?\.errors\.SyntaxError|org\.postgresql\.util\.PSQLException|PostgreSQL.{0,40}ERROR|\bpg_query\(\)/i,
  },
  {
    dbms: "postgres",
    kind: "reference",
    pattern:
      /operator does not exist: |column "[^"\n]{1,80}" does not exist|ORDER BY position -?\d+ is not in select list|current transaction is aborted|psycopg2?\.(errors|ProgrammingError|DatabaseError)|PG::[A-Z]\w*Error|Npgsql\./i,
  },
  {
    dbms: "mysql",
    kind: "syntax",
    pattern:
      /You have an error in your SQL syntax|check the manual that (corresponds to|fits) your (MySQL|MariaDB)|MySQLSyntaxErrorException/i,
  },
  {
    dbms: "mysql",
    kind: "reference",
    pattern:
      /Unknown column '[^'\n]{1,80}' in '(where|order|field) clause'|MySqlException|com\.mysql\.jdbc|Warning.*\bmysqli?_|\bmysqli?_fetch/i,
  },
  {
    dbms: "mssql",
    kind: "syntax",
    pattern:
      /Unclosed quotation mark after the character string|Incorrect syntax near|Microsoft (OLE DB Provider|SQL Native Client).{0,40}SQL Server|\[SQL Server\]|System\.Data\.SqlClient\.SqlException|ODBC SQL Server Driver|SQLServer JDBC Driver|Msg \d+, Level \d+, State \d+/i,
  },
  {
    dbms: "oracle",
    kind: "syntax",
    pattern:
      /\bORA-\d{5}\b|quoted string not properly terminated|SQL command not properly ended|oracle\.jdbc/i,
  },
  {
    dbms: undefined,
    kind: "reference",
    pattern:
      /SQLSTATE\[\w+\]|SequelizeDatabaseError|QueryFailedError|PrismaClientKnownRequestError|sqlalchemy\.exc\.(OperationalError|ProgrammingError)|Knex:.{0,40}syntax/i,
  },
];

/** Every signature as one expression, for assertions in generated tests. */
export const SQL_ERROR = new RegExp(SIGNATURES.map((entry) => `(?:${entry.pattern.source})`).join("|"), "i");

export interface SqlError {
  /** The database the message belongs to, when it says. */
  dbms: Dbms | undefined;
  kind: Signature["kind"];
  /** The matched text, for the finding. */
  text: string;
}

/**
 * The first database syntax error in an answer: the raw body, and the strings of a JSON body decoded (a
 * message inside `{"error": "near \"x\": syntax error"}` or GraphQL `errors[].message`).
 */
export function sqlErrorIn(body: string): SqlError | undefined {
  let found: SqlError | undefined;
  for (const text of [body, jsonStrings(body)]) {
    if (!text) continue;
    for (const { dbms, kind, pattern } of SIGNATURES) {
      const match = pattern.exec(text);
      if (!match) continue;
      if (kind === "syntax") return { dbms, kind, text: match[0] };
      found ??= { dbms, kind, text: match[0] };
    }
  }
  return found;
}

export function hasSqlError(text: string): boolean {
  return sqlErrorIn(text) !== undefined;
}

function jsonStrings(body: string): string {
  const trimmed = body.trimStart();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "";
  }
  const strings: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(parsed);
  return strings.join("\n");
}
