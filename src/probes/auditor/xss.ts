import { randomBytes } from "node:crypto";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation, SystemMap } from "../../map/system-map.ts";
import { isSafeWrite, operationKey, selectOperations } from "../api/operation-index.ts";
import { endpointLocation, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import { sendersOf } from "../auth/run-accounts.ts";
import { buildFinding } from "../evidence/finding.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isRedirect, isSuccess } from "../http/http-types.ts";
import { fillPath, joinUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { openPoint, sendAt } from "../injection/point-sender.ts";
import { isSignInOperation } from "../injection/sign-in-fields.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, untilBudget, usableUsers } from "../session/probe-run.ts";
import { byPrivilege } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { severityFor } from "../severity.ts";
import { formControls, validFormValues } from "./form-input-values.ts";
import type { InputPoint } from "./input-points.ts";
import { inputPoints, pointPlace, pointTag } from "./input-points.ts";
import { pointBaseline, withValue } from "./point-request.ts";
import type { PlantedMarker, ScriptedPage } from "./xss-rendered.ts";
import { renderedStoredXss } from "./xss-rendered.ts";
import { markerStep, recordPathOf } from "./xss-repro.ts";

export interface XssOptions {
  operation?: string;
  user?: string;
  /** Pages fetched to look for stored markers. */
  max_pages?: number;
}

/** `<qaas-xss-1a2b3c4d>`: an unknown tag, harmless if rendered, unmistakable if left unescaped. */
export function xssMarker(): string {
  return `<qaas-xss-${randomBytes(4).toString("hex")}>`;
}

function isHtml(exchange: HttpExchange | undefined): boolean {
  return Boolean(exchange?.response?.contentType.includes("text/html"));
}

function reflectsRaw(exchange: HttpExchange | undefined, marker: string): boolean {
  return isHtml(exchange) && (exchange?.response?.body ?? "").includes(marker);
}

interface Hit {
  kind: "reflected" | "stored";
  point: InputPoint;
  marker: string;
  injected: {
    prepared: PreparedRequest;
    exchange: HttpExchange;
    user: string | undefined;
    /** The id the save answered with, when the page that shows the marker is that record's own. */
    resourceId?: string;
  };
  shown: { exchange: HttpExchange; operation: Operation | undefined; path: string; user: string | undefined };
  confirm: HttpExchange;
}

/**
 * probe_xss: a unique harmless marker in every string input. Reflected: the marker comes back unescaped in
 * an HTML answer to the same request (confirmed by a second request). Stored: markers planted through
 * create operations come back unescaped in an HTML page fetched afterwards (the crawled pages, and HTML
 * routes with the new resource's id). JSON answers never count: a JSON API is not an HTML context.
 */
export async function probeXss(
  run: ProbeRun,
  options: XssOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const hits: Hit[] = [];
  const stats = { points: 0, html_points: 0, stored_planted: 0, pages_checked: 0 };
  const rendered: EnvelopeDraft[] = [];
  let browserStats: Record<string, unknown> = { browser_skipped: "no marker was saved" };
  const factory = new ResourceFactory(run);
  const operations = options.operation ? new Set(selectOperations(run.map, options.operation)) : undefined;
  const points = inputPoints(run.map, {
    includeWrites: run.target.writesAllowed,
    operations,
    callerUpdates: true,
  });
  stats.points = points.length;
  const exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    const planted: PlantedMarker[] = [];
    await mapConcurrent(points, 6, async (point) => {
      const marker = xssMarker();
      // An update of the caller itself is sent only by the run's own account (see sendersOf).
      const senders = await sendersOf(run, point.operation, users);
      if (!senders) return;
      const injected = await inject(run, factory, point, senders, `qaas${marker}`);
      if (!injected) return;
      const { exchange, prepared, user } = injected;
      if (isHtml(exchange) || isHtml(injected.baseline)) stats.html_points += 1;
      if (reflectsRaw(exchange, marker)) {
        const confirm = await injected.again();
        if (confirm && reflectsRaw(confirm, marker)) {
          hits.push({
            kind: "reflected",
            point,
            marker,
            injected: { prepared, exchange, user },
            shown: {
              exchange,
              operation: point.operation,
              path: new URL(exchange.request.url).pathname,
              user,
            },
            confirm,
          });
          return;
        }
      }
      // A server-rendered form answers a save with a redirect (post/redirect/get) as often as with a 2xx.
      const saved = isSuccess(exchange) || isRedirect(exchange);
      if (point.in === "body" && saved && point.operation.method.toUpperCase() === "POST") {
        planted.push({ marker, point, prepared, exchange, user, resourceId: createdId(exchange) });
      }
    });
    stats.stored_planted = planted.length;
    if (planted.length === 0) return;
    const pages = pagesToCheck(
      run.map,
      planted.flatMap((entry) =>
        entry.resourceId === undefined
          ? []
          : [{ id: entry.resourceId, createdAt: toTemplateForm(entry.point.operation.path) }],
      ),
      options.max_pages ?? 80,
    );
    const visits = pageVisits(pages, users, planted);
    // By visit, not by which answer came first: the browser's page order (and its load cap) follows it.
    const scripted: Array<ScriptedPage | undefined> = [];
    await mapConcurrent(visits, 6, async ({ page, viewer }, index) => {
      stats.pages_checked += 1;
      const exchange = await send(run, viewer, {
        method: "GET",
        url: joinUrl(run.target.baseUrl, page.path),
        headers: { accept: "text/html" },
      });
      if (!exchange || !isHtml(exchange)) return;
      // Only a page with a script of its own can fetch a record and insert it after the server answered.
      if (/<script\b/i.test(exchange.response?.body ?? ""))
        scripted[index] = { path: page.path, viewer, created: page.created === true };
      for (const entry of planted) {
        if (!reflectsRaw(exchange, entry.marker) || hits.some((hit) => hit.marker === entry.marker)) continue;
        const confirm = await send(run, viewer, {
          method: "GET",
          url: exchange.request.url,
          headers: { accept: "text/html" },
        });
        if (!confirm || !reflectsRaw(confirm, entry.marker)) continue;
        hits.push({
          kind: "stored",
          point: entry.point,
          marker: entry.marker,
          injected: {
            prepared: entry.prepared,
            exchange: entry.exchange,
            user: entry.user,
            resourceId: entry.resourceId,
          },
          shown: { exchange, operation: page.operation, path: page.path, user: viewer },
          confirm,
        });
      }
    });
    // Markers no server HTML carried may still reach the page through its script (fetched JSON put in
    // with innerHTML): only a browser sees that.
    const unseen = planted.filter((entry) => !hits.some((hit) => hit.marker === entry.marker));
    const browser = await renderedStoredXss(
      run,
      unseen,
      scripted.filter((page) => page !== undefined),
    );
    rendered.push(...browser.candidates);
    browserStats = browser.stats;
  });
  const candidates = [...dedupe(hits).map((hit) => findingOf(run, hit)), ...rendered];
  return {
    candidates,
    stats: {
      ...stats,
      ...browserStats,
      confirmed: candidates.length,
      created_resources: factory.created.length,
      budget_exhausted: exhausted,
    },
  };
}

