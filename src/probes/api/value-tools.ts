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

const ERROR_KEY = /^(error|errors|err|error_?(message|code|description)|fault|failure)$/;
const ID_KEY = /^(id|_id|uuid)$/;
/** Envelope keys that hold a resource only when they hold a structure (`{"result": "error"}` is a verdict). */
const ENVELOPE_KEY = /^(data|items|results|result)$/;
const MESSAGE_KEY = /^(message|msg|detail|details|description|reason|title|code|status|status_?code)$/;
const FAILURE_TEXT =
  /not found|not exist|no such|unknown|missing|required|invalid|unauthori[sz]ed|unauthenticated|forbidden|denied|not allowed|log ?in|sign ?in|credential|expired|error|fail/i;

/**
 * A handled error reported with a 2xx: `{ "error": ... }`, `{ "ok": false, ... }`, `{ "status": "error" }`
 * or a lone message saying what failed, and nothing that looks like a resource (an id, a data envelope).
 */
export function looksLikeErrorPayload(json: unknown): boolean {
  if (!json || typeof json !== "object" || Array.isArray(json)) return false;
  const entries = Object.entries(json as Record<string, unknown>).map(
    ([key, value]) => [key.toLowerCase(), value] as const,
  );
  const holdsResource = ([key, value]: readonly [string, unknown]) =>
    ID_KEY.test(key) || (ENVELOPE_KEY.test(key) && value !== null && typeof value === "object");
  if (entries.some(holdsResource)) return false;
  if (
    entries.some(([key, value]) => ERROR_KEY.test(key) && value !== null && value !== false && value !== "")
  )
    return true;
  if (entries.some(([key, value]) => (key === "success" || key === "ok") && value === false)) return true;
  if (
    entries.some(
      ([key, value]) =>
        (key === "status" || key === "result" || key === "outcome") &&
        typeof value === "string" &&
        /^(error|fail|failed|failure|not[ _-]?found|unauthori[sz]ed|forbidden|denied)$/i.test(value),
    )
  )
    return true;
  // Only message-like keys, one of which says what went wrong.
  return (
    entries.length > 0 &&
    entries.length <= 4 &&
    entries.every(([key]) => MESSAGE_KEY.test(key)) &&
    entries.some(([, value]) => typeof value === "string" && FAILURE_TEXT.test(value))
  );
}
