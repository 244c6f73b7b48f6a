import type { DomainKnobs } from "../generator/families/data-domains.ts";
import type { OrphanKnobs } from "../generator/families/data-orphans.ts";
import type { UniquenessKnobs } from "../generator/families/data-uniqueness.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Data constraints: rules the application relies on that only its code enforces. Each variant owns its
// table(s); the safe twins declare the constraint (UNIQUE, a partial or expression unique index, CHECK,
// FOREIGN KEY … ON DELETE CASCADE/RESTRICT) and answer the refusal with a clean 409/422. Spread over both
// stacks and both databases; on PostgreSQL a tool sees the schema only in the source.

const unique = rowMaker<UniquenessKnobs>("uniqueness-in-code", "medium");

export const UNIQUENESS_IN_CODE = [
  unique.v("UNQ-01", NS, { scope: "plain", gap: "update" }),
  unique.s("UNQ-01S", NS, { scope: "plain", gap: "update" }),
  unique.v("UNQ-02", PP, { scope: "composite", gap: "update" }),
  unique.s("UNQ-02S", PP, { scope: "composite", gap: "update" }),
  unique.v("UNQ-03", PK, { scope: "conditional", gap: "update" }),
  unique.s("UNQ-03S", PK, { scope: "conditional", gap: "update" }),
  unique.v("UNQ-04", NP, { scope: "case-insensitive", gap: "update" }),
  unique.s("UNQ-04S", NP, { scope: "case-insensitive", gap: "update" }),
  unique.v("UNQ-05", PS, { scope: "plain", gap: "create" }),
  unique.s("UNQ-05S", PS, { scope: "plain", gap: "create" }),
  unique.v("UNQ-06", NS, { scope: "composite", gap: "create" }),
  unique.v("UNQ-07", PP, { scope: "conditional", gap: "create" }),
  unique.v("UNQ-08", PK, { scope: "case-insensitive", gap: "create" }),
  unique.s("UNQ-08S", PK, { scope: "case-insensitive", gap: "create" }),
];

const domain = rowMaker<DomainKnobs>("unchecked-domain", "medium");

export const UNCHECKED_DOMAIN = [
  domain.v("DOM-01", NS, { rule: "negative-quantity", gap: "update" }),
  domain.s("DOM-01S", NS, { rule: "negative-quantity", gap: "update" }),
  domain.v("DOM-02", PK, { rule: "percentage", gap: "update" }),
  domain.s("DOM-02S", PK, { rule: "percentage", gap: "update" }),
  domain.v("DOM-03", PP, { rule: "date-order", gap: "update" }),
  domain.s("DOM-03S", PP, { rule: "date-order", gap: "update" }),
  domain.v("DOM-04", NP, { rule: "negative-quantity", gap: "decrement" }),
  domain.s("DOM-04S", NP, { rule: "negative-quantity", gap: "decrement" }),
  domain.v("DOM-05", PS, { rule: "date-order", gap: "update" }),
  domain.v("DOM-06", PK, { rule: "negative-quantity", gap: "decrement" }),
];

const orphan = rowMaker<OrphanKnobs>("orphan-on-delete", "medium");

export const ORPHAN_ON_DELETE = [
  orphan.v("ORP-01", NS, { child: "lines" }),
  orphan.s("ORP-01S", NS, { child: "lines", onDelete: "cascade" }),
  orphan.v("ORP-02", PP, { child: "notes" }),
  orphan.s("ORP-02S", PP, { child: "notes", onDelete: "restrict" }),
  orphan.v("ORP-03", PK, { child: "attachments" }),
  orphan.s("ORP-03S", PK, { child: "attachments", onDelete: "restrict" }),
  orphan.v("ORP-04", NP, { child: "lines" }),
  orphan.s("ORP-04S", NP, { child: "lines", onDelete: "cascade" }),
  orphan.v("ORP-05", PS, { child: "notes" }),
];

export const DATA_CONSTRAINTS = [...UNIQUENESS_IN_CODE, ...UNCHECKED_DOMAIN, ...ORPHAN_ON_DELETE];
