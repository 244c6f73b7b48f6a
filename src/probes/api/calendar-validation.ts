import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { FormInput, Operation, SystemMap } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isRedirect, statusOf } from "../http/http-types.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import { pathOfAction } from "../session/html-forms.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { operationKey } from "./operation-index.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { buildRequest, clonePrepared, requestSchema } from "./request-builder.ts";
import { uniqueSeed } from "./resource-factory.ts";
import { calendarFormat } from "./ui-values.ts";
import { looksLikeErrorPayload } from "./value-tools.ts";

// A booking, a reservation or a meeting belongs to the future: a form that takes one for yesterday stores
// what the business can never honour. Claimed only when three answers agree: the write is accepted for a
// future day (a redirect to what it created, or a 2xx that is not an error), refused for a malformed day
// (so the field is validated at all), and accepted again — twice — for a day already past.

/**
 * Field names that only make sense ahead of time. A due date, a deadline or a start may well lie in the past
 * (an overdue task, a backdated event), so those count only through their collection or a stated `min`.
 */
const FUTURE_FIELD =
  /(^|[_-])(scheduled|arrival|departure|check_?in|check_?out)([_-]|$)|^(scheduled|arrival|departure|checkIn|checkOut)[A-Z]/i;
/** Collections whose items happen in the future. */
const FUTURE_COLLECTION =
  /^(appointments?|bookings?|reservations?|meetings?|visits?|sessions?-?bookings?|rentals?|trips?)$/i;

interface CalendarField {
  name: string;
  format: "date" | "date-time";
  /** The form control's own lower bound (`min`), when it states one. */
  min?: string;
}

interface Submitted {
  prepared: PreparedRequest;
  exchange: HttpExchange;
}

/** The form the operation's page posts to it, with its controls. */
function formControls(map: SystemMap, operation: Operation): FormInput[] {
  const page = operation.form?.page;
  const action = operation.path.replace(/\{[^}]+\}/g, "[^/]+");
  for (const candidate of map.pages) {
    if (page && candidate.path.split("?")[0] !== page) continue;
    for (const form of candidate.forms) {
      const path = pathOfAction(new URL(form.action, "http://page.invalid").toString()) ?? form.action;
      if (
        form.method.toUpperCase() === operation.method.toUpperCase() &&
        new RegExp(`^${action}/?$`).test(path)
      )
        return form.inputs ?? [];
    }
  }
  return [];
}

/** The operation's date fields when it is about something to happen later; empty otherwise. */
export function futureCalendarFields(map: SystemMap, operation: Operation): CalendarField[] {
  if (operation.method.toUpperCase() !== "POST") return [];
  const schema = requestSchema(operation);
  if (!schema) return [];
  const controls = formControls(map, operation);
  const collection = operation.path
    .split("/")
    .filter((segment) => segment && !segment.startsWith("{"))
    .some((segment) => FUTURE_COLLECTION.test(segment));
  const fields: CalendarField[] = [];
  for (const name of Object.keys(propertiesOf(schema))) {
    const control = controls.find((input) => input.name === name);
    const type = control?.type.toLowerCase();
    const format =
      type === "date"
        ? "date"
        : type === "datetime-local"
          ? "date-time"
          : type === undefined || type === "text"
            ? calendarFormat(map, name)
            : undefined;
    if (!format) continue;
    const min =
      control?.min && control.min >= new Date().toISOString().slice(0, 10) ? control.min : undefined;
    if (min || collection || FUTURE_FIELD.test(name)) fields.push({ name, format, min });
  }
  return fields;
}

const REFUSED_CALLER = new Set([401, 403, 405]);

const TIME_FIELD = /^(time|hour|slot)$|[_-](time|hour|slot)$/i;

/** The body a person would send: the form's own choices, the day given, 10:00 for a time. */
function plausibleBody(
  map: SystemMap,
  operation: Operation,
  prepared: PreparedRequest,
  fields: readonly CalendarField[],
  day: string,
): Record<string, unknown> {
  const body = { ...((prepared.body as Record<string, unknown> | undefined) ?? {}) };
  for (const control of formControls(map, operation)) {
    if (control.type === "hidden" || !(control.name in body)) continue;
    const offered = [control.value, ...(control.options ?? [])].find((value) => value && value.trim() !== "");
    if (offered !== undefined) body[control.name] = offered;
    else if (control.type === "textarea" || control.type === "text")
      body[control.name] = "qaas booking check";
    if (control.type === "time" || TIME_FIELD.test(control.name))
      body[control.name] = offered && /^\d{1,2}:\d{2}/.test(offered) ? offered : "10:00";
  }
  for (const field of fields) body[field.name] = field.format === "date" ? day : `${day}T10:00`;
  return body;
}

/** A 3xx to another page (Post/Redirect/Get to what was made), or a 2xx that is no error payload. */
function accepted(operation: Operation, exchange: HttpExchange | undefined): boolean {
  const status = statusOf(exchange);
  const response = exchange?.response;
  if (!response) return false;
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    if (!location) return false;
    const target = new URL(location, exchange.request.url).pathname.replace(/\/$/, "");
    const own = [operation.form?.page, new URL(exchange.request.url).pathname].map((path) =>
      (path ?? "").split("?")[0]!.replace(/\/$/, ""),
    );
    return !own.includes(target) && !/log-?in|sign-?in|sign_in|error/i.test(target);
  }
  if (status === 201) return true;
  if (status >= 200 && status < 300) {
    const json = response.json;
    return json !== undefined && typeof json === "object" && !looksLikeErrorPayload(json);
  }
  return false;
}

