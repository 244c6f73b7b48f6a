// What the code-access scanners report about how a target's code reaches its database. Both scanners (the
// TypeScript compiler API for JS/TS, python's `ast` for Python) produce these same records.

/** How the code consumes a query's result. */
export type Cardinality = "single" | "many" | "write" | "unknown";

export interface DataAccess {
  /** Source path relative to the target root. */
  file: string;
  line: number;
  language: "javascript" | "python";
  /** The enclosing function, as `name@line`, so reads and writes of one handler can be paired. */
  scope: string;
  kind: "sql" | "orm";
  /** The statement text, interpolations replaced by `?` (kind `sql`). */
  sql?: string;
  cardinality: Cardinality;
  /** What made the cardinality what it is: `.get()`, `fetchone()`, `findUnique`, `LIMIT 1`… */
  via: string;
  /** ORM lookups: the model (or table) as the code names it, and the columns of its equality filter. */
  model?: string;
  columns?: string[];
}

/** Code comparing a property to fixed strings (`order.status === "paid"`): an enum-like column. */
export interface LiteralComparison {
  file: string;
  line: number;
  property: string;
  values: string[];
}

export interface CodeAccessScan {
  accesses: DataAccess[];
  comparisons: LiteralComparison[];
  /** ORM model identifiers → the table name the code declares for them. */
  modelTables: Record<string, string>;
  /** `model.property` → column name, where an ORM declaration maps them. */
  modelColumns: Record<string, string>;
  /** True when the code switches SQLite foreign-key enforcement on (`PRAGMA foreign_keys = ON`). */
  enablesForeignKeys: boolean;
  files: number;
  truncated: boolean;
  /** Files that could not be read or parsed, with why. */
  problems: string[];
}
