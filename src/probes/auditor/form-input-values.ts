import { randomInt } from "node:crypto";
import type { Operation, SystemMap } from "../../map/system-map.ts";
import { matchesTemplate, toTemplateForm } from "../http/target-url.ts";

// Values a browser's form controls would accept, for the fields of a form a page shows. A probe that plants
// a marker in one field must get the others past validation or nothing is saved: a date field wants a
// date, a time field a time, a select one of its options. The map's schema of a server-rendered form says
// only "string"; the page's controls say what each field is. A field a script fills (a select of slots
// loaded later, with no option yet) is judged by its name.

export interface FormControl {
  name: string;
  type?: string;
  value?: string;
  options?: string[];
}

/** The controls of the form that posts to `operation`, from the pages of the map. */
export function formControls(map: SystemMap, operation: Operation): FormControl[] {
  const method = operation.method.toUpperCase();
  const template = toTemplateForm(operation.path);
  for (const page of map.pages)
    for (const form of page.forms) {
      if (form.method.toUpperCase() !== method) continue;
      let action: string;
      try {
        action = new URL(form.action || page.path, `http://page.invalid${page.path}`).pathname;
      } catch {
        continue;
      }
      if (matchesTemplate(template, action) === undefined) continue;
      return (form.inputs ?? form.fields.map((name) => ({ name }))) as FormControl[];
    }
  return [];
}

const pad = (value: number) => String(value).padStart(2, "0");

function isoDate(day: Date): string {
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`;
}

/**
 * A time in working hours on a random minute: two plants rarely ask for the same slot, and a form that
 * books slots refuses a taken one.
 */
function workingTime(): string {
  return `${pad(9 + randomInt(0, 8))}:${pad(randomInt(0, 60))}`;
}

/** The kind of value a control takes, by its type, else by its name. */
function kindOf(control: FormControl): string | undefined {
  const type = (control.type ?? "").toLowerCase();
  if (["date", "time", "datetime-local", "month", "email", "number", "tel", "url"].includes(type))
    return type;
  const name = control.name.toLowerCase();
  if (/(^|[_-])(date|day)$|^(date|day)([_-]|$)/.test(name)) return "date";
  if (/(^|[_-])(time|slot|hour)$|^(time|slot|hour)([_-]|$)|^(starts?|ends?)_?at$/.test(name)) return "time";
  if (/e-?mail/.test(name)) return "email";
  return undefined;
}

/**
 * Valid values for the form's fields (those a probe does not set), keyed by field name: a date (today,
 * where lists of "today" show new entries), a time in working hours, an address, a number, a URL, and for
 * a select whose value is not one of its options, its first non-empty option.
 */
export function validFormValues(controls: readonly FormControl[], day = new Date()): Record<string, string> {
  const values: Record<string, string> = {};
  for (const control of controls) {
    const type = (control.type ?? "").toLowerCase();
    if (type === "hidden" || type === "submit" || type === "button") continue;
    if (type === "select" || type === "select-one") {
      const options = (control.options ?? []).filter((option) => option !== "");
      if (options.length > 0) {
        if (!control.value || !options.includes(control.value)) values[control.name] = options[0]!;
        continue;
      }
    }
    const kind = kindOf(control);
    if (kind === "date") values[control.name] = isoDate(day);
    else if (kind === "time") values[control.name] = workingTime();
    else if (kind === "datetime-local") values[control.name] = `${isoDate(day)}T${workingTime()}`;
    else if (kind === "month") values[control.name] = isoDate(day).slice(0, 7);
    else if (kind === "email") values[control.name] = `qaas.${randomInt(1e6, 1e7)}@example.com`;
    else if (kind === "number") values[control.name] = control.value || "1";
    else if (kind === "tel") values[control.name] = "+15555550100";
    else if (kind === "url") values[control.name] = "https://example.com/";
  }
  return values;
}