/**
 * Day offsets whole weeks apart, drawn at random between 2 and 40 weeks away: a booking an earlier run made
 * holds its slot, and random weeks rarely meet it again.
 */
function weeksAway(count: number, sign: 1 | -1): number[] {
  const weeks = new Set<number>();
  while (weeks.size < count) weeks.add(2 + Math.floor(Math.random() * 39));
  return [...weeks].map((week) => sign * week * 7);
}

function isoDay(offsetDays: number, weekday?: number): string {
  const day = new Date();
  day.setUTCDate(day.getUTCDate() + offsetDays);
  if (weekday !== undefined) day.setUTCDate(day.getUTCDate() + ((weekday - day.getUTCDay() + 7) % 7));
  return day.toISOString().slice(0, 10);
}

/**
 * For a creation whose date fields name something to happen later, whether a past date is accepted where
 * a malformed one is refused. Sends at most (users × 3) + 5 requests per operation.
 */
export async function pastDateAccepted(
  run: ProbeRun,
  operation: Operation,
  users: ReadonlyArray<string | undefined>,
): Promise<EnvelopeDraft[]> {
  const fields = futureCalendarFields(run.map, operation);
  const field = fields[0];
  if (!field) return [];
  const submit = async (user: string | undefined, day: string): Promise<Submitted | undefined> => {
    const prepared = buildRequest(operation, { seed: uniqueSeed() });
    prepared.body = plausibleBody(run.map, operation, prepared, fields, day);
    const exchange = await sendPrepared(run, user, prepared);
    return exchange ? { prepared, exchange } : undefined;
  };
  let future: { user: string | undefined; sent: Submitted } | undefined;
  for (const user of users) {
    // Two future weekdays: the first may meet a slot already taken.
    for (const offset of weeksAway(3, 1)) {
      const sent = await submit(user, isoDay(offset, 2));
      if (sent && accepted(operation, sent.exchange)) {
        future = { user, sent };
        break;
      }
      // Not this user's to make (or not signed in): the next user, not the next day.
      if (!sent || REFUSED_CALLER.has(statusOf(sent.exchange)) || isRedirect(sent.exchange)) break;
    }
    if (future) break;
  }
  if (!future) return [];
  // Only the field under test changes between the requests compared.
  const withDay = (value: string): PreparedRequest => {
    const prepared = clonePrepared(future!.sent.prepared);
    const body = { ...(prepared.body as Record<string, unknown>) };
    body[field.name] = field.format === "date" ? value : `${value}T10:00`;
    prepared.body = body;
    return prepared;
  };
  const malformed = await sendPrepared(run, future.user, withDay("2024-13-45"));
  if (!malformed?.response || accepted(operation, malformed)) return [];
  // Two past days accepted, of up to four tried: one may meet a slot an earlier run already holds.
  const pasts: Array<{ day: string; exchange: HttpExchange }> = [];
  for (const offset of weeksAway(4, -1)) {
    if (pasts.length === 2) break;
    const day = isoDay(offset, 2);
    const exchange = await sendPrepared(run, future.user, withDay(day));
    if (exchange && accepted(operation, exchange)) pasts.push({ day, exchange });
  }
  const [past, again] = pasts;
  if (!past || !again) return [];
  const pastDay = past.day;
  const key = operationKey(operation);
  const pastPrepared = withDay(pastDay);
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "validation-missing",
      title: `${key} accepts a ${field.name} in the past`,
      summary: `${key} accepted ${field.name} = ${pastDay} (${statusOf(past.exchange)}${past.exchange.response?.headers.location ? ` to ${past.exchange.response.headers.location}` : ""}) and again for ${again.day}, as it accepts a future day; a malformed ${field.name} is refused (${statusOf(malformed)}), so the field is validated, but not against the past${field.min ? ` although its form states min=${field.min}` : ""}.`,
      impact:
        "Bookings are stored for times that have already gone: they can never be honoured, yet they count, charge and notify.",
      location: endpointLocation(operation),
      severity: severityFor("validation-missing"),
      confidence: 0.8,
      discriminator: `past-date:${field.name}`,
      exchanges: [
        { label: "past", exchange: past.exchange },
        { label: "future", exchange: future.sent.exchange },
        { label: "malformed", exchange: malformed },
        { label: "past-again", exchange: again.exchange },
      ],
      repro: {
        title: `${key} refuses a ${field.name} in the past`,
        steps: [stepFromPrepared("past", pastPrepared, future.user)],
        assertions: [
          {
            kind: "status_in",
            step: "past",
            // A form refuses by showing itself again (often 200); an API by a 4xx.
            values: operation.form ? [200, 400, 409, 422] : [400, 409, 422],
            message: `${key} must refuse a past ${field.name}`,
          },
        ],
      },
    }),
  ];
}
