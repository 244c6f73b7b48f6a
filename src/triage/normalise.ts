// Text of a finding with its volatile values dropped — ids, times, tokens, UUIDs, numbers in paths — so
// two reports of one defect taken at different moments, with different records, compare equal.

const REPLACEMENTS: Array<[RegExp, string]> = [
  // ISO and common date-times before plain numbers eat their parts.
  [/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/gi, " {time} "],
  [/\b\d{1,2}:\d{2}(?::\d{2})?\b/g, " {time} "],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, " {uuid} "],
  // JWTs, bearer tokens, session ids: long runs of token characters with a digit in them.
  [/\b(?=[A-Za-z0-9_.-]*\d)(?=[A-Za-z0-9_.-]*[A-Za-z])[A-Za-z0-9_.-]{20,}\b/g, " {token} "],
  [/\b[0-9a-f]{8,}\b/gi, " {hex} "],
  // A number standing as a path segment is a record id: /orders/42/items → /orders/{id}/items.
  [/\/\d+(?=\/|\b|$)/g, "/{id}"],
  [/\b\d+(?:\.\d+)?\b/g, " {n} "],
];

export function normaliseVolatile(text: string): string {
  let result = text.toLowerCase();
  for (const [pattern, replacement] of REPLACEMENTS) result = result.replace(pattern, replacement);
  return result.replace(/\s+/g, " ").trim();
}

/** Words of normalised text (placeholders kept as one word each), for set comparisons. */
export function normalisedWords(text: string): Set<string> {
  return new Set(
    normaliseVolatile(text)
      .split(/[^a-z0-9{}_]+/)
      .filter((word) => word.length > 1),
  );
}
