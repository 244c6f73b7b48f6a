import type { Operation, Page, SystemMap } from "../../map/system-map.ts";
import { chooseBranch, propertiesOf } from "../schema-values/json-schema.ts";
import { pathOfAction } from "../session/html-forms.ts";
import { requestSchema } from "./request-builder.ts";

// The forms of the application's pages that send an operation's request. A form with an action posts where
// it says; a form with neither action nor method is sent by a script, and is taken to feed a write whose
// request carries every one of its fields (at least two), as `$.post("/orders", $(form).serialize())` does.

export type PageForm = Page["forms"][number];

/** An anti-forgery token's field: bound to the session, never a field of the operation's own. */
export const SESSION_FIELD = /(^|_)(csrf|xsrf)(_|$)|^csrfmiddlewaretoken$|^authenticity_token$|^_token$/i;

export function postingForms(map: SystemMap, operation: Operation): Array<{ page: Page; form: PageForm }> {
  const method = operation.method.toUpperCase();
  const action = new RegExp(
    `^${operation.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}/?$`,
  );
  const schema = requestSchema(operation);
  const accepted = new Set([
    ...Object.keys(schema ? propertiesOf(chooseBranch(schema)) : {}),
    ...operation.parameters
      .filter((parameter) => parameter.in === "query")
      .map((parameter) => parameter.name),
  ]);
  const found: Array<{ page: Page; form: PageForm }> = [];
  for (const page of map.pages)
    for (const form of page.forms) {
      if (form.scripted) {
        const fields = form.fields.filter((field) => !SESSION_FIELD.test(field));
        if (method !== "GET" && fields.length >= 2 && fields.every((field) => accepted.has(field)))
          found.push({ page, form });
        continue;
      }
      const path = pathOfAction(new URL(form.action, "http://page.invalid").toString()) ?? form.action;
      if (form.method.toUpperCase() === method && action.test(path)) found.push({ page, form });
    }
  return found;
}
