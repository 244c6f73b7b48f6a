import type { FamilyName } from "../model/families.ts";
import type { Row } from "../model/row.ts";
import type { CorpusServer } from "../model/servers.ts";
import type { Oracle } from "../oracles/oracle.ts";
import type { Built, Endpoint, RecordSeed, TableSchema } from "./endpoint.ts";

// What the generator knows about one server once every row is built: the operations in order, the
// records to seed, the files to write. The emitters (app, document, ledger, profile) read only this.

export interface BuiltVariant {
  row: Row;
  family: FamilyName;
  built: Built;
  /** `METHOD /path` of the variant's own operation. */
  location: string;
  documented: boolean;
}

export interface SupportOperation {
  /** Stable id of the supporting operation (`SUP-...`). */
  id: string;
  endpoint: Endpoint;
  /** The variant that brought it, or undefined for the server's own (sign-in, health). */
  variantId?: string;
  documented: boolean;
  /** Ledger class the not_defect names, when the operation looks like a family's context (a sign-in). */
  looksLike?: { domain: "security" | "api"; class: string; why: string };
}

export interface ServerModel {
  server: CorpusServer;
  variants: BuiltVariant[];
  support: SupportOperation[];
  records: RecordSeed[];
  /** The variants' own tables, in table order (dropped in reverse on a reset). */
  tables: TableSchema[];
  files: Record<string, string>;
  /** Python view names exempt from the cookie server's CSRF check. */
  csrfExempt: string[];
  /** Pages no navigation may list (the cookie server's home page links every other GET operation). */
  unlinkedPaths: string[];
}

export interface OracleCase {
  server: CorpusServer;
  row: Row;
  location: string;
  oracle: Oracle;
  alone: boolean;
}

export function endpointKey(endpoint: Pick<Endpoint, "method" | "path">): string {
  return `${endpoint.method} ${endpoint.path}`;
}

/** A channel's location key (`WS /ws/feed`): never equal to an operation's, whose first word is a method. */
export function channelKey(channel: string): string {
  return `WS ${channel}`;
}

/** A page's location key (`PAGE /settings`): never equal to an operation's or a channel's. */
export function pageKey(path: string): string {
  return `PAGE ${path}`;
}

/** A variant's ledger location: its channel or page, else its operation. */
export function variantLocation(built: Pick<Built, "endpoint" | "channel" | "page">): string {
  if (built.channel) return channelKey(built.channel);
  return built.page ? pageKey(built.page.path) : endpointKey(built.endpoint);
}

/** Every operation a server registers, in a stable order: supporting ones, then each variant's. */
export function allEndpoints(model: ServerModel): Endpoint[] {
  return [
    ...model.support.map((op) => op.endpoint),
    ...model.variants.flatMap((variant) => [
      // A realtime or page variant's endpoint is already among the supporting operations.
      ...(variant.built.channel || variant.built.page ? [] : [variant.built.endpoint]),
      ...(variant.built.alsoAt ?? []),
    ]),
  ];
}
