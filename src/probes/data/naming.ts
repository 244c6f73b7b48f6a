import type { Table } from "../../map/system-map.ts";

// Code, URLs and schemas name the same thing differently (`User`, `users`, `/api/users`, `userId`,
// `user_id`): these helpers decide when two names mean the same table or column.

export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[-\s]+/g, "_")
    .toLowerCase();
}

export function camelCase(name: string): string {
  return name.replace(/[_-]([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** Singular and plural forms of a lower-case word. */
export function nameForms(name: string): string[] {
  const base = snakeCase(name);
  const forms = new Set([base]);
  if (base.endsWith("ies")) forms.add(`${base.slice(0, -3)}y`);
  else if (base.endsWith("ses") || base.endsWith("xes") || base.endsWith("ches") || base.endsWith("shes")) {
    forms.add(base.slice(0, -2));
  } else if (base.endsWith("s")) forms.add(base.slice(0, -1));
  // survey → surveys (a vowel before the y), category → categories.
  if (/[aeiou]y$/.test(base)) forms.add(`${base}s`);
  else if (base.endsWith("y")) forms.add(`${base.slice(0, -1)}ies`);
  else if (/(s|x|ch|sh)$/.test(base)) forms.add(`${base}es`);
  else forms.add(`${base}s`);
  return [...forms];
}

export function findTable(tables: readonly Table[], name: string): Table | undefined {
  const lower = name.toLowerCase();
  return tables.find((table) => table.name.toLowerCase() === lower);
}

/**
 * The table a model or collection name refers to: a declared mapping first, then the same word in either
 * number, then (Django's `app_model`) a table ending in `_<model>`.
 */
export function tableForName(
  tables: readonly Table[],
  name: string,
  declared: Readonly<Record<string, string>> = {},
): Table | undefined {
  const mapped = declared[name];
  if (mapped) return findTable(tables, mapped);
  const exact = findTable(tables, name);
  if (exact) return exact;
  const forms = nameForms(name);
  const byForm = tables.find((table) => forms.includes(table.name.toLowerCase()));
  if (byForm) return byForm;
  const suffixed = tables.filter((table) =>
    forms.some((form) => table.name.toLowerCase().endsWith(`_${form}`)),
  );
  return suffixed.length === 1 ? suffixed[0] : undefined;
}

/** The column a property names in `table` (declared mapping, then as written, then snake_case). */
export function columnForProperty(
  table: Table,
  property: string,
  model?: string,
  declared: Readonly<Record<string, string>> = {},
): string | undefined {
  const mapped = model ? declared[`${model}.${property}`] : undefined;
  const candidates = [mapped, property, snakeCase(property)].filter((value): value is string =>
    Boolean(value),
  );
  for (const candidate of candidates) {
    const column = table.columns.find((entry) => entry.name.toLowerCase() === candidate.toLowerCase());
    if (column) return column.name;
  }
  return undefined;
}

/** Whether a request property carries `column` (`email`, `userId` for `user_id`). */
export function propertyMatchesColumn(property: string, column: string): boolean {
  const left = snakeCase(property);
  const right = snakeCase(column);
  return left === right;
}

/** How well a URL path fits a table: 2 for its last static segment, 1 for any segment, 0 for none. */
export function pathFitsTable(path: string, table: string): number {
  const segments = path
    .split("/")
    .filter((segment) => segment && !segment.startsWith("{") && !segment.startsWith(":"))
    .map((segment) => snakeCase(segment));
  const forms = new Set(nameForms(table).concat(nameForms(table.replace(/^.*_/, ""))));
  if (segments.length > 0 && forms.has(segments[segments.length - 1]!)) return 2;
  return segments.some((segment) => forms.has(segment)) ? 1 : 0;
}

/**
 * The table a collection path stores its rows in, when the last segment alone is ambiguous: among the
 * tables named `<word>_<collection>` (`reports_reels`, `order_lines`, `post_comments`), the one whose other
 * words all appear in the path (`/api/reports/reels`, `/orders/{id}/lines` → `order_lines`).
 */
export function tableForPath(tables: readonly Table[], path: string): Table | undefined {
  const segments = path
    .split("/")
    .filter((segment) => segment && !segment.startsWith("{") && !segment.startsWith(":"))
    .map((segment) => snakeCase(segment));
  const last = segments[segments.length - 1];
  if (!last) return undefined;
  const direct = tableForName(tables, last);
  if (direct) return direct;
  const words = new Set(segments.slice(0, -1).flatMap((segment) => nameForms(segment)));
  const fitting = tables.filter((table) => {
    const name = table.name.toLowerCase();
    const form = nameForms(last).find((candidate) => name.endsWith(`_${candidate}`));
    if (!form) return false;
    const prefix = name.slice(0, -(form.length + 1)).split("_");
    return prefix.every((word) => words.has(word));
  });
  return fitting.length === 1 ? fitting[0] : undefined;
}

/** The word of the lower bound → the words that can name its upper bound. */
export const UPPER_OF: Record<string, string[]> = {
  start: ["end", "finish", "stop"],
  starts: ["ends", "finishes", "stops"],
  started: ["ended", "finished", "stopped"],
  begin: ["end"],
  begins: ["ends"],
  from: ["to", "until", "till", "through", "thru"],
  since: ["until", "till"],
  open: ["close"],
  opens: ["closes"],
  opening: ["closing"],
  opened: ["closed"],
  in: ["out"],
  checkin: ["checkout"],
  arrival: ["departure"],
  arrive: ["depart"],
  arrives: ["departs"],
  pickup: ["dropoff", "return"],
  min: ["max"],
  minimum: ["maximum"],
  lower: ["upper"],
  low: ["high"],
  earliest: ["latest"],
};

/**
 * The upper bound's name beside a lower bound's among `names` (`starts_on` → `ends_on`, `checkIn` →
 * `checkOut`), when there is one.
 */
export function upperBoundOf(name: string, names: readonly string[]): string | undefined {
  const words = snakeCase(name).split("_");
  const bySnake = new Map(names.map((entry) => [snakeCase(entry), entry]));
  for (const [index, word] of words.entries()) {
    // `in` and `out` pair only beside another word (`check_in`), never alone.
    if (word === "in" && words.length < 2) continue;
    for (const upperWord of UPPER_OF[word] ?? []) {
      const found = bySnake.get([...words.slice(0, index), upperWord, ...words.slice(index + 1)].join("_"));
      if (found && found !== name) return found;
    }
  }
  return undefined;
}