interface PageToCheck {
  path: string;
  operation: Operation | undefined;
  /** The roles the map says reach the page (empty: unknown). */
  roles: string[];
  /** A page of a record a marker was just saved in. */
  created?: boolean;
}

/**
 * HTML routes without a document entry, in three tiers: each route filled with the ids of records created
 * under its own collection (where a saved record is most likely shown), then the routes without a
 * parameter and the crawled pages, then the routes filled with other records' ids. By tier, not by route:
 * an application without a document has every route undocumented, and one route's ten ids each must not
 * use up the pages before the route that shows the record is reached.
 */
export function pagesToCheck(
  map: SystemMap,
  created: readonly CreatedRecord[],
  limit: number,
): PageToCheck[] {
  const own = new Map<string, PageToCheck>();
  const plain = new Map<string, PageToCheck>();
  const foreign = new Map<string, PageToCheck>();
  for (const operation of map.operations) {
    if (operation.method.toUpperCase() !== "GET" || operation.documented || !isSafeWrite(operation)) continue;
    const names = pathParameterNames(operation.path);
    const roles = operation.roles ?? [];
    const route = toTemplateForm(operation.path);
    if (names.length === 0) plain.set(route, { path: route, operation, roles });
    else if (names.length === 1) {
      const ids = idsFor(route, created);
      for (const [tier, list] of [
        [own, ids.own],
        [foreign, ids.others],
      ] as const)
        for (const id of list) {
          const path = fillPath(route, { [names[0]!]: id });
          tier.set(path, { path, operation, roles, created: true });
        }
    }
  }
  for (const page of map.pages)
    if (!own.has(page.path) && !plain.has(page.path) && !foreign.has(page.path))
      plain.set(page.path, { path: page.path, operation: undefined, roles: page.roles ?? [] });
  return [...own.values(), ...plain.values(), ...foreign.values()].slice(0, limit);
}

