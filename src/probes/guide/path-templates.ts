import type { SystemMap } from "../../map/system-map.ts";

// Path templates (`/tasks/{id}/history`) as GUIDE reads them: which concrete paths a template covers, how
// a template is filled with ids seen in crawled links, and which kinds of path are not features a person
// is meant to find by clicking (APIs, sign-in plumbing, health checks, files, pages reached from an email).

/** The GET page templates a map knows (operations and source routes), each once. */
export function getPageTemplates(map: Pick<SystemMap, "operations" | "routes">): string[] {
  return [
    ...new Set([
      ...map.operations
        .filter((operation) => operation.method.toUpperCase() === "GET" && !operation.graphql)
        .map((operation) => operation.path),
      ...map.routes
        .filter((route) => route.method.toUpperCase() === "GET" || route.method === "*")
        .map((route) => route.path),
    ]),
  ];
}

/** The path part of `/path?query`, without a trailing slash (except the root). */
export function pathOnly(reference: string): string {
  const path = reference.split(/[?#]/)[0] ?? reference;
  return path.length > 1 ? path.replace(/\/+$/, "") : path;
}

function segmentsOf(path: string): string[] {
  return pathOnly(path).split("/").filter(Boolean);
}

/** `{id}`, `:id`, `<int:id>`, `[id]`, `*`: a segment that stands for a value. */
export function isParameterSegment(segment: string): boolean {
  return /^\{[^}]+\}$|^:[A-Za-z_]|^<[^>]+>$|^\[[^\]]+\]$|^\*/.test(segment);
}

function parameterName(segment: string): string {
  return segment.replace(/^[{:<[*]+|[}>\]]+$/g, "").replace(/^.*:/, "") || "param";
}

/** Whether a concrete path (query ignored) is an instance of the template. */
export function matchesTemplate(template: string, path: string): boolean {
  const wanted = segmentsOf(template);
  const actual = segmentsOf(path);
  if (wanted.length !== actual.length) return false;
  return wanted.every(
    (segment, index) => isParameterSegment(segment) || segment === decodeSafe(actual[index] ?? ""),
  );
}

function decodeSafe(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function hasParameters(template: string): boolean {
  return segmentsOf(template).some(isParameterSegment);
}

/**
 * Concrete paths for a template, its parameters filled with values crawled paths carry at the same place
 * (`/tasks/42` fills `{id}` of `/tasks/{id}/history`). Undefined when a parameter has no value seen: the
 * check never guesses an id.
 */
export function fillTemplate(
  template: string,
  seenPaths: readonly string[],
  limit = 2,
): string[] | undefined {
  const wanted = segmentsOf(template);
  if (!wanted.some(isParameterSegment)) return [pathOnly(template) || "/"];
  const values = new Map<string, string[]>();
  for (const seen of seenPaths) {
    const actual = segmentsOf(seen);
    // A crawled path fills every parameter of the template's prefix it matches, static segments equal.
    for (let index = 0; index < Math.min(actual.length, wanted.length); index += 1) {
      const segment = wanted[index] as string;
      const value = actual[index] as string;
      if (!isParameterSegment(segment)) {
        if (segment !== decodeSafe(value)) break;
        continue;
      }
      const name = parameterName(segment);
      const known = values.get(name) ?? [];
      if (!known.includes(value) && known.length < 8) values.set(name, [...known, value]);
    }
  }
  // Id-like values first: `/tasks/new` fills `{id}` too, but `/tasks/42` is the record a person opens.
  for (const [name, known] of values)
    values.set(
      name,
      [...known].sort((a, b) => Number(/\d/.test(b)) - Number(/\d/.test(a))),
    );
  const names = wanted.filter(isParameterSegment).map(parameterName);
  if (names.some((name) => !values.get(name)?.length)) return undefined;
  const filled: string[] = [];
  for (let variant = 0; variant < limit; variant += 1) {
    const path = `/${wanted
      .map((segment) => {
        if (!isParameterSegment(segment)) return segment;
        const options = values.get(parameterName(segment)) as string[];
        return options[variant % options.length];
      })
      .join("/")}`;
    if (!filled.includes(path)) filled.push(path);
  }
  return filled;
}

/** The literal parts of a template between its parameters: `/tasks/{id}/history` → `/tasks/`, `/history`. */
export function staticRuns(template: string): string[] {
  const runs: string[] = [];
  let current = "";
  for (const segment of segmentsOf(template)) {
    if (isParameterSegment(segment)) {
      if (current) runs.push(`${current}/`);
      current = "";
    } else current += `/${segment}`;
  }
  if (current) runs.push(current);
  return runs;
}

/**
 * The template a concrete path belongs to: the most specific known template it matches, else the path
 * with its id-like segments (numbers, UUIDs, long hex or slugs with digits) written `{id}`.
 */
export function templateOf(path: string, templates: readonly string[]): string {
  const matching = templates
    .filter((template) => matchesTemplate(template, path))
    .sort((a, b) => parameterCount(a) - parameterCount(b));
  if (matching[0]) return matching[0];
  const segments = segmentsOf(path).map((segment) =>
    /^\d+$|^[0-9a-f]{8}-[0-9a-f]{4}-|^[0-9a-f]{16,}$|^(?=.*\d)[A-Za-z0-9_-]{12,}$/i.test(segment)
      ? "{id}"
      : segment,
  );
  return `/${segments.join("/")}`;
}

function parameterCount(template: string): number {
  return segmentsOf(template).filter(isParameterSegment).length;
}

/**
 * Paths that are not features a person finds by navigating: machine endpoints, sign-in plumbing, health
 * and metrics, files, error pages, and pages people reach from an email (reset, verify, invite). Words
 * that also name real sections of an application (events, media, files) are not on the list: a file is
 * told by its extension.
 */
const NOT_A_FEATURE =
  /(?:^|\/)(?:api|v\d+|graphql|rpc|socket\.io|ws|sse|_next|__\w*|static|assets?|public|dist|build|uploads?|img|images|css|js|fonts?|favicon[^/]*|robots\.txt|sitemap[^/]*|\.well-known|health[\w-]*|healthz|readyz|livez|ping|status|metrics|version|debug|webhooks?|hooks?|callbacks?|oauth[\w-]*|sso|saml|auth|login|log-?in|sign-?in|signin|logout|log-?out|sign-?out|signout|sign-?up|signup|register|password[\w-]*|reset[\w-]*|forgot[\w-]*|verify[\w-]*|verification|confirm[\w-]*|activate[\w-]*|invite[\w-]*|invitations?|unsubscribe|errors?|404|500|403|401|not-found|maintenance|manifest[^/]*|service-worker[^/]*|sw\.js)(?:$|[/.])/i;

/** Whether a template names something a person could be expected to find through the UI. */
export function mayBeFeaturePage(template: string): boolean {
  const path = pathOnly(template);
  if (path === "/" || path === "") return false;
  if (/\.[a-z0-9]{1,5}$/i.test(path) && !/\.(?:html?|php|aspx?|jsp)$/i.test(path)) return false;
  return !NOT_A_FEATURE.test(path);
}
