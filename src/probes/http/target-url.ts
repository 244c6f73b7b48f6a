/** Fills `{name}` placeholders (also `:name` and `<name>`) with URL-encoded values. */
export function fillPath(template: string, values: Record<string, string | number>): string {
  return template.replace(
    /\{([^}/]+)\}|<(?:[a-z]+:)?([^>/]+)>|:([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, a, b, c) => {
      const name = (a ?? b ?? c) as string;
      const value = values[name];
      return value === undefined ? whole : encodeURIComponent(String(value));
    },
  );
}

export function pathParameterNames(template: string): string[] {
  return [...template.matchAll(/\{([^}/]+)\}|<(?:[a-z]+:)?([^>/]+)>|(?:^|\/):([A-Za-z_][A-Za-z0-9_]*)/g)].map(
    (match) => (match[1] ?? match[2] ?? match[3]) as string,
  );
}

/** `:id` and `<int:id>` → `{id}`, the ledger's location form. */
export function toTemplateForm(path: string): string {
  return path
    .replace(/<(?:[a-z]+:)?([^>/]+)>/g, "{$1}")
    .replace(/(^|\/):([A-Za-z_][A-Za-z0-9_]*)/g, "$1{$2}");
}

export function buildQuery(query: Record<string, string | number | boolean | undefined>): string {
  const pairs = Object.entries(query)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  return pairs.length > 0 ? `?${pairs.join("&")}` : "";
}

/**
 * Joins a path (which already carries any base path, as the system map stores it) to the target's base
 * URL; a base URL with a path of its own is only prefixed when the path does not already start with it.
 */
export function joinUrl(baseUrl: string, path: string): string {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  const normalized = path.startsWith("/") ? path : `/${path}`;
  const full =
    prefix && normalized !== prefix && !normalized.startsWith(`${prefix}/`)
      ? `${prefix}${normalized}`
      : normalized;
  return `${base.origin}${full}`;
}

/** The path of an absolute URL, without query. */
export function pathOfUrl(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split("?")[0] ?? url;
  }
}

/** Whether a concrete path fits a template (`/items/17` fits `/items/{id}`). */
export function matchesTemplate(template: string, concretePath: string): Record<string, string> | undefined {
  const templateParts = toTemplateForm(template).replace(/\/+$/, "").split("/");
  const concreteParts = concretePath.split("?")[0]!.replace(/\/+$/, "").split("/");
  if (templateParts.length !== concreteParts.length) return undefined;
  const values: Record<string, string> = {};
  for (let index = 0; index < templateParts.length; index += 1) {
    const expected = templateParts[index]!;
    const actual = concreteParts[index]!;
    const placeholder = expected.match(/^\{([^}]+)\}$/);
    if (placeholder) {
      if (!actual) return undefined;
      values[placeholder[1]!] = decodeURIComponent(actual);
    } else if (expected.toLowerCase() !== actual.toLowerCase()) {
      return undefined;
    }
  }
  return values;
}
