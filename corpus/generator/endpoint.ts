import type { CorpusServer, Stack } from "../model/servers.ts";
import type { Oracle } from "../oracles/oracle.ts";

// What a family builder hands the generator for one row: the operation (its code in both stacks and its
// documented contract), what it needs around it, its ledger wording and the oracle that proves its label.

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type JsonSchema = Record<string, unknown>;
export type ParamLocation = "query" | "path" | "header" | "cookie";

export interface Param {
  name: string;
  in: ParamLocation;
  required?: boolean;
  schema: JsonSchema;
  description?: string;
}

export interface DocResponse {
  description: string;
  contentType?: string;
  schema?: JsonSchema;
  headers?: Record<string, JsonSchema>;
}

export interface Endpoint {
  method: Method;
  /** OpenAPI template (`/api/stock/{id}`); the generator turns it into each framework's form. */
  path: string;
  summary: string;
  description?: string;
  /** What the document promises about credentials; the code may break the promise (that is a variant). */
  access: "user" | "public" | "admin";
  parameters?: Param[];
  body?: { contentType: string; schema: JsonSchema; required?: boolean };
  responses: Record<string, DocResponse>;
  /** The route registration in the generated Fastify app. */
  node: string;
  /** The decorated view function in the generated Flask app. */
  python: string;
  /** A partial document keeps this operation whatever the coin says (contract families need a document). */
  alwaysDocumented?: boolean;
  /** The handler takes body fields of any JSON type (the flaw is that it does); no type guard runs. */
  looseBody?: boolean;
}

export interface RecordSeed {
  kind: string;
  title?: string;
  /** The record's free-form profile (stored as JSON text in `attrs`). */
  attrs?: Record<string, unknown>;
  owners?: Array<"alice" | "bruno" | "dana">;
  count?: number;
  /** Tags each record of this kind gets in the `tags` table (the related rows a nested list reads). */
  tags?: number;
}

/**
 * A table of the variant's own, created after the shared schema at every start and reset. `ddl` holds
 * its CREATE TABLE and any CREATE INDEX statements in SQL both dialects read, with `{key}` where the
 * primary key's type goes (`INTEGER PRIMARY KEY` in SQLite, `SERIAL PRIMARY KEY` in PostgreSQL).
 */
export interface TableSchema {
  name: string;
  ddl: string;
}

export interface Built {
  /** The variant's own operation: the ledger location (unless `channel` names one). */
  endpoint: Endpoint;
  /**
   * Realtime variants: the channel (a WebSocket path or a socket.io namespace) is the ledger location, and
   * `endpoint` (the write that causes its events) is registered as a supporting operation.
   */
  channel?: string;
  /**
   * UI and usability variants: the page (a UI route path) is the ledger location, and `endpoint` (the GET
   * that serves it) is registered as a supporting operation.
   */
  page?: UiPage;
  /** Operations the variant needs to be exercised (create, list); correct code, listed as not_defects. */
  support?: Endpoint[];
  /** Further operations that are also the flaw's location (the write half of stored XSS). */
  alsoAt?: Endpoint[];
  records?: RecordSeed[];
  /** Tables the variant owns, beside the shared schema (the data families' tables and constraints). */
  tables?: TableSchema[];
  /** Data variants: the tables (or `table.column`s) the flaw is about, ledger places beside the endpoint. */
  dataPlaces?: string[];
  /** Files written beside the generated app, relative to the server folder. */
  files?: Record<string, string>;
  /** Top-level declarations the handler needs, per stack. */
  top?: Partial<Record<Stack, string>>;
  /** Ledger title: the defect (vulnerable) or what looks suspicious (safe). */
  title: string;
  /** Safe rows: why the look-alike is correct. */
  why?: string;
  /**
   * A second, real defect the vulnerable flaw causes at the same operation in the api domain: a 5xx on an
   * unusual input (unhandled-error), or fields the document does not declare (contract-drift).
   */
  collateral?: {
    class: "unhandled-error" | "contract-drift";
    title: string;
    /** Where the 5xx is answered when that is not `endpoint` (a form's action beside a page). */
    at?: Endpoint;
  };
  /** Overrides the family's ledger class (a family straddling two classes). */
  ledgerClass?: string;
  /** Cookie-session servers: the view is exempt from the CSRF check (the csrf family's flaw). */
  csrfExempt?: boolean;
  oracle: Oracle;
  /** The oracle counts the server's logged statements, so the self-check runs it with nothing else in flight. */
  alone?: boolean;
}

/** A page a UI or usability variant serves. */
export interface UiPage {
  path: string;
  /** The link text the site's navigation uses for it. */
  label: string;
  /** Where the site's home page lists it: its menu, its footer, or nowhere (reached another way, or not at all). */
  listed: "menu" | "footer" | false;
  /** A page of the variant's own that the menu lists and that links this one (a list linking its detail). */
  via?: { path: string; label: string };
  /** Further ledger places of the same flaw: a broken link's target, the operation a help text describes. */
  places?: Array<{ page: string } | { endpoint: string }>;
}

export interface BuildContext {
  server: CorpusServer;
  /** The variant's neutral name and path prefix. */
  place: Place;
  /** The dialect's placeholder for the n-th parameter (1-based): `?`, `$1` or `%s`. */
  ph: (index: number) => string;
}

export interface Place {
  /** `/api/catalog/parcels`: the variant's operations all live under it. */
  base: string;
  group: string;
  plural: string;
  singular: string;
  /** The records kind the variant reads and writes (`catalog-parcels`). */
  kind: string;
  /** A unique identifier fragment for generated function names. */
  slug: string;
}

export function placeholderFor(server: CorpusServer): (index: number) => string {
  if (server.database === "sqlite") return () => "?";
  return server.stack === "node" ? (index) => `$${index}` : () => "%s";
}
