import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { statementsDuring } from "../../oracles/statement-log.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { guarded, INT, json, obj, STR } from "../schemas.ts";
import { MAX_PAGE, paging } from "./paging.ts";
import { createAs, ownedCollection, recordShape } from "./records.ts";
import { rowCount } from "./unbounded-result.ts";

// N+1 selects (CWE-1073, CWE-1049): a list that loads its page in one query and then, for each row, one
// more for what the row needs beside it (its tags, its owner, how many tags it has). The statements per
// request grow with the rows returned. The safe twins load the same in one statement: a JOIN, a LEFT JOIN
// with GROUP BY, or one `IN (…)` batch over the page's ids. The lists are bounded either way (a page size
// with a maximum, or a fixed LIMIT), so the only flaw is the per-row query.

/**
 * The fixed size of a list without a page size: far above what the seed and a run's other writes put in
 * it (a nightly's other agents add dozens), so that creating rows still grows the answer.
 */
const LATEST = 200;

export interface NPlusOneKnobs {
  /** What each row carries beside itself. */
  related: "tags" | "owner" | "tag-count";
  /** limit: a documented page size (default 20, at most 100); none: the latest 200, grown by creating. */
  paging: "limit" | "none";
}

interface RelatedCode {
  /** The page's query (the rows, or the rows with the related data joined in). */
  select: (where: string, tail: string) => string;
  node: string;
  python: string;
  field: Record<string, Record<string, unknown>>;
  words: string;
}

function related(ctx: BuildContext, which: NPlusOneKnobs["related"], vulnerable: boolean): RelatedCode {
  const { ph } = ctx;
  const plain = (where: string, tail: string) =>
    `SELECT id, title, status FROM records WHERE ${where} ORDER BY id${tail}`;
  switch (which) {
    case "tags":
      return {
        select: plain,
        node: vulnerable
          ? `for (const row of rows) {
  const tags = await db.all("SELECT name FROM tags WHERE record_id = ${ph(1)} ORDER BY name", [row.id]);
  row.tags = tags.map((tag) => tag.name);
}`
          : `const ids = rows.map((row) => row.id);
const tags = ids.length === 0 ? [] : await db.all("SELECT record_id, name FROM tags WHERE record_id IN (" + ids.map((_id, index) => p(index + 1)).join(", ") + ") ORDER BY name", ids);
for (const row of rows) row.tags = tags.filter((tag) => tag.record_id === row.id).map((tag) => tag.name);`,
        python: vulnerable
          ? `for row in rows:
    row["tags"] = [tag["name"] for tag in db.all("SELECT name FROM tags WHERE record_id = ${ph(1)} ORDER BY name", (row["id"],))]`
          : `ids = [row["id"] for row in rows]
tags = db.all("SELECT record_id, name FROM tags WHERE record_id IN (" + ", ".join(p(index + 1) for index in range(len(ids))) + ") ORDER BY name", tuple(ids)) if ids else []
for row in rows:
    row["tags"] = [tag["name"] for tag in tags if tag["record_id"] == row["id"]]`,
        field: { tags: { type: "array", items: STR } },
        words: "its tags",
      };
    case "owner":
      return {
        select: vulnerable
          ? (where, tail) =>
              `SELECT id, title, status, owner_id FROM records WHERE ${where} ORDER BY id${tail}`
          : (where, tail) =>
              `SELECT r.id, r.title, r.status, u.id AS owner_id, u.name AS owner_name FROM records r JOIN users u ON u.id = r.owner_id WHERE ${where.replaceAll("kind", "r.kind").replaceAll("owner_id =", "r.owner_id =")} ORDER BY r.id${tail}`,
        node: vulnerable
          ? `for (const row of rows) {
  const owner = await db.get("SELECT id, name FROM users WHERE id = ${ph(1)}", [row.owner_id]);
  row.owner = { id: owner.id, name: owner.name };
  delete row.owner_id;
}`
          : `for (const row of rows) {
  row.owner = { id: row.owner_id, name: row.owner_name };
  delete row.owner_id;
  delete row.owner_name;
}`,
        python: vulnerable
          ? `for row in rows:
    owner = db.get("SELECT id, name FROM users WHERE id = ${ph(1)}", (row.pop("owner_id"),))
    row["owner"] = {"id": owner["id"], "name": owner["name"]}`
          : `for row in rows:
    row["owner"] = {"id": row.pop("owner_id"), "name": row.pop("owner_name")}`,
        field: { owner: obj({ id: INT, name: STR }) },
        words: "its owner",
      };
    case "tag-count":
      return {
        select: vulnerable
          ? plain
          : (where, tail) =>
              `SELECT r.id, r.title, r.status, COUNT(t.id) AS tag_count FROM records r LEFT JOIN tags t ON t.record_id = r.id WHERE ${where.replaceAll("kind", "r.kind").replaceAll("owner_id =", "r.owner_id =")} GROUP BY r.id, r.title, r.status ORDER BY r.id${tail}`,
        node: vulnerable
          ? `for (const row of rows) {
  const counted = await db.get("SELECT COUNT(*) AS n FROM tags WHERE record_id = ${ph(1)}", [row.id]);
  row.tag_count = Number(counted.n);
}`
          : "for (const row of rows) row.tag_count = Number(row.tag_count);",
        python: vulnerable
          ? `for row in rows:
    row["tag_count"] = int(db.get("SELECT COUNT(*) AS n FROM tags WHERE record_id = ${ph(1)}", (row["id"],))["n"])`
          : `for row in rows:
    row["tag_count"] = int(row["tag_count"])`,
        field: { tag_count: INT },
        words: "how many tags it has",
      };
  }
}

