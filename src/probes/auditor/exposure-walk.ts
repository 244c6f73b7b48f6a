// Walking an answer for sensitive values: every field of a JSON body with the record (the nearest object)
// that holds it, CSV exports read as records, and the values that are already masked.

export interface JsonRecordVisit {
  /** `items[0].password_hash`; `""` for the root. */
  path: string;
  /** The field's own name (for array items, the array's). */
  key: string;
  value: unknown;
  /** The nearest object holding the field. */
  record: Record<string, unknown> | undefined;
  /** Whether that object is an element of an array (a list of records). */
  inList: boolean;
}

const MAX_ITEMS = 200;
const MAX_DEPTH = 12;

/** Visits every field at any depth, arrays capped at 200 items. */
export function walkRecords(json: unknown, visit: (entry: JsonRecordVisit) => void): void {
  const step = (
    value: unknown,
    path: string,
    key: string,
    record: Record<string, unknown> | undefined,
    inList: boolean,
    depth: number,
  ): void => {
    visit({ path, key, value, record, inList });
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(value)) {
      for (const [index, item] of value.slice(0, MAX_ITEMS).entries())
        step(item, `${path}[${index}]`, key, record, true, depth + 1);
    } else if (value && typeof value === "object") {
      const object = value as Record<string, unknown>;
      for (const [inner, child] of Object.entries(object))
        step(child, path ? `${path}.${inner}` : inner, inner, object, isListElement(path), depth + 1);
    }
  };
  step(json, "", "", undefined, false, 0);
}

/** A path that ends in `[n]` addresses an element of an array. */
function isListElement(path: string): boolean {
  return /\[\d+\]$/.test(path);
}

/** `***`, `••••`, `sk_live_****cc29`, `[redacted]`, `<hidden>`: a value shown masked is no exposure. */
export function isMaskedValue(value: string): boolean {
  const trimmed = value.trim();
  if (/^[*•x·.\s_-]*$/i.test(trimmed)) return true;
  if (/^[[<(]?(redacted|hidden|masked|filtered|removed|secret|omitted)[\]>)]?$/i.test(trimmed)) return true;
  return /[*•]{3,}|x{6,}|X{6,}|\.{3,}|…/.test(trimmed);
}

/** Bits per character; random keys score above ~3.5, words and ids well below. */
export function shannonEntropy(text: string): number {
  if (!text) return 0;
  const counts = new Map<string, number>();
  for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const probability = count / text.length;
    entropy -= probability * Math.log2(probability);
  }
  return entropy;
}

/**
 * A CSV export read as records (its header row names the fields), or undefined when the text is not CSV:
 * at least a header and one row, every row with the header's number of cells.
 */
export function csvRecords(text: string, contentType: string): Array<Record<string, string>> | undefined {
  const looksCsv = /csv|comma-separated/i.test(contentType) || /^[\w" .-]+(,[\w" .-]+)+\r?\n/.test(text);
  if (!looksCsv || /^\s*[<{[]/.test(text)) return undefined;
  const rows = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "")
    .slice(0, MAX_ITEMS + 1)
    .map(splitCsvLine);
  const header = rows[0];
  if (!header || header.length < 2 || rows.length < 2) return undefined;
  if (rows.slice(1).some((row) => row.length !== header.length)) return undefined;
  return rows
    .slice(1)
    .map((row) => Object.fromEntries(header.map((name, index) => [name.trim(), row[index]!])));
}

function splitCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let index = 0; index < line.length; index += 1) {
    const character = line[index]!;
    if (quoted) {
      if (character === '"' && line[index + 1] === '"') {
        cell += '"';
        index += 1;
      } else if (character === '"') quoted = false;
      else cell += character;
    } else if (character === '"') quoted = true;
    else if (character === ",") {
      cells.push(cell);
      cell = "";
    } else cell += character;
  }
  cells.push(cell);
  return cells;
}
