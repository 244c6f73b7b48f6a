import { z } from "zod";

// The versioned system map MAPPER writes and every later agent reads (pinned per run).

const JsonSchemaLike = z.record(z.string(), z.unknown());

/**
 * Where an operation (or one of its parameters) was learned. `crawl` is the legacy name of `form`/`link`,
 * kept so maps saved by earlier versions still read.
 */
export const ProvenanceSchema = z.enum([
  "openapi",
  "source",
  "form",
  "link",
  "frontend",
  "traffic",
  "graphql",
  "crawl",
]);

export const ParameterSchema = z.object({
  name: z.string(),
  in: z.enum(["path", "query", "header", "cookie"]),
  required: z.boolean(),
  schema: JsonSchemaLike.optional(),
  example: z.unknown().optional(),
  /** Where this parameter was learned, when not from the operation's first source. */
  seen_in: z.array(ProvenanceSchema).optional(),
});

/** A GraphQL field reachable as a root query, mutation or subscription: one operation per field. */
export const GraphqlOperationSchema = z.object({
  kind: z.enum(["query", "mutation", "subscription"]),
  field: z.string(),
  arguments: z.array(z.object({ name: z.string(), type: z.string(), required: z.boolean() })).default([]),
  /** The named return type, unwrapped from lists and non-nulls (`Paste` for `[Paste!]!`). */
  returns: z.string().optional(),
  /** A selection set that asks for the return type's scalar fields (`{ id title }`), empty for scalars. */
  selection: z.string().default(""),
});

export const OperationSchema = z.object({
  method: z.string(),
  /** Path template with `{param}` placeholders, relative to the server root (base path included). */
  path: z.string(),
  operation_id: z.string().optional(),
  summary: z.string().optional(),
  tags: z.array(z.string()).optional(),
  /** public: the document says `security: []`; required: a security requirement applies. */
  security: z.enum(["public", "required", "unknown"]),
  /**
   * Public by the document's own words (an empty `security` list, or an empty alternative), not merely for
   * want of a requirement: a generated document (FastAPI's) leaves `security` out wherever the code has no
   * credential dependency, which says what the code does, not what it should.
   */
  declared_public: z.boolean().optional(),
  parameters: z.array(ParameterSchema).default([]),
  request_body: z
    .object({
      /** application/json, application/x-www-form-urlencoded or multipart/form-data (what a browser sends). */
      content_type: z.string(),
      required: z.boolean(),
      schema: JsonSchemaLike.optional(),
      example: z.unknown().optional(),
    })
    .optional(),
  /** Status code (or `default`) → response schema of its JSON body, when documented. */
  responses: z.record(z.string(), z.object({ schema: JsonSchemaLike.optional() })).default({}),
  /** Every source the operation was learned from; `documented` is true only when the OpenAPI document lists it. */
  seen_in: z.array(ProvenanceSchema),
  documented: z.boolean(),
  /** The handler in the target's source, when a route scanner found it. */
  handler: z
    .object({ file: z.string(), line: z.number().int().optional(), framework: z.string().optional() })
    .optional(),
  /** Profile roles (and `anonymous`) whose crawl reached the operation: who the application offers it to. */
  roles: z.array(z.string()).optional(),
  /**
   * An operation learned from an HTML form: the page that shows it (to load first for a fresh CSRF token),
   * the hidden field carrying that token, and the form's encoding.
   */
  form: z
    .object({
      page: z.string(),
      enctype: z.string().default("application/x-www-form-urlencoded"),
      csrf_field: z.string().optional(),
    })
    .optional(),
  /** A GraphQL field: sent as `POST <path>` with `{ query, variables }`; arguments are its inputs. */
  graphql: GraphqlOperationSchema.optional(),
});

export const RouteSchema = z.object({
  method: z.string(),
  path: z.string(),
  file: z.string(),
  line: z.number().int().optional(),
  framework: z.string(),
  /** Query, header and cookie parameters the handler reads (`req.query.q`, `request.args["q"]`). */
  parameters: z.array(ParameterSchema).optional(),
  /** The body the handler reads: its fields (from validators or accesses) and how it is encoded, when visible. */
  request_body: z.object({ content_type: z.string().optional(), schema: JsonSchemaLike }).optional(),
});

