import type { FormInput, Operation, SystemMap } from "../../map/system-map.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { EdgeCase } from "../schema-values/edge-cases.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { asSchema } from "../schema-values/json-schema.ts";

// Without a document, an operation's parameters are names a reader found in a handler, typed as bare strings
// or numbers, with nothing saying which values are real. The pages the crawler saw know more: concrete URLs
// (`/shops/harbour`) hold real path values, the forms a page posts or a script reads offer real choices
// (a select's options) and say what a field is (`type=date`). Fuzzing starts from these values, the way a
// tester starts from what the UI offers, so the edges it then tries reach the code behind the parameter.

type Parameter = Operation["parameters"][number];

/** The name a parameter and a form control share: `practitioner` ≈ `practitioner_id` ≈ `practitionerId`. */
function stem(name: string): string {
  return name
    .replace(/([a-z0-9])(?:_?id|Id|ID)$/, "$1")
    .replace(/[_-]/g, "")
    .toLowerCase();
}

function formInputs(map: SystemMap): FormInput[] {
  return map.pages.flatMap((page) => page.forms.flatMap((form) => form.inputs ?? []));
}

/** The form controls whose name matches `name` exactly or by stem, exact matches first. */
function inputsNamed(map: SystemMap, name: string): FormInput[] {
  const inputs = formInputs(map).filter((input) => input.type !== "hidden" && input.type !== "password");
  const exact = inputs.filter((input) => input.name === name);
  const wanted = stem(name);
  return [...exact, ...inputs.filter((input) => input.name !== name && stem(input.name) === wanted)];
}

const DATE_NAME = /^(date|day)$|[_-](date|day|on)$|^(date|day)[_-]|(?<=[a-z])(Date|Day|On)$/;
const DATE_TIME_NAME =
  /^(datetime|timestamp)$|[_-](at|datetime|time_?stamp)$|(?<=[a-z])(At|Datetime|Timestamp)$/;

/** `date` or `date-time` when a form control of that name is one, or the name says so; else undefined. */
export function calendarFormat(map: SystemMap, name: string): "date" | "date-time" | undefined {
  const type = inputsNamed(map, name)[0]?.type.toLowerCase();
  if (type === "date") return "date";
  if (type === "datetime-local" || type === "datetime") return "date-time";
  if (type && type !== "text" && type !== "search") return undefined;
  if (DATE_NAME.test(name)) return "date";
  if (DATE_TIME_NAME.test(name)) return "date-time";
  return undefined;
}

/** The parameter's schema, a calendar format added when the pages or its name say it holds one. */
export function typedParameterSchema(map: SystemMap, parameter: Parameter): JsonSchema {
  const schema = asSchema(parameter.schema ?? { type: "string" });
  if ((schema.type !== undefined && schema.type !== "string") || typeof schema.format === "string")
    return schema;
  const format = calendarFormat(map, parameter.name);
  return format ? { ...schema, type: "string", format } : schema;
}

/**
 * Values for the optional query parameters of an undocumented operation: a choice a form offers for a
 * control of the same name, or a working day for a calendar parameter (today, or the Monday after a
 * weekend: the ordinary value that reaches the handler; weekends are an edge case of their own). A
 * documented operation keeps its document.
 */
export function uiQueryValues(
  map: SystemMap,
  operation: Operation,
  today = new Date(),
): Record<string, string> {
  const values: Record<string, string> = {};
  if (operation.documented) return values;
  for (const parameter of operation.parameters) {
    if (parameter.in !== "query" || parameter.required) continue;
    const format = typedParameterSchema(map, parameter).format;
    if (format === "date") {
      values[parameter.name] = isoDate(workingDay(today));
      continue;
    }
    if (format === "date-time") {
      values[parameter.name] = `${isoDate(workingDay(today))}T12:00:00`;
      continue;
    }
    const offered = inputsNamed(map, parameter.name)
      .flatMap((input) => [input.value, ...(input.options ?? [])])
      .find((value): value is string => typeof value === "string" && value.trim() !== "");
    if (offered !== undefined) values[parameter.name] = offered;
  }
  return values;
}