export interface CreatedRecord {
  id: string;
  /** The path of the operation that created it. */
  createdAt: string;
}

const IDS_PER_ROUTE = 10;

/**
 * The ids worth putting in a page route, ten in all: those created under the route's own collection (a
 * record posted to `/x/things` is shown at `/x/things/{id}/page`), and the others after them.
 */
export function idsFor(
  route: string,
  created: readonly CreatedRecord[],
): { own: string[]; others: string[] } {
  const collection = route.slice(0, route.indexOf("{")).replace(/\/+$/, "");
  const isOwn = (record: CreatedRecord) =>
    collection !== "" && record.createdAt.replace(/\/+$/, "") === collection;
  const own = [...new Set(created.filter(isOwn).map((record) => record.id))].slice(0, IDS_PER_ROUTE);
  const others = [...new Set(created.filter((record) => !isOwn(record)).map((record) => record.id))]
    .filter((id) => !own.includes(id))
    .slice(0, IDS_PER_ROUTE - own.length);
  return { own, others };
}

/**
 * Who reads each page: stored XSS crosses roles (a customer's note shown on a staff screen), so the least
 * privileged user of every role reads the pages the map says that role reaches — of every tenant, for the
 * pages of a record just saved (only its own tenant's staff see it) — and the users who planted markers
 * read every page (many pages show a user only what that user saved).
 */
function pageVisits(
  pages: readonly PageToCheck[],
  users: readonly ProfileUser[],
  planted: ReadonlyArray<{ user: string | undefined }>,
): Array<{ page: PageToCheck; viewer: string | undefined }> {
  const perRole = new Map<string, string[]>();
  const tenantsSeen = new Set<string>();
  for (const user of byPrivilege(users)) {
    const role = user.role.toLowerCase();
    const key = `${role}|${user.tenant ?? ""}`;
    if (tenantsSeen.has(key)) continue;
    tenantsSeen.add(key);
    perRole.set(role, [...(perRole.get(role) ?? []), user.name]);
  }
  const planters = [...new Set(planted.map((entry) => entry.user))].slice(0, 3);
  const fallback = planters.length > 0 ? planters : [byPrivilege(users)[0]?.name];
  const visits: Array<{ page: PageToCheck; viewer: string | undefined }> = [];
  for (const page of pages) {
    const roles = page.roles.map((role) => role.toLowerCase());
    const viewers = new Set<string | undefined>(fallback);
    for (const role of roles) {
      const ofRole = perRole.get(role) ?? [];
      for (const viewer of page.created ? ofRole.slice(0, 3) : ofRole.slice(0, 1)) viewers.add(viewer);
    }
    for (const viewer of viewers) visits.push({ page, viewer });
  }
  return visits.slice(0, MAX_VISITS);
}