export const FormInputSchema = z.object({
  name: z.string(),
  /** The control's type: `text`, `email`, `number`, `hidden`, `password`, `select`, `textarea`, `file`… */
  type: z.string(),
  required: z.boolean().default(false),
  /** A hidden or pre-filled value (a CSRF token, an id), or a select's first option. */
  value: z.string().optional(),
  options: z.array(z.string()).optional(),
  min: z.string().optional(),
  max: z.string().optional(),
  maxlength: z.number().int().optional(),
  pattern: z.string().optional(),
  /** `readonly`: the page shows a value the user cannot change (a price), though a request can. */
  readonly: z.boolean().optional(),
});

export const PageSchema = z.object({
  path: z.string(),
  status: z.number().int().optional(),
  title: z.string().optional(),
  links: z.array(z.string()).default([]),
  forms: z
    .array(
      z.object({
        action: z.string(),
        method: z.string(),
        fields: z.array(z.string()),
        enctype: z.string().optional(),
        inputs: z.array(FormInputSchema).optional(),
        /** No method and no action: a form a script submits; its browser default (GET to the page) is never sent. */
        scripted: z.boolean().optional(),
      }),
    )
    .default([]),
  /** Profile roles (and `anonymous`) that reached this page while crawling. */
  roles: z.array(z.string()).optional(),
  /** Answered as HTML (a page a browser renders); false: JSON or a file; absent: not known (a redirect). */
  html: z.boolean().optional(),
  /** Scripts the page loads (same origin), for the frontend-bundle reader. */
  scripts: z.array(z.string()).optional(),
});

export const ColumnSchema = z.object({
  name: z.string(),
  type: z.string(),
  nullable: z.boolean(),
  primary_key: z.boolean(),
  default: z.string().nullable().optional(),
});

export const TableSchema = z.object({
  name: z.string(),
  columns: z.array(ColumnSchema),
  foreign_keys: z
    .array(
      z.object({
        columns: z.array(z.string()),
        references_table: z.string(),
        references_columns: z.array(z.string()),
      }),
    )
    .default([]),
  indexes: z
    .array(z.object({ name: z.string(), columns: z.array(z.string()), unique: z.boolean() }))
    .default([]),
  checks: z.array(z.string()).default([]),
});

export const SystemMapSchema = z.object({
  map_version: z.literal(1),
  target: z.string(),
  created_at: z.string(),
  commit: z.string().nullable(),
  base_url: z.string().nullable(),
  openapi: z
    .object({
      source: z.string(),
      version: z.string(),
      title: z.string().optional(),
      /** The dereferenced document, for probes that need full schemas. */
      document: z.record(z.string(), z.unknown()),
    })
    .nullable(),
  operations: z.array(OperationSchema),
  routes: z.array(RouteSchema),
  pages: z.array(PageSchema),
  channels: z.array(
    z.object({
      path: z.string(),
      seen_in: z.array(z.string()),
      /** `websocket` (plain frames) or `socket.io` (Engine.IO transport, namespaces and named events). */
      protocol: z.enum(["websocket", "socket.io"]).optional(),
      namespaces: z.array(z.string()).optional(),
      /** Event names the server listens for (socket.io `on(...)`) or emits. */
      events: z.array(z.string()).optional(),
    }),
  ),
  /** GraphQL endpoints and the schema read from each (introspection `__schema`, SDL files, or client operations). */
  graphql: z
    .array(
      z.object({
        path: z.string(),
        /** `operations`: sketched from the client operations the application sends, introspection refused. */
        source: z.enum(["introspection", "sdl", "operations"]),
        schema: z.record(z.string(), z.unknown()),
      }),
    )
    .default([]),
  database: z
    .object({
      kind: z.enum(["sqlite", "postgres"]),
      tables: z.array(TableSchema),
      /** How the database was found when the profile does not name it: a file or an env variable, and where. */
      found: z
        .object({ path: z.string().optional(), url_env: z.string().optional(), in: z.string() })
        .optional(),
    })
    .nullable(),
  ownership: z.array(
    z.object({ path: z.string(), owner: z.string(), source: z.enum(["codeowners", "git"]) }),
  ),
  notes: z.array(z.string()).default([]),
});

export type SystemMap = z.infer<typeof SystemMapSchema>;
export type Operation = z.infer<typeof OperationSchema>;
export type Route = z.infer<typeof RouteSchema>;
export type Page = z.infer<typeof PageSchema>;
export type Table = z.infer<typeof TableSchema>;
export type Provenance = z.infer<typeof ProvenanceSchema>;
export type Parameter = z.infer<typeof ParameterSchema>;
export type FormInput = z.infer<typeof FormInputSchema>;
export type GraphqlOperation = z.infer<typeof GraphqlOperationSchema>;
export type Channel = SystemMap["channels"][number];
