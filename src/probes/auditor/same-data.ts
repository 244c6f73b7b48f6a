import { isHtmlDocument, samePage } from "./same-page.ts";

// "Same data returned = leak": two answers are compared by what they carry, never by status alone.

const VOLATILE_KEY =
  /(^|_)(at|on|time|timestamp|date|ts|etag|version|request_?id|trace_?id|nonce|csrf.*)$|At$|Time$/i;

function leaves(value: unknown, path: string, into: Map<string, unknown>): void {
  if (Array.isArray(value)) {
    for (const [index, item] of value.slice(0, 50).entries()) leaves(item, `${path}[${index}]`, into);
    return;
  }
  if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (VOLATILE_KEY.test(key)) continue;
      leaves(inner, path ? `${path}.${key}` : key, into);
    }
    return;
  }
  into.set(path, value);
}

/** Values that identify data: strings of 3+ characters and numbers other than 0 and 1. */
function distinctive(value: unknown): boolean {
  if (typeof value === "string") return value.trim().length >= 3;
  if (typeof value === "number") return value !== 0 && value !== 1;
  return false;
}

/** Whether an answer carries any data at all (an empty list or `{}` proves nothing). */
export function carriesData(json: unknown, text: string): boolean {
  if (json === undefined) return text.trim().length >= 20;
  const found = new Map<string, unknown>();
  leaves(json, "", found);
  return [...found.values()].some(distinctive);
}

/**
 * Whether `other` returns the data `reference` returned: a planted marker appears in it, or at least 80%
 * (and two or more) of the reference's distinctive JSON values appear at the same places, or the texts are
 * identical and substantial, or two HTML pages show the same content (same-page.ts).
 */
export function sameData(
  reference: { json: unknown; text: string },
  other: { json: unknown; text: string },
  markers: readonly string[] = [],
): boolean {
  if (markers.some((marker) => marker.length >= 6 && other.text.includes(marker))) return true;
  if (reference.json !== undefined && other.json !== undefined) {
    const expected = new Map<string, unknown>();
    const actual = new Map<string, unknown>();
    leaves(reference.json, "", expected);
    leaves(other.json, "", actual);
    const telling = [...expected.entries()].filter(([, value]) => distinctive(value));
    if (telling.length === 0) return false;
    const matching = telling.filter(([path, value]) => actual.get(path) === value).length;
    if (matching >= Math.min(2, telling.length) && matching / telling.length >= 0.8) return true;
    return sameItems(reference.json, other.json);
  }
  const trimmed = reference.text.trim();
  if (trimmed.length >= 20 && trimmed === other.text.trim()) return true;
  return (
    reference.json === undefined &&
    other.json === undefined &&
    isHtmlDocument(reference.text) &&
    isHtmlDocument(other.text) &&
    samePage(reference.text, other.text)
  );
}

/** The items of a list answer: the body itself, or its one array-valued field. */
function itemsOf(json: unknown): unknown[] | undefined {
  if (Array.isArray(json)) return json;
  if (!json || typeof json !== "object") return undefined;
  const arrays = Object.values(json).filter(Array.isArray);
  return arrays.length === 1 ? (arrays[0] as unknown[]) : undefined;
}

function itemKey(item: unknown): string {
  const found = new Map<string, unknown>();
  leaves(item, "", found);
  return JSON.stringify([...found.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Two lists holding the same items in another order or with an item added in between (data created by
 * someone else meanwhile): at least 80% (and two or more) of the reference's items appear in the other.
 */
function sameItems(reference: unknown, other: unknown): boolean {
  const expected = itemsOf(reference)
    ?.slice(0, 50)
    .filter((item) => carriesData(item, ""));
  const actual = itemsOf(other);
  if (!expected || !actual || expected.length < 2) return false;
  const present = new Set(actual.slice(0, 200).map(itemKey));
  const matching = expected.filter((item) => present.has(itemKey(item))).length;
  return matching >= 2 && matching / expected.length >= 0.8;
}