/**
 * Path values taken from concrete URLs the crawler saw: for `/api/shops/{slug}/hours`, each `x` of a page
 * or link `/shops/x` — the segment after the same collection name. Values that are a route's own literal
 * segment there (`/shops/new`) are not ids. At most `limit` combinations, in the order first seen.
 */
export function pagePathCandidates(
  map: SystemMap,
  operation: Operation,
  limit = 4,
): Array<Record<string, string>> {
  const names = pathParameterNames(operation.path);
  if (names.length === 0) return [];
  const segments = toTemplateForm(operation.path).split("/").filter(Boolean);
  const literalAfter = new Map<string, Set<string>>();
  for (const other of map.operations) {
    const parts = toTemplateForm(other.path).split("/").filter(Boolean);
    for (const [index, part] of parts.entries()) {
      const next = parts[index + 1];
      if (next && !next.startsWith("{"))
        literalAfter.set(part, (literalAfter.get(part) ?? new Set()).add(next));
    }
  }
  const concrete = [...new Set(map.pages.flatMap((page) => [page.path, ...page.links]))]
    .filter((path) => path.startsWith("/"))
    .map((path) => path.split(/[?#]/)[0]!.split("/").filter(Boolean));
  const perName: string[][] = [];
  for (const name of names) {
    const index = segments.indexOf(`{${name}}`);
    const collection = segments[index - 1];
    if (!collection || collection.startsWith("{")) return [];
    const seen: string[] = [];
    for (const parts of concrete) {
      for (const [position, part] of parts.entries()) {
        const value = parts[position + 1];
        if (part !== collection || !value || literalAfter.get(collection)?.has(value)) continue;
        const decoded = safeDecode(value);
        if (!seen.includes(decoded)) seen.push(decoded);
      }
    }
    if (seen.length === 0) return [];
    perName.push(seen.slice(0, limit));
  }
  const combinations: Array<Record<string, string>> = [];
  for (let index = 0; index < limit; index += 1) {
    const values = Object.fromEntries(
      names.map((name, at) => [name, perName[at]![index % perName[at]!.length]!]),
    );
    if (!combinations.some((known) => JSON.stringify(known) === JSON.stringify(values)))
      combinations.push(values);
  }
  return combinations;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function isoDate(day: Date): string {
  return day.toISOString().slice(0, 10);
}

/** Today, or the Monday after when today falls on a weekend. */
export function workingDay(today: Date): Date {
  const weekday = today.getUTCDay();
  return weekday === 6 ? addDays(today, 2) : weekday === 0 ? addDays(today, 1) : today;
}

function addDays(day: Date, days: number): Date {
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + days));
}

/**
 * Valid calendar values that code working on dates tends to mishandle: a weekend day (nothing open, an
 * empty schedule), today, the ends of months, a leap day, the epoch, far past and far future. All are valid
 * dates, so only a server error counts against them.
 */
export function calendarEdgeCases(format: "date" | "date-time", today = new Date()): EdgeCase[] {
  const start = addDays(today, 1);
  const saturday = addDays(start, (6 - start.getUTCDay() + 7) % 7);
  const sunday = addDays(saturday, 1);
  const year = today.getUTCFullYear();
  const days: Array<[string, Date]> = [
    ["a Saturday", saturday],
    ["a Sunday", sunday],
    ["today", today],
    ["a month's last day", new Date(Date.UTC(year, today.getUTCMonth() + 1, 0))],
    ["a year's last day", new Date(Date.UTC(year, 11, 31))],
    ["a leap day", new Date(Date.UTC(2028, 1, 29))],
    ["the epoch", new Date(Date.UTC(1970, 0, 1))],
    ["the far past", new Date(Date.UTC(1900, 0, 1))],
    ["the far future", new Date(Date.UTC(year + 75, 11, 31))],
  ];
  return days.map(([label, day]) => ({
    label,
    value: format === "date" ? isoDate(day) : `${isoDate(day)}T03:10:00`,
    expectation: "valid" as const,
  }));
}