export function buildNPlusOne(row: Row<NPlusOneKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const param = row.knobs.paging === "limit" ? ("limit" as const) : undefined;
  const handling = param ? "capped" : "fixed";
  const nodePage = paging("node", param, handling, LATEST);
  const pyPage = paging("python", param, handling, LATEST);
  const code = related(ctx, row.knobs.related, vulnerable);
  const where = `kind = ${ph(1)} AND owner_id = ${ph(2)}`;
  const path = place.base;
  const summary = `List my ${place.plural} with ${code.words}`;
  const item = obj({ id: INT, title: STR, status: STR, ...code.field });
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary,
    access: "user",
    parameters: nodePage.parameters,
    responses: {
      "200": json(
        `a page of ${place.plural}`,
        obj({ items: { type: "array", items: item, maxItems: param ? MAX_PAGE : LATEST } }),
      ),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `${nodePage.read ? `${nodePage.read}\n` : ""}const rows = await db.all("${code.select(where, nodePage.sql(ph, 3))}", [${[kind, "user.id", nodePage.values].filter(Boolean).join(", ")}]);
${code.node}
return { items: rows };`,
    ),
    python: pyRoute(
      "GET",
      path,
      `user = require_user()
${pyPage.read ? `${pyPage.read}\n` : ""}rows = db.all("${code.select(where, pyPage.sql(ph, 3))}", (${[kind, 'user["id"]', pyPage.values].filter(Boolean).join(", ")},))
${code.python}
return jsonify(items=rows)`,
    ),
  };
  const [create] = ownedCollection(ctx, recordShape("sequential"));
  return {
    endpoint,
    support: [create!],
    // A page of 40 needs 40 rows; the fixed-size list starts small so that creating rows visibly grows it.
    records: [
      {
        kind: place.kind,
        title: place.singular,
        owners: ["alice", "bruno"],
        count: param ? 60 : 6,
        tags: 2,
      },
    ],
    title: vulnerable
      ? `N+1 queries: ${summary.toLowerCase()} runs one query per ${place.singular} for ${code.words}`
      : `${summary}: loaded with the page`,
    ...(vulnerable
      ? {}
      : {
          why:
            row.knobs.related === "tags"
              ? "the tags of the whole page come from one IN (…) query"
              : "one JOIN loads the page and what each row needs: the statements do not grow with the rows",
        }),
    alone: true,
    oracle: async (client) => {
      const ask = (size?: number) =>
        client.ask({ as: "alice", path, query: param && size ? { [param]: String(size) } : {} });
      // The first request signs in (statements of its own); measure from the second.
      await ask(3);
      const before = await statementsDuring(client, () => ask(3));
      if (!param) {
        for (let index = 0; index < 10; index += 1) await createAs(client, "alice", path, `extra ${index}`);
      }
      const after = await statementsDuring(client, () => ask(param ? 40 : undefined));
      const items = [rowCount(before.result), rowCount(after.result)];
      const grewBy = after.statements.length - before.statements.length;
      const itemGrowth = items[1]! - items[0]!;
      if (itemGrowth < 5)
        throw new Error(`the page grew by ${itemGrowth} rows only (${brief(after.result)})`);
      return verdict(
        grewBy >= itemGrowth * 0.8,
        `${items[0]} rows → ${before.statements.length} statements; ${items[1]} rows → ${after.statements.length}`,
      );
    },
  };
}
