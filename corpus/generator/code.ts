import type { Method, Param, ParamLocation } from "./endpoint.ts";

// Small helpers the family builders write handler code with. Generated code reads like a person wrote it:
// a route, the inputs it takes, the query it runs. JavaScript and Python share enough syntax (double-quoted
// strings, `+` concatenation) that a SQL fragment can often be written once for both.

export type InputLocation = ParamLocation | "json" | "form";

/** `/api/x/{id}` → `/api/x/:id` (Fastify). */
export function fastifyPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}

/** `/api/x/{id}` → `/api/x/<id>` (Flask). */
export function flaskPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, "<$1>");
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
}

/** A Python function name unique per operation. */
export function pyName(method: Method, path: string): string {
  const words = path
    .replace(/\{(\w+)\}/g, "by_$1")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0);
  return `${method.toLowerCase()}_${words.join("_")}`.toLowerCase();
}

function indent(text: string, spaces: number): string {
  const pad = " ".repeat(spaces);
  return text
    .trim()
    .split("\n")
    .map((line) => (line.length > 0 ? pad + line : line))
    .join("\n");
}

/** A Fastify route. `options` is a literal object source (`{ config: { plainHeaders: true } }`). */
export function nodeRoute(method: Method, path: string, body: string, options?: string): string {
  const opts = options ? `${options}, ` : "";
  return `app.${method.toLowerCase()}(${JSON.stringify(fastifyPath(path))}, ${opts}async (request, reply) => {\n${indent(body, 2)}\n});`;
}

/** A Fastify route for signed-in callers: `user` is the caller, and anyone else is answered 401 first. */
export function nodeUserRoute(method: Method, path: string, body: string, options?: string): string {
  return nodeRoute(
    method,
    path,
    `const user = await requireUser(request, reply);\nif (!user) return reply;\n${body}`,
    options,
  );
}

/** A Flask view; path parameters become the function's arguments. */
export function pyRoute(method: Method, path: string, body: string): string {
  const args = pathParams(path).join(", ");
  return `@app.route(${JSON.stringify(flaskPath(path))}, methods=["${method}"])\ndef ${pyName(method, path)}(${args}):\n${indent(body, 4)}`;
}

/** The expression that reads one string input where the row says it travels. */
export function readInput(stack: "node" | "python", where: InputLocation, name: string): string {
  const key = JSON.stringify(name);
  if (stack === "node") {
    switch (where) {
      case "query":
        return `String(request.query[${key}] ?? "")`;
      case "path":
        return `String(request.params[${key}])`;
      case "json":
      case "form":
        return `String((request.body ?? {})[${key}] ?? "")`;
      case "header":
        return `String(request.headers[${JSON.stringify(name.toLowerCase())}] ?? "")`;
      case "cookie":
        return `String(cookies(request)[${key}] ?? "")`;
    }
  }
  switch (where) {
    case "query":
      return `request.args.get(${key}, "")`;
    case "path":
      return `str(${name})`;
    case "json":
      return `str((request.get_json(silent=True) or {}).get(${key}, ""))`;
    case "form":
      return `request.form.get(${key}, "")`;
    case "header":
      return `request.headers.get(${key}, "")`;
    case "cookie":
      return `request.cookies.get(${key}, "")`;
  }
}

/** The documented parameter (or nothing, for body inputs, which the body schema carries). */
export function inputParam(where: InputLocation, name: string, schema: object, required = true): Param[] {
  if (where === "json" || where === "form") return [];
  return [{ name, in: where, required: where === "path" ? true : required, schema: { ...schema } }];
}

export function inputBody(
  where: InputLocation,
  properties: Record<string, object>,
  required: string[],
): { contentType: string; schema: Record<string, unknown>; required: boolean } | undefined {
  if (where !== "json" && where !== "form") return undefined;
  return {
    contentType: where === "json" ? "application/json" : "application/x-www-form-urlencoded",
    schema: { type: "object", properties, required },
    required: true,
  };
}