/** The id a create answered with: a JSON `id`, or the last segment of the address it redirected to. */
function createdId(exchange: HttpExchange): string | undefined {
  const json = exchange.response?.json as Record<string, unknown> | undefined;
  const id = json && typeof json === "object" ? (json.id ?? json._id ?? json.uuid) : undefined;
  if (id !== undefined && id !== null) return String(id);
  const location = isRedirect(exchange) ? exchange.response?.headers.location : undefined;
  if (!location) return undefined;
  try {
    const segments = new URL(location, exchange.request.url).pathname.split("/").filter(Boolean);
    return segments.findLast((segment) => /^\d+$|^[0-9a-f]{8}-[0-9a-f-]{27}$/i.test(segment));
  } catch {
    return undefined;
  }
}

interface Injected {
  prepared: PreparedRequest;
  exchange: HttpExchange;
  baseline: HttpExchange;
  user: string | undefined;
  /** The same request again (a form reloaded first, for a fresh token). */
  again(): Promise<HttpExchange | undefined>;
}

/** A form a page shows, posted as a browser posts it (its page first, for the CSRF token). */
function isFormPoint(point: InputPoint): boolean {
  const operation = point.operation;
  return (
    point.in === "body" &&
    operation.method.toUpperCase() !== "GET" &&
    (operation.form !== undefined || point.page !== undefined)
  );
}

/**
 * Sends `value` at the point as a prepared request (the request builder retries until the other fields
 * pass validation); a form a page shows that refused it goes out again as a browser submits it: its page
 * loaded for a fresh CSRF token, its other controls given values they accept.
 */
async function inject(
  run: ProbeRun,
  factory: ResourceFactory,
  point: InputPoint,
  users: readonly ProfileUser[],
  value: string,
): Promise<Injected | undefined> {
  // A sign-in or sign-up form posted with a session signs that session in as someone else: those go out
  // from a fresh anonymous visitor, so the run's users stay who they are.
  const callers = isSignInOperation(run, point.operation) ? [] : users;
  const prepared = await preparedInject(run, factory, point, callers, value);
  if (!isFormPoint(point) || (prepared && (isSuccess(prepared.exchange) || isRedirect(prepared.exchange))))
    return prepared;
  return (await formInject(run, factory, point, callers, value)) ?? prepared;
}

async function preparedInject(
  run: ProbeRun,
  factory: ResourceFactory,
  point: InputPoint,
  users: readonly ProfileUser[],
  value: string,
): Promise<Injected | undefined> {
  const baseline = await pointBaseline(run, factory, point, users);
  if (!baseline) return undefined;
  const prepared = withValue(baseline.prepared, point, value);
  const exchange = await sendPrepared(run, baseline.user, prepared);
  if (!exchange) return undefined;
  return {
    prepared,
    exchange,
    baseline: baseline.exchange,
    user: baseline.user,
    again: () => sendPrepared(run, baseline.user, prepared),
  };
}

async function formInject(
  run: ProbeRun,
  factory: ResourceFactory,
  point: InputPoint,
  users: readonly ProfileUser[],
  value: string,
): Promise<Injected | undefined> {
  const open = await openPoint(run, factory, point, users);
  if (!open) return undefined;
  // The other fields valid for their controls (a date, a time, an option), or the save is refused.
  const others = validFormValues(formControls(run.map, point.operation));
  delete others[point.name];
  const edit = (prepared: PreparedRequest): PreparedRequest => {
    const body = prepared.body;
    if (!body || typeof body !== "object" || Array.isArray(body)) return prepared;
    return { ...prepared, body: { ...(body as Record<string, unknown>), ...others } };
  };
  const submit = () => sendAt(run, open, value, { followRedirects: false, edit });
  let sent = await submit();
  // Once more when refused as a stale form: a probe running beside this one may have signed the user in
  // again between the page load and the post, and the token belongs to the old session.
  const status = sent?.exchange.response?.status ?? 0;
  if (status === 400 || status === 403 || status === 419) sent = (await submit()) ?? sent;
  if (!sent) return undefined;
  return {
    prepared: sent.prepared,
    exchange: sent.exchange,
    baseline: open.exchange,
    user: open.user,
    again: async () => (await submit())?.exchange,
  };
}

