// Every framework spells a path parameter its own way; the map speaks one dialect (`/items/{id}`) so
// routes from source, operations from OpenAPI and links from a crawl can be compared with each other.

/** How a raw path from source spells its parameters. */
export type PathStyle = "colon" | "angle" | "brace" | "bracket" | "regex";

export function normalizePathTemplate(raw: string, style: PathStyle): string {
  let path = raw.trim();
  if (style === "regex") path = regexToTemplate(path);
  if (style === "colon") {
    // Express/Koa/Fastify/Hono: `:id`, `:id?`, `:id(\\d+)`, Hono's `:id{[0-9]+}`.
    path = path.replace(/:([A-Za-z_$][\w$]*)(\([^)]*\)|\{[^}]*\})?\??/g, "{$1}");
  }
  if (style === "angle") {
    // Flask/Django: `<id>`, `<int:id>`, `<path:rest>`.
    path = path.replace(/<(?:[A-Za-z_][\w]*:)?([A-Za-z_][\w]*)>/g, "{$1}");
  }
  if (style === "brace") {
    // FastAPI/Starlette converters: `{id:int}`, `{rest:path}`.
    path = path.replace(/\{([A-Za-z_][\w]*):[^}]*\}/g, "{$1}");
  }
  if (style === "bracket") {
    // Next.js segments: `[id]`, `[...slug]`, `[[...slug]]`.
    path = path.replace(/\[\[?(?:\.\.\.)?([^\]]+)\]?\]/g, "{$1}");
  }
  return cleanSlashes(path);
}

/** Joins a mount prefix and a path; `/` under a prefix is the prefix itself (Express, Koa, Flask agree). */
export function joinPaths(prefix: string, path: string): string {
  const cleanPrefix = prefix.replace(/\/+$/, "");
  if (path === "" || path === "/")
    return cleanPrefix === "" ? "/" : prefix.endsWith("/") ? `${cleanPrefix}/` : cleanPrefix;
  if (path === "*" && cleanPrefix !== "") return `${cleanPrefix}/*`;
  return cleanSlashes(`${cleanPrefix}/${path.replace(/^\/+/, "")}`);
}

/** A key that makes two templates equal when only their parameter names or a trailing slash differ. */
export function templateKey(path: string): string {
  const withoutTrailing = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return withoutTrailing.replace(/\{[^}]*\}/g, "{}") || "/";
}

/** Parameter names of a `{param}` template, in order. */
export function templateParameters(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? "");
}

function cleanSlashes(path: string): string {
  if (path === "*" || path === "") return path === "" ? "/" : path;
  const leading = path.startsWith("/") ? path : `/${path}`;
  return leading.replace(/\/{2,}/g, "/");
}

/**
 * Best effort for regular-expression routes (Django `re_path`, dispatch by `re.match`): named groups
 * become their names, other groups `{param}`, anchors and escapes go. A pattern that stays a regex after
 * that (alternation, classes) is returned as written so nobody mistakes it for a template.
 */
export function regexToTemplate(pattern: string): string {
  let path = pattern
    .replace(/^\^/, "")
    .replace(/\$$/, "")
    .replace(/\\Z$|\\z$/, "");
  let counter = 0;
  path = replaceGroups(path, (inner) => {
    const named = /^\?P?<([A-Za-z_]\w*)>/.exec(inner);
    if (named) return `{${named[1]}}`;
    if (inner.startsWith("?:")) return undefined;
    counter += 1;
    return counter === 1 ? "{param}" : `{param${counter}}`;
  });
  path = path.replace(/\/\?$/, "/").replace(/\\([./-])/g, "$1");
  return path;
}

/** Replaces top-level `( … )` groups (respecting nesting and escapes); `undefined` keeps the group. */
function replaceGroups(source: string, replace: (inner: string) => string | undefined): string {
  let output = "";
  let index = 0;
  while (index < source.length) {
    const character = source[index];
    if (character === "\\") {
      output += source.slice(index, index + 2);
      index += 2;
      continue;
    }
    if (character !== "(") {
      output += character;
      index += 1;
      continue;
    }
    let depth = 0;
    let end = index;
    for (; end < source.length; end += 1) {
      if (source[end] === "\\") {
        end += 1;
        continue;
      }
      if (source[end] === "(") depth += 1;
      if (source[end] === ")") depth -= 1;
      if (depth === 0) break;
    }
    const inner = source.slice(index + 1, end);
    output += replace(inner) ?? source.slice(index, end + 1);
    index = end + 1;
  }
  return output;
}
