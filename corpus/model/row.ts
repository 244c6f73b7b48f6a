import type { Severity } from "../../src/envelope/taxonomy.ts";
import type { FamilyName } from "./families.ts";
import type { ServerName } from "./servers.ts";

// One row of a table is one variant: one endpoint on one server, vulnerable or its safe look-alike, with
// the knobs that set the context the flaw (or its absence) appears in. The generator turns each row into
// the handler code, the document's operation, the ledger entry and the self-check oracle.

export type Label = "vulnerable" | "safe";

export interface Row<Knobs extends object = Record<string, unknown>> {
  /** Unique across the corpus; a safe twin conventionally ends in `S`. Never appears in a path. */
  id: string;
  family: FamilyName;
  server: ServerName;
  label: Label;
  severity: Severity;
  knobs: Knobs;
}

/** A table's one-line helper: `v(id, server, knobs)` and `s(id, server, knobs)` with the family's default severity. */
export function rowMaker<Knobs extends object>(family: FamilyName, severity: Severity) {
  const make =
    (label: Label) =>
    (id: string, server: ServerName, knobs: Knobs, override?: Severity): Row<Knobs> => ({
      id,
      family,
      server,
      label,
      severity: override ?? severity,
      knobs,
    });
  return { v: make("vulnerable"), s: make("safe") };
}
