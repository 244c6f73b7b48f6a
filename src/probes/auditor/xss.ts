import { randomBytes } from "node:crypto";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { isSafeWrite, operationKey, selectOperations } from "../api/operation-index.ts";
import { endpointLocation, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { fillPath, joinUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, untilBudget, usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import type { InputPoint } from "./input-points.ts";
import { inputPoints } from "./input-points.ts";
import { pointBaseline, withValue } from "./point-request.ts";

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

function isRedirect(exchange: HttpExchange): boolean {
  const status = exchange.response?.status ?? 0;
  return status >= 300 && status < 400;
}

function reflectsRaw(exchange: HttpExchange | undefined, marker: string): boolean {
  return isHtml(exchange) && (exchange?.response?.body ?? "").includes(marker);
}

interface Hit {
  kind: "reflected" | "stored";
  point: InputPoint;
  marker: string;
  injected: { prepared: PreparedRequest; exchange: HttpExchange; user: string | undefined };
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
  const factory = new ResourceFactory(run);
  const operations = options.operation ? new Set(selectOperations(run.map, options.operation)) : undefined;
  const points = inputPoints(run.map, { includeWrites: run.target.writesAllowed, operations });
  stats.points = points.length;
  const exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    const planted: Array<{
      marker: string;
      point: InputPoint;
      prepared: PreparedRequest;
      exchange: HttpExchange;
      user: string | undefined;
      resourceId?: string;
    }> = [];
    await mapConcurrent(points, 6, async (point) => {
      const baseline = await pointBaseline(run, factory, point, users);
      if (!baseline) return;
      const marker = xssMarker();
      const value = `qaas${marker}`;
      const prepared = withValue(baseline.prepared, point, value);
      const exchange = await sendPrepared(run, baseline.user, prepared);
      if (!exchange) return;
      if (isHtml(exchange) || isHtml(baseline.exchange)) stats.html_points += 1;
      if (reflectsRaw(exchange, marker)) {
        const confirm = await sendPrepared(run, baseline.user, prepared);
        if (confirm && reflectsRaw(confirm, marker)) {
          hits.push({
            kind: "reflected",
            point,
            marker,
            injected: { prepared, exchange, user: baseline.user },
            shown: {
              exchange,
              operation: point.operation,
              path: new URL(exchange.request.url).pathname,
              user: baseline.user,
            },
            confirm,
          });
          return;
        }
      }
      // A server-rendered form answers a save with a redirect (post/redirect/get) as often as with a 2xx.
      const saved = isSuccess(exchange) || isRedirect(exchange);
      if (point.in === "body" && saved && point.operation.method.toUpperCase() === "POST") {
        const json = exchange.response?.json as Record<string, unknown> | undefined;
        const id = json && typeof json === "object" ? (json.id ?? json._id ?? json.uuid) : undefined;
        planted.push({
          marker,
          point,
          prepared,
          exchange,
          user: baseline.user,
          resourceId: id === undefined ? undefined : String(id),
        });
      }
    });
    stats.stored_planted = planted.length;
    if (planted.length === 0) return;
    const pages = pagesToCheck(
      run,
      planted.map((entry) => entry.resourceId).filter((id): id is string => id !== undefined),
      options.max_pages ?? 40,
    );
    // Many pages show a user only what that user saved (their orders, their profile): each page is read
    // by every user who planted a marker as well as by the least privileged one.
    const viewers = [...new Set([users[0]?.name, ...planted.map((entry) => entry.user)])].slice(0, 3);
    const visits = pages.flatMap((page) => viewers.map((viewer) => ({ page, viewer })));
    await mapConcurrent(visits, 6, async ({ page, viewer }) => {
      stats.pages_checked += 1;
      const exchange = await send(run, viewer, {
        method: "GET",
        url: joinUrl(run.target.baseUrl, page.path),
        headers: { accept: "text/html" },
      });
      if (!exchange || !isHtml(exchange)) return;
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
          injected: { prepared: entry.prepared, exchange: entry.exchange, user: entry.user },
          shown: { exchange, operation: page.operation, path: page.path, user: viewer },
          confirm,
        });
      }
    });
  });
  const candidates = dedupe(hits).map((hit) => findingOf(run, hit));
  return {
    candidates,
    stats: {
      ...stats,
      confirmed: candidates.length,
      created_resources: factory.created.length,
      budget_exhausted: exhausted,
    },
  };
}

/** Crawled pages, and GET routes without a document entry (HTML routes) filled with new ids. */
function pagesToCheck(
  run: ProbeRun,
  ids: string[],
  limit: number,
): Array<{ path: string; operation: Operation | undefined }> {
  const pages = new Map<string, Operation | undefined>();
  for (const page of run.map.pages) pages.set(page.path, undefined);
  for (const operation of run.map.operations) {
    if (operation.method.toUpperCase() !== "GET" || operation.documented || !isSafeWrite(operation)) continue;
    const names = pathParameterNames(operation.path);
    if (names.length === 0) pages.set(toTemplateForm(operation.path), operation);
    else if (names.length === 1)
      for (const id of ids.slice(0, 5))
        pages.set(fillPath(toTemplateForm(operation.path), { [names[0]!]: id }), operation);
  }
  return [...pages.entries()].slice(0, limit).map(([path, operation]) => ({ path, operation }));
}

function dedupe(hits: Hit[]): Hit[] {
  const seen = new Set<string>();
  return hits.filter((hit) => {
    const key = `${hit.kind}|${operationKey(hit.point.operation)}|${hit.point.in}:${hit.point.name}|${hit.shown.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function findingOf(run: ProbeRun, hit: Hit): EnvelopeDraft {
  const source = operationKey(hit.point.operation);
  const markerText = hit.marker;
  const injectedStep = stepFromPrepared("injected", hit.injected.prepared, hit.injected.user);
  // `{{unique}}` stays unencoded so the test fills in a fresh marker on every run.
  injectedStep.path = injectedStep.path
    .split(encodeURIComponent(markerText))
    .join(`${encodeURIComponent("<qaas-xss-")}{{unique}}${encodeURIComponent(">")}`);
  if (injectedStep.body)
    injectedStep.body = injectedStep.body.split(markerText).join("<qaas-xss-{{unique}}>");
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
    steps.push({ name: "shown", as: hit.shown.user, method: "GET", path: shownPath });
    checkStep = "shown";
    if (hit.shown.operation) location = endpointLocation(hit.shown.operation);
    else location = { kind: "endpoint", value: `GET ${shownPath}` };
    related.push(endpointLocation(hit.point.operation), { kind: "page", value: shownPath });
  }
  const where = `${hit.point.in} ${hit.point.name}`;
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
    discriminator: `${hit.point.in}:${hit.point.name}`,
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
