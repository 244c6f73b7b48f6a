import type { Row } from "../../model/row.ts";
import { type Answer, brief } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint, Param } from "../endpoint.ts";
import { guarded, INT, json, obj, STR } from "../schemas.ts";
import { FIXED_PAGE, MAX_PAGE, type PageHandling, type PageParam, paging } from "./paging.ts";
import { ownedCollection, ownRecordRead, recordShape } from "./records.ts";

// Results without bounds (CWE-400, CWE-770, OWASP API4:2023): a list, a search, a report or a CSV export
// that ignores the page size it documents, takes any size it is asked for, or has none and answers every
// row the caller owns. The safe twins put a default and a hard maximum in the query. Each variant's
// caller owns a few hundred rows, so an unbounded answer is unmistakable next to a page of 100.

export interface UnboundedKnobs {
  /** What the operation answers: JSON items, search hits, report rows, or a CSV download. */
  shape: "list" | "search" | "report" | "csv-export";
  /** The page-size parameter the document promises; none: the operation takes none. */
  paging: PageParam | "none";
  /** Vulnerable rows with a parameter: read and never applied (default), or applied with no maximum. */
  flaw?: "ignored" | "uncapped";
  /** The collection also reads one record by id (`GET base/{id}`), as most REST collections do. */
  itemPath?: boolean;
}

/** Rows each owner of the variant's kind is seeded with: well past any page of 100. */
const SEEDED = 260;

const SUFFIX = { list: "", search: "/search", report: "/report", "csv-export": "/export" } as const;

function capitalise(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}

