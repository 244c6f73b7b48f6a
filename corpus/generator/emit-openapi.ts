import { stringify } from "yaml";
import { GENERATED_NOTICE } from "./emit-node.ts";
import type { DocResponse, Endpoint } from "./endpoint.ts";
import type { ServerModel } from "./server-model.ts";

// The OpenAPI 3.0 document of a server with one: every operation for `full`, the chosen ones for
// `partial`. It is what the code promises; a contract variant is code that breaks the promise.

export function emitOpenApi(model: ServerModel): string | undefined {
  const { server } = model;
  if (server.doc === "none") return undefined;
  const documented: Endpoint[] = [
    ...model.support.filter((op) => op.documented).map((op) => op.endpoint),
    ...model.variants
      .filter((variant) => variant.documented)
      .flatMap((variant) => [variant.built.endpoint, ...(variant.built.alsoAt ?? [])]),
  ];
  const scheme =
    server.auth === "apikey"
      ? { apiKeyAuth: { type: "apiKey", in: "header", name: "X-API-Key" } }
      : server.auth === "bearer"
        ? { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } }
        : { sessionCookie: { type: "apiKey", in: "cookie", name: "session" } };
  const schemeName = Object.keys(scheme)[0]!;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of [...documented].sort((a, b) => a.path.localeCompare(b.path))) {
    const item = paths[endpoint.path] ?? {};
    paths[endpoint.path] = item;
    item[endpoint.method.toLowerCase()] = operation(endpoint);
  }
  const document = {
    openapi: "3.0.3",
    info: {
      title: server.name,
      version: "1.0.0",
      description: `${server.doc === "full" ? "The" : "Part of the"} API of a qaas corpus server.`,
    },
    servers: [{ url: "/" }],
    security: [{ [schemeName]: [] }],
    components: { securitySchemes: scheme },
    paths,
  };
  return `# ${GENERATED_NOTICE}\n${stringify(document, { lineWidth: 0, aliasDuplicateObjects: false })}`;
}

function operation(endpoint: Endpoint): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: operationId(endpoint),
    summary: endpoint.summary,
  };
  if (endpoint.access === "admin") {
    op.description = `${endpoint.description ?? ""}${endpoint.description ? " " : ""}Requires the admin role.`;
    op["x-required-role"] = "admin";
  } else if (endpoint.description) {
    op.description = endpoint.description;
  }
  if (endpoint.access === "public") op.security = [];
  if (endpoint.parameters && endpoint.parameters.length > 0) {
    op.parameters = endpoint.parameters.map((param) => ({
      name: param.name,
      in: param.in,
      required: param.required ?? false,
      ...(param.description ? { description: param.description } : {}),
      schema: param.schema,
    }));
  }
  if (endpoint.body) {
    op.requestBody = {
      required: endpoint.body.required ?? true,
      content: { [endpoint.body.contentType]: { schema: endpoint.body.schema } },
    };
  }
  op.responses = Object.fromEntries(
    Object.entries(endpoint.responses).map(([status, answer]) => [status, response(answer)]),
  );
  return op;
}

function response(answer: DocResponse): Record<string, unknown> {
  return {
    description: answer.description,
    ...(answer.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(answer.headers).map(([name, schema]) => [name, { schema }]),
          ),
        }
      : {}),
    ...(answer.contentType
      ? { content: { [answer.contentType]: answer.schema ? { schema: answer.schema } : {} } }
      : {}),
  };
}

export function operationId(endpoint: Pick<Endpoint, "method" | "path">): string {
  const words = endpoint.path
    .replace(/\{(\w+)\}/g, "by $1")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0);
  return [endpoint.method.toLowerCase(), ...words.map((word) => word[0]!.toUpperCase() + word.slice(1))].join(
    "",
  );
}