/** Page reads at most: what is left of the tool's budget once every input has been tried. */
const MAX_VISITS = 450;

function dedupe(hits: Hit[]): Hit[] {
  const seen = new Set<string>();
  return hits.filter((hit) => {
    const key = `${hit.kind}|${operationKey(hit.point.operation)}|${pointTag(hit.point)}|${hit.shown.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function findingOf(run: ProbeRun, hit: Hit): EnvelopeDraft {
  const source = operationKey(hit.point.operation);
  const markerText = hit.marker;
  const injectedStep = markerStep("injected", hit.injected.prepared, hit.injected.user, markerText);
  const steps = [injectedStep];
  let checkStep = "injected";
  let location = endpointLocation(hit.point.operation);
  const related: Array<{ kind: "endpoint" | "page"; value: string }> = hit.point.page
    ? [{ kind: "page", value: hit.point.page }]
    : [];
  // A GET answered with HTML is a page: the reflection is on that page as much as on the endpoint.
  if (hit.kind === "reflected" && hit.point.operation.method.toUpperCase() === "GET") {
    const pagePath = hit.point.operation.path;
    if (!related.some((place) => place.kind === "page" && place.value === pagePath))
      related.push({ kind: "page", value: pagePath });
  }
  if (hit.kind === "stored") {
    const shownPath = hit.shown.path;
    steps.push({
      name: "shown",
      as: hit.shown.user,
      method: "GET",
      path: recordPathOf(shownPath, hit.injected.resourceId, injectedStep),
    });
    checkStep = "shown";
    if (hit.shown.operation) location = endpointLocation(hit.shown.operation);
    else location = { kind: "endpoint", value: `GET ${shownPath}` };
    related.push(endpointLocation(hit.point.operation), { kind: "page", value: shownPath });
  }
  const where = pointPlace(hit.point);
  return buildFinding(run, {
    domain: "security",
    defectClass: "xss",
    title:
      hit.kind === "reflected"
        ? `Reflected XSS: ${where} of ${source} is echoed unescaped into HTML`
        : `Stored XSS: ${where} saved through ${source} renders unescaped at ${hit.shown.path}`,
    summary:
      hit.kind === "reflected"
        ? `The marker ${markerText} sent in ${where} of ${source} came back verbatim (not HTML-escaped) in a text/html answer, twice.`
        : `The marker ${markerText} saved through ${where} of ${source} appears verbatim (not HTML-escaped) in the text/html page ${hit.shown.path}, twice.`,
    impact: "Script injected by one user runs in the browser of whoever views the page, with their session.",
    location,
    related: related.length > 0 ? related : undefined,
    severity: severityFor("xss", { stored: hit.kind === "stored" }),
    confidence: 0.95,
    discriminator: pointTag(hit.point),
    exchanges: [
      { label: "injected", exchange: hit.injected.exchange },
      ...(hit.kind === "stored" ? [{ label: "shown", exchange: hit.shown.exchange }] : []),
      { label: "confirm", exchange: hit.confirm },
    ],
    repro: {
      title: `${hit.kind === "reflected" ? source : hit.shown.path} escapes ${where} in HTML`,
      steps,
      assertions: [
        {
          kind: "body_lacks",
          step: checkStep,
          text: "<qaas-xss-{{unique}}>",
          message: "user input must be HTML-escaped",
        },
      ],
    },
  });
}
