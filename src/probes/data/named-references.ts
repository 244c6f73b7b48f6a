import type { Table } from "../../map/system-map.ts";
import type { AssumptionSite, DataAssumption } from "./assumptions.ts";
import { findTable, nameForms, tableForName } from "./naming.ts";

// References by convention (Rails `belongs_to`, Django `ForeignKey` columns, knex `table.integer("order_id")`):
// a `<parent>_id` column the code writes, naming a table with a key, with no foreign key declared. Handlers
// that check the parent before inserting a child keep writes consistent, but nothing keeps the child when
// the parent goes; only a trial that deletes a parent of the probe's own can show it (`namedOnly`).

export function namedReferences(
  tables: readonly Table[],
  insertsByTable: ReadonlyMap<string, Array<{ columns: string[]; site: AssumptionSite }>>,
): Array<{ assumption: Omit<DataAssumption, "id" | "sites">; site: AssumptionSite }> {
  const found: Array<{ assumption: Omit<DataAssumption, "id" | "sites">; site: AssumptionSite }> = [];
  for (const [name, inserts] of insertsByTable) {
    const child = findTable(tables, name);
    if (!child) continue;
    for (const column of child.columns) {
      const stem = column.name.match(/^(.+?)_id$/i)?.[1];
      if (!stem || column.primary_key) continue;
      const lower = column.name.toLowerCase();
      if (child.foreign_keys.some((key) => key.columns.some((entry) => entry.toLowerCase() === lower)))
        continue;
      const site = inserts.find((insert) => insert.columns.includes(lower))?.site;
      const parent = parentTableFor(tables, child, stem);
      const key =
        parent?.columns.find((entry) => entry.primary_key) ??
        parent?.columns.find((entry) => entry.name.toLowerCase() === "id");
      if (!site || !parent || !key) continue;
      found.push({
        assumption: {
          kind: "foreign-key",
          table: child.name,
          columns: [column.name],
          references: { table: parent.name, column: key.name },
          enforced: false,
          namedOnly: true,
          reason: `${child.name}.${column.name} is written by the code and named after ${parent.name}, but no foreign key declares it`,
        },
        site,
      });
    }
  }
  return found;
}

/** `reel` → `reels`, or — among several `*_reels` — the one whose other words the child's name shares. */
function parentTableFor(tables: readonly Table[], child: Table, stem: string): Table | undefined {
  const named = tableForName(tables, stem);
  if (named) return named === child ? undefined : named;
  const words = new Set(child.name.toLowerCase().split("_"));
  const fitting = tables.filter((table) => {
    if (table === child) return false;
    const lower = table.name.toLowerCase();
    const form = nameForms(stem).find((candidate) => lower.endsWith(`_${candidate}`));
    return (
      form !== undefined &&
      lower
        .slice(0, -(form.length + 1))
        .split("_")
        .every((word) => words.has(word))
    );
  });
  return fitting.length === 1 ? fitting[0] : undefined;
}
