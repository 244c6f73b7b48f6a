/** Replaces every occurrence of `from` inside strings of a JSON value (a fresh seed for a new attempt). */
export function reseed(value: unknown, from: string | undefined, to: string): unknown {
  if (!from) return value;
  if (typeof value === "string") return value.split(from).join(to);
  if (Array.isArray(value)) return value.map((item) => reseed(item, from, to));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, reseed(inner, from, to)]));
  }
  return value;
}

/** The value at a dotted path (`address.zip`) of a JSON value. */
export function valueAtPath(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split(".").filter(Boolean)) {
    if (!current || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Whether `container` (a JSON answer) holds `value` at `path`, directly or in its one wrapped object. */
export function echoes(container: unknown, path: string, value: unknown): boolean {
  const same = (candidate: unknown) => JSON.stringify(candidate) === JSON.stringify(value);
  if (same(valueAtPath(container, path))) return true;
  if (container && typeof container === "object" && !Array.isArray(container)) {
    const objects = Object.values(container).filter(
      (inner) => inner && typeof inner === "object" && !Array.isArray(inner),
    );
    return objects.length === 1 && same(valueAtPath(objects[0], path));
  }
  return false;
}

/** A handled error reported with a 2xx: `{ "error": ... }` and nothing that looks like a resource. */
export function looksLikeErrorPayload(json: unknown): boolean {
  if (!json || typeof json !== "object" || Array.isArray(json)) return false;
  const keys = Object.keys(json).map((key) => key.toLowerCase());
  const errorKey = keys.some((key) => key === "error" || key === "errors" || key === "err");
  const resourceKey = keys.some((key) => key === "id" || key === "_id" || key === "uuid" || key === "data");
  return errorKey && !resourceKey;
}
