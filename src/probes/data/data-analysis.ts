import type { Table } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { CodeAccessScan } from "../code-access/data-access-types.ts";
import { scanCodeAccess } from "../code-access/scan-code-access.ts";
import type { DataAssumption } from "./assumptions.ts";
import { inferAssumptions } from "./assumptions.ts";
import { declaredDomainAssumptions, mergeDeclared } from "./declared-domains.ts";
import { orderedPairAssumptions } from "./ordered-pairs.ts";
import type { DatabaseHandle } from "./target-database.ts";
import { databaseOf, loadTables, type SchemaSource } from "./target-database.ts";

// The schema, the code's data access and the assumptions inferred from both: computed once per run and
// shared by the db tools (the code does not change while a run is looking at it).

export interface DataAnalysis {
  handle: DatabaseHandle | undefined;
  /** Why the live database cannot be read, when it cannot. */
  databaseNote?: string;
  tables: Table[];
  schemaSource: SchemaSource;
  scan: CodeAccessScan;
  assumptions: DataAssumption[];
  /** The schema declares at least one foreign key: the application uses them as a practice. */
  declaresForeignKeys: boolean;
}

const KEY = "dba:analysis";

export async function dataAnalysis(
  context: ToolContext,
  options: { refresh?: boolean } = {},
): Promise<DataAnalysis | string> {
  const cached = context.shared.get(KEY) as DataAnalysis | undefined;
  if (cached && !options.refresh) return cached;
  const root = context.target?.root;
  if (!root) return "the target has no source root: the code's data access cannot be read";
  const found = databaseOf(context);
  const loaded = await loadTables(context, found);
  if (loaded.tables.length === 0) {
    return `no schema to compare with: ${loaded.note ?? "the database has no tables"} (and the system map has none)`;
  }
  const map = context.systemMap();
  const scan = await scanCodeAccess(root, {
    exclude: context.target?.goldenLedger ? [context.target.goldenLedger] : [],
  });
  const analysis: DataAnalysis = {
    handle: typeof found === "string" ? undefined : found,
    ...(loaded.note ? { databaseNote: loaded.note } : {}),
    tables: loaded.tables,
    schemaSource: loaded.source,
    scan,
    assumptions: mergeDeclared(
      [
        ...inferAssumptions(loaded.tables, scan),
        ...orderedPairAssumptions(map?.operations ?? [], loaded.tables, map?.openapi?.source),
      ],
      declaredDomainAssumptions(map?.operations ?? [], loaded.tables, map?.openapi?.source),
    ),
    declaresForeignKeys: loaded.tables.some((table) => table.foreign_keys.length > 0),
  };
  context.shared.set(KEY, analysis);
  return analysis;
}
