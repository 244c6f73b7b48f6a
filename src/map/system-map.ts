import { z } from "zod";

// The versioned system map MAPPER writes and every later agent reads (pinned per run).

const JsonSchemaLike = z.record(z.string(), z.unknown());

export const OperationSchema = z.object({
  method: z.string(),
  /** Path template with `{param}` placeholders, relative to the server root (base path included). */
  path: z.string(),
  operation_id: z.string().optional(),
  summary: z.string().optional(),
  tags: z.array(z.string()).optional(),
  /** public: the document says `security: []`; required: a security requirement applies. */
  security: z.enum(["public", "required", "unknown"]),
  parameters: z
    .array(
      z.object({
        name: z.string(),
        in: z.enum(["path", "query", "header", "cookie"]),
        required: z.boolean(),
        schema: JsonSchemaLike.optional(),
        example: z.unknown().optional(),
      }),
    )
    .default([]),
  request_body: z
    .object({
      content_type: z.string(),
      required: z.boolean(),
      schema: JsonSchemaLike.optional(),
      example: z.unknown().optional(),
    })
    .optional(),
  /** Status code (or `default`) → response schema of its JSON body, when documented. */
  responses: z.record(z.string(), z.object({ schema: JsonSchemaLike.optional() })).default({}),
  /** Where the operation was seen; `documented` is true only when the OpenAPI document lists it. */
  seen_in: z.array(z.enum(["openapi", "source", "crawl"])),
  documented: z.boolean(),
});

export const RouteSchema = z.object({
  method: z.string(),
  path: z.string(),
  file: z.string(),
  line: z.number().int().optional(),
  framework: z.string(),
});

export const PageSchema = z.object({
  path: z.string(),
  status: z.number().int().optional(),
  title: z.string().optional(),
  links: z.array(z.string()).default([]),
  forms: z
    .array(z.object({ action: z.string(), method: z.string(), fields: z.array(z.string()) }))
    .default([]),
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
  channels: z.array(z.object({ path: z.string(), seen_in: z.array(z.string()) })),
  database: z.object({ kind: z.enum(["sqlite", "postgres"]), tables: z.array(TableSchema) }).nullable(),
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