export function buildUnboundedResult(row: Row<UnboundedKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { shape } = row.knobs;
  const param = row.knobs.paging === "none" ? undefined : row.knobs.paging;
  const handling: PageHandling = param
    ? vulnerable
      ? (row.knobs.flaw ?? "ignored")
      : "capped"
    : vulnerable
      ? "all"
      : "fixed";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const title = capitalise(place.singular);
  const path = `${place.base}${SUFFIX[shape]}`;
  const nodePage = paging("node", param, handling);
  const pyPage = paging("python", param, handling);
  const search = shape === "search";
  const columns =
    shape === "report" ? "id, title, price, quantity, created_at" : "id, title, status, created_at";
  const where = `kind = ${ph(1)} AND owner_id = ${ph(2)}${search ? ` AND LOWER(title) LIKE ${ph(3)}` : ""}`;
  const first = search ? 4 : 3;
  const order = shape === "report" ? "ORDER BY created_at DESC, id DESC" : "ORDER BY id";
  const sql = (page: typeof nodePage) =>
    `SELECT ${columns} FROM records WHERE ${where} ${order}${page.sql(ph, first)}`;
  const nodeValues = [kind, "user.id", ...(search ? ["needle"] : []), nodePage.values].filter(Boolean);
  const pyValues = [kind, 'user["id"]', ...(search ? ["needle"] : []), pyPage.values].filter(Boolean);
  const needle = {
    node: 'const needle = "%" + String(request.query["q"] ?? "").toLowerCase() + "%";',
    python: 'needle = "%" + request.args.get("q", "").lower() + "%"',
  };
  const answer = {
    node: {
      list: `return { items: rows${nodePage.echo ? `, limit: ${nodePage.echo}` : ""} };`,
      search: `return { items: rows${nodePage.echo ? `, limit: ${nodePage.echo}` : ""} };`,
      report: "return { generated_at: new Date().toISOString(), rows };",
      "csv-export": `const lines = ["id,title,status,created_at", ...rows.map((row) => [row.id, row.title, row.status, row.created_at].join(","))];
return reply.type("text/csv; charset=utf-8").header("content-disposition", "attachment; filename=\\"${place.plural}.csv\\"").send(lines.join("\\n") + "\\n");`,
    }[shape],
    python: {
      list: `return jsonify(items=rows${pyPage.echo ? `, limit=${pyPage.echo}` : ""})`,
      search: `return jsonify(items=rows${pyPage.echo ? `, limit=${pyPage.echo}` : ""})`,
      report: "return jsonify(generated_at=datetime.utcnow().isoformat(), rows=rows)",
      "csv-export": `lines = ["id,title,status,created_at"] + [",".join(str(row[key]) for key in ("id", "title", "status", "created_at")) for row in rows]
return "\\n".join(lines) + "\\n", 200, {"Content-Type": "text/csv; charset=utf-8", "Content-Disposition": 'attachment; filename="${place.plural}.csv"'}`,
    }[shape],
  };
  const item = obj(
    shape === "report"
      ? { id: INT, title: STR, price: INT, quantity: INT, created_at: STR }
      : { id: INT, title: STR, status: STR, created_at: STR },
  );
  const items = { type: "array", items: item, maxItems: MAX_PAGE };
  const body =
    shape === "report"
      ? obj({ generated_at: STR, rows: items })
      : obj(param ? { items, limit: INT } : { items }, ["items"]);
  const parameters: Param[] = [
    ...(search
      ? [{ name: "q", in: "query" as const, required: false, schema: { ...STR, example: title } }]
      : []),
    ...nodePage.parameters,
  ];
  const summary = {
    list: `List my ${place.plural}`,
    search: `Search my ${place.plural} by title`,
    report: `Report of my ${place.plural}, newest first`,
    "csv-export": `Download my ${place.plural} as CSV`,
  }[shape];
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary,
    description: param
      ? `Paged with \`${param}\` (default 20, at most ${MAX_PAGE}).`
      : `The newest ${FIXED_PAGE} ${place.plural} at most.`,
    access: "user",
    parameters,
    responses: {
      "200":
        shape === "csv-export"
          ? { description: `a page of ${place.plural}, one per line`, contentType: "text/csv", schema: STR }
          : json(`a page of ${place.plural}`, body),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `${search ? `${needle.node}\n` : ""}${nodePage.read ? `${nodePage.read}\n` : ""}const rows = await db.all("${sql(nodePage)}", [${nodeValues.join(", ")}]);
${answer.node}`,
    ),
    python: pyRoute(
      "GET",
      path,
      `user = require_user()
${search ? `${needle.python}\n` : ""}${pyPage.read ? `${pyPage.read}\n` : ""}rows = db.all("${sql(pyPage)}", (${pyValues.join(", ")},))
${answer.python}`,
    ),
  };
  // The collection's own create: what lets a client (or a probe) watch the answer grow with the data.
  // Only the create: the collection's plain list would itself answer every row.
  const [create] = ownedCollection(ctx, recordShape("sequential"));
  const flawWords =
    handling === "uncapped"
      ? `applies any ${param} it is asked for, with no maximum`
      : param
        ? `ignores ${param} and returns every row`
        : "has no page size and returns every row";
  return {
    endpoint,
    support: row.knobs.itemPath
      ? [
          create!,
          ownRecordRead(ctx, {
            node: 'return reply.code(404).send({ error: "not found" });',
            python: 'return jsonify(error="not found"), 404',
          }),
        ]
      : [create!],
    records: [{ kind: place.kind, title, owners: ["alice", "bruno"], count: SEEDED }],
    title: vulnerable
      ? `Unbounded result: ${summary.toLowerCase()} ${flawWords}`
      : `${summary}: ${param ? `pages with ${param}` : `answers the newest ${FIXED_PAGE}`}`,
    ...(vulnerable
      ? {}
      : {
          why: param
            ? `the query carries LIMIT/OFFSET: ${param} defaults to 20 and is capped at ${MAX_PAGE}`
            : `the query carries LIMIT ${FIXED_PAGE}: the answer stays the same size however many rows exist`,
        }),
    oracle: async (client) => {
      const ask = (size?: number) =>
        client.ask({
          as: "alice",
          path,
          query: {
            ...(search ? { q: title.toLowerCase() } : {}),
            ...(param && size !== undefined ? { [param]: String(size) } : {}),
          },
        });
      const large = await ask(param ? 5000 : undefined);
      const small = param ? await ask(5) : undefined;
      const rowsLarge = rowCount(large);
      const rowsSmall = small ? rowCount(small) : undefined;
      const flawed = rowsLarge > MAX_PAGE || (rowsSmall !== undefined && rowsSmall > 5);
      return {
        flawed,
        evidence: `${param ? `${param}=5000` : "no page size"} → ${rowsLarge} rows${rowsSmall !== undefined ? `, ${param}=5 → ${rowsSmall}` : ""} (${brief(large).slice(0, 60)})`,
      };
    },
  };
}

/** Rows in a JSON list (`items` or `rows`) or a CSV download (lines after the header). */
export function rowCount(answer: Answer): number {
  if (answer.status !== 200) throw new Error(`expected 200, got ${brief(answer)}`);
  const body = answer.json as { items?: unknown; rows?: unknown } | null;
  if (Array.isArray(body?.items)) return body.items.length;
  if (Array.isArray(body?.rows)) return body.rows.length;
  return Math.max(answer.text.split("\n").filter((line) => line.length > 0).length - 1, 0);
}
