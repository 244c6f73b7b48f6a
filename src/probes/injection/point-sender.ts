import type { Operation } from "../../map/system-map.ts";
import { candidateUsers, sendAsRightRole, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import type { PointBaseline } from "../auditor/point-request.ts";
import { callersOf, pointBaseline, pointValue, withValue } from "../auditor/point-request.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { submitForm } from "../session/probe-run.ts";
import type { FormFields } from "../session/send-form.ts";
import type { ProfileUser } from "../session/sign-in.ts";

// One input point made sendable with any value. API operations go out as prepared requests; a form a page
// shows goes out as a browser submits it (the page loaded first for a fresh CSRF token), or the server would
// refuse every probe for want of a token and the probe would learn nothing.

export interface OpenPoint extends PointBaseline {
  /** The operation submitted as a browser submits its form (set for forms of crawled pages). */
  form: Operation | undefined;
}

export interface Sent {
  prepared: PreparedRequest;
  /** The answer to the request itself. */
  exchange: HttpExchange;
  /** Where a browser landed after following redirects (the answer itself when none were followed). */
  landed: HttpExchange;
}

/** The operation as a form to submit, when a page shows it and it is not a plain GET. */
function formOperation(point: InputPoint): Operation | undefined {
  const operation = point.operation;
  if (operation.method.toUpperCase() === "GET" || point.in !== "body") return undefined;
  if (operation.form) return operation;
  if (!point.page) return undefined;
  return {
    ...operation,
    form: {
      page: point.page,
      enctype: operation.request_body?.content_type ?? "application/x-www-form-urlencoded",
    },
  };
}

/** A baseline request reaching the point, as the least privileged user the operation accepts. */
export async function openPoint(
  run: ProbeRun,
  factory: ResourceFactory,
  point: InputPoint,
  users: readonly ProfileUser[],
): Promise<OpenPoint | undefined> {
  const form = formOperation(point);
  if (!form) {
    const baseline =
      (await pointBaseline(run, factory, point, users)) ?? (await pathPointBaseline(run, point, users));
    if (!baseline) return undefined;
    const cleaned = withoutForgedCsrf(baseline.prepared, point);
    if (cleaned === baseline.prepared) return { ...baseline, form: undefined };
    // The baseline carried a made-up anti-forgery token: send it again with the session's own.
    const exchange = await sendPrepared(run, baseline.user, cleaned);
    return exchange
      ? { ...baseline, prepared: cleaned, exchange, form: undefined }
      : { ...baseline, form: undefined };
  }
  const prepared = buildRequest(form, { seed: uniqueSeed() });
  const value = pointValue(prepared, point) ?? "qaas";
  const withPlain = withValue(prepared, point, value);
  const candidates = callersOf(run, point, users);
  let last: OpenPoint | undefined;
  for (const user of candidates) {
    const submitted = await submitForm(run, user, form, fieldsOf(withPlain), {
      pathValues: withPlain.pathValues,
      followRedirects: false,
    });
    if (!submitted) continue;
    const exchange = submitted.chain[0] ?? submitted.exchange;
    last = { point, user, prepared: withPlain, exchange, value, form };
    const status = exchange.response?.status ?? 0;
    if (status !== 401 && status !== 403) return last;
  }
  return last;
}

/**
 * A path parameter with no record behind it (`/documents/{name}`, a name no collection lists): the
 * injection probes need the route, not a record, so a plain value fills it.
 */
async function pathPointBaseline(
  run: ProbeRun,
  point: InputPoint,
  users: readonly ProfileUser[],
): Promise<PointBaseline | undefined> {
  if (point.in !== "path") return undefined;
  const result = await sendAsRightRole(run, candidateUsers(users), async () =>
    withValue(buildRequest(point.operation, { seed: uniqueSeed() }), point, point.numeric ? "1" : "qaas"),
  );
  if (!result) return undefined;
  return {
    point,
    user: result.user,
    prepared: result.prepared,
    exchange: result.exchange,
    value: pointValue(result.prepared, point) ?? "",
  };
}

/** Body fields named as frameworks name their anti-forgery token (Rails, Django, Laravel, Flask-WTF, csurf…). */
const CSRF_FIELD =
  /csrf|xsrf|authenticity_token|requestverificationtoken|anti[-_]?forgery|^_?token$|^_?wpnonce$/i;

/**
 * The request without the anti-forgery fields the request builder filled with made-up values (the point
 * itself excepted). A made-up token is refused where none is not: frameworks read the field first and fall
 * back to the header the session sends with its real token (X-CSRF-Token, X-CSRFToken, X-XSRF-TOKEN).
 */
export function withoutForgedCsrf(prepared: PreparedRequest, point: InputPoint): PreparedRequest {
  const body = prepared.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return prepared;
  const forged = Object.keys(body).filter(
    (name) => CSRF_FIELD.test(name) && !(point.in === "body" && point.name === name),
  );
  if (forged.length === 0) return prepared;
  const kept = Object.fromEntries(
    Object.entries(body as Record<string, unknown>).filter(([name]) => !forged.includes(name)),
  );
  return { ...prepared, body: kept };
}

function fieldsOf(prepared: PreparedRequest): FormFields {
  const body = prepared.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>).map(([name, value]) => [
      name,
      typeof value === "string" ? value : value === undefined || value === null ? undefined : String(value),
    ]),
  );
}

/**
 * Sends the point's request with `value` at the point (any JSON value for a JSON body; a string elsewhere),
 * or with the request `edit` makes of it.
 */
export async function sendAt(
  run: ProbeRun,
  open: OpenPoint,
  value: unknown,
  options: { followRedirects?: boolean; edit?: (prepared: PreparedRequest) => PreparedRequest } = {},
): Promise<Sent | undefined> {
  let prepared = withValue(open.prepared, open.point, value as string);
  if (options.edit) prepared = options.edit(prepared);
  if (!open.form) prepared = withoutForgedCsrf(prepared, open.point);
  if (!open.form) {
    const exchange = await sendPrepared(run, open.user, prepared);
    return exchange ? { prepared, exchange, landed: exchange } : undefined;
  }
  const submitted = await submitForm(run, open.user, open.form, fieldsOf(prepared), {
    pathValues: prepared.pathValues,
    followRedirects: options.followRedirects ?? false,
  });
  if (!submitted) return undefined;
  return { prepared, exchange: submitted.chain[0] ?? submitted.exchange, landed: submitted.exchange };
}
