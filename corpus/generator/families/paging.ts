import type { Stack } from "../../model/servers.ts";
import type { Param } from "../endpoint.ts";

// How a list operation reads its page size and what its query does with it, for the performance families.
// A page size travels as `limit` (with `offset`), `per_page` or `page_size` (with `page`). The correct
// handling gives a default and a hard maximum and puts both in the query (OWASP API4:2023's "maximum
// number of records per page"); the flawed ones read the size and never apply it, or apply whatever the
// client asks for.

export type PageParam = "limit" | "per_page" | "page_size";

/**
 * capped: default 20, at most 100, in the query. ignored: parsed and echoed, never applied. uncapped:
 * applied as asked, with no maximum. fixed: no parameter, a LIMIT of 50 in the query. all: no parameter,
 * no LIMIT.
 */
export type PageHandling = "capped" | "ignored" | "uncapped" | "fixed" | "all";

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
export const FIXED_PAGE = 50;

export interface Paging {
  /** Statements that set `size` and `offset` (JavaScript) or `size` and `offset` (Python). */
  read: string;
  /** Appended to the query; `first` is the index of its first placeholder. */
  sql: (ph: (index: number) => string, first: number) => string;
  /** Extra bind values, in the order `sql` numbers them (an expression list in the stack's syntax). */
  values: string;
  /** What the answer echoes as its page size (an expression), or undefined. */
  echo: string | undefined;
  parameters: Param[];
}

function offsetName(param: PageParam): string {
  return param === "limit" ? "offset" : "page";
}

export function pageParameters(param: PageParam | undefined): Param[] {
  if (!param) return [];
  const offset = offsetName(param);
  return [
    {
      name: param,
      in: "query",
      required: false,
      schema: { type: "integer", minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE },
      description: `Rows per page (default ${DEFAULT_PAGE}, at most ${MAX_PAGE}).`,
    },
    {
      name: offset,
      in: "query",
      required: false,
      schema: { type: "integer", minimum: offset === "page" ? 1 : 0 },
    },
  ];
}

export function paging(
  stack: Stack,
  param: PageParam | undefined,
  handling: PageHandling,
  fixed = FIXED_PAGE,
): Paging {
  if (!param || handling === "fixed" || handling === "all") {
    return {
      read: "",
      sql: () => (handling === "fixed" ? ` LIMIT ${fixed}` : ""),
      values: "",
      echo: undefined,
      parameters: [],
    };
  }
  const offset = offsetName(param);
  const byPage = offset === "page";
  const cap = handling === "capped";
  const read =
    stack === "node"
      ? [
          `const asked = Number.parseInt(String(request.query[${JSON.stringify(param)}] ?? ""), 10);`,
          `const size = Number.isInteger(asked) && asked > 0 ? ${cap ? `Math.min(asked, ${MAX_PAGE})` : "asked"} : ${DEFAULT_PAGE};`,
          byPage
            ? `const page = Math.max(Number.parseInt(String(request.query["page"] ?? "1"), 10) || 1, 1);\nconst offset = (page - 1) * size;`
            : `const offset = Math.max(Number.parseInt(String(request.query["offset"] ?? "0"), 10) || 0, 0);`,
        ].join("\n")
      : [
          `asked = request.args.get(${JSON.stringify(param)}, "")`,
          `size = ${cap ? `min(int(asked), ${MAX_PAGE})` : "int(asked)"} if asked.isdigit() and int(asked) > 0 else ${DEFAULT_PAGE}`,
          byPage
            ? `page = request.args.get("page", "1")\noffset = (max(int(page), 1) - 1) * size if page.isdigit() else 0`
            : `offset = int(request.args.get("offset", "0")) if request.args.get("offset", "0").isdigit() else 0`,
        ].join("\n");
  if (handling === "ignored") {
    return { read, sql: () => "", values: "", echo: "size", parameters: pageParameters(param) };
  }
  return {
    read,
    sql: (ph, first) => ` LIMIT ${ph(first)} OFFSET ${ph(first + 1)}`,
    values: "size, offset",
    echo: "size",
    parameters: pageParameters(param),
  };
}
