import type { SqlKnobs } from "../generator/families/sql-injection.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// SQL injection (CWE-89): sink shape × input location × error style × database, after sqlmap's boundary
// list (`'`, `')`, `'))`, `"`, `%'`, numeric, ORDER BY and LIMIT contexts). Safe twins share the shape,
// input and error handling and bind, allow-list or cast the value.

const { v, s } = rowMaker<SqlKnobs>("sql-injection", "high");

export const SQL_INJECTION = [
  v("SQLI-01", NS, { shape: "string", input: "query", errors: "verbatim" }),
  s("SQLI-01S", NS, { shape: "string", input: "query", errors: "verbatim" }),
  v("SQLI-02", NS, { shape: "numeric", input: "path", errors: "bare-500" }),
  s("SQLI-02S", NS, { shape: "numeric", input: "path", errors: "bare-500" }),
  v("SQLI-03", NS, { shape: "like", input: "query", errors: "swallowed" }),
  v("SQLI-04", NS, { shape: "paren", input: "json", errors: "verbatim" }),
  s("SQLI-04S", NS, { shape: "paren", input: "json", errors: "verbatim" }),
  v("SQLI-05", NS, { shape: "in-list", input: "json", errors: "bare-500" }),
  v("SQLI-06", PK, { shape: "order-by", input: "query", errors: "verbatim" }),
  s("SQLI-06S", PK, { shape: "order-by", input: "query", errors: "verbatim" }),
  v("SQLI-07", PK, { shape: "limit", input: "query", errors: "swallowed" }),
  s("SQLI-07S", PK, { shape: "limit", input: "query", errors: "swallowed" }),
  v("SQLI-08", PK, { shape: "string", input: "header", errors: "swallowed" }),
  v("SQLI-09", NS, { shape: "string", input: "cookie", errors: "verbatim" }),
  s("SQLI-09S", NS, { shape: "string", input: "cookie", errors: "verbatim" }),

  v("SQLI-10", PS, { shape: "string", input: "form", errors: "verbatim" }),
  s("SQLI-10S", PS, { shape: "string", input: "form", errors: "verbatim" }),
  v("SQLI-11", PS, { shape: "numeric", input: "query", errors: "swallowed" }),
  v("SQLI-12", PS, { shape: "double-paren", input: "query", errors: "bare-500" }),
  s("SQLI-12S", PS, { shape: "double-paren", input: "query", errors: "bare-500" }),
  v("SQLI-13", PS, { shape: "like", input: "json", errors: "bare-500" }),
  v("SQLI-14", PS, { shape: "dquote", input: "query", errors: "verbatim" }),
  s("SQLI-14S", PS, { shape: "dquote", input: "query", errors: "verbatim" }),
  v("SQLI-15", PK, { shape: "limit", input: "query", errors: "verbatim" }),
  v("SQLI-16", PK, { shape: "string", input: "cookie", errors: "bare-500" }),
  v("SQLI-17", PK, { shape: "in-list", input: "query", errors: "verbatim" }),
  s("SQLI-17S", PK, { shape: "in-list", input: "query", errors: "verbatim" }),

  v("SQLI-18", NP, { shape: "string", input: "query", errors: "verbatim" }),
  s("SQLI-18S", NP, { shape: "string", input: "query", errors: "verbatim" }),
  v("SQLI-19", NP, { shape: "numeric", input: "path", errors: "verbatim" }),
  v("SQLI-20", NP, { shape: "like", input: "query", errors: "bare-500" }),
  s("SQLI-20S", NP, { shape: "like", input: "query", errors: "bare-500" }),
  v("SQLI-21", NP, { shape: "paren", input: "json", errors: "swallowed" }),
  v("SQLI-22", NP, { shape: "order-by", input: "query", errors: "bare-500" }),
  s("SQLI-22S", NP, { shape: "order-by", input: "query", errors: "bare-500" }),
  v("SQLI-23", PK, { shape: "limit", input: "query", errors: "verbatim" }),
  v("SQLI-24", NP, { shape: "string", input: "header", errors: "verbatim" }),
  s("SQLI-24S", NP, { shape: "string", input: "header", errors: "verbatim" }),
  v("SQLI-25", PK, { shape: "in-list", input: "query", errors: "swallowed" }),

  v("SQLI-26", PP, { shape: "string", input: "json", errors: "bare-500" }),
  s("SQLI-26S", PP, { shape: "string", input: "json", errors: "bare-500" }),
  v("SQLI-27", PP, { shape: "numeric", input: "query", errors: "verbatim" }),
  s("SQLI-27S", PP, { shape: "numeric", input: "query", errors: "verbatim" }),
  v("SQLI-28", PP, { shape: "dquote", input: "query", errors: "verbatim" }),
  s("SQLI-28S", PP, { shape: "dquote", input: "query", errors: "verbatim" }),
  v("SQLI-29", PK, { shape: "double-paren", input: "json", errors: "verbatim" }),
  v("SQLI-30", PK, { shape: "order-by", input: "query", errors: "swallowed" }),
  s("SQLI-30S", PK, { shape: "order-by", input: "query", errors: "swallowed" }),
  v("SQLI-31", PK, { shape: "limit", input: "query", errors: "bare-500" }),
  s("SQLI-31S", PK, { shape: "limit", input: "query", errors: "bare-500" }),
  v("SQLI-32", PP, { shape: "in-list", input: "json", errors: "verbatim" }),
  v("SQLI-33", PP, { shape: "numeric", input: "cookie", errors: "swallowed" }),
  v("SQLI-34", PP, { shape: "string", input: "path", errors: "swallowed" }),
  s("SQLI-34S", PP, { shape: "string", input: "path", errors: "swallowed" }),
];
