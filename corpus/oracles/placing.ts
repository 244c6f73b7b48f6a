import type { InputLocation } from "../generator/code.ts";
import type { Ask } from "./oracle.ts";

// Puts one value where a variant reads its input: query, path segment, JSON or form body, header, cookie.

export function placed(
  ask: Ask & { path: string },
  where: InputLocation,
  name: string,
  value: string,
  extra: Record<string, string> = {},
): Ask {
  switch (where) {
    case "query":
      return { ...ask, query: { ...ask.query, ...extra, [name]: value } };
    case "path":
      return { ...ask, path: ask.path.replace(`{${name}}`, encodeURIComponent(value)) };
    case "json":
      return { ...ask, json: { ...extra, [name]: value } };
    case "form":
      return { ...ask, form: { ...extra, [name]: value } };
    case "header":
      return { ...ask, headers: { ...ask.headers, [name]: value } };
    case "cookie":
      return { ...ask, cookies: { ...ask.cookies, [name]: value } };
  }
}

/** The HTTP method a body-carried input needs. */
export function methodFor(where: InputLocation): "GET" | "POST" {
  return where === "json" || where === "form" ? "POST" : "GET";
}
