import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { fillPath, joinUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { uniqueToken } from "../injection/markers.ts";
import { openPoint, sendAt } from "../injection/point-sender.ts";
import { filePartPoints, mayProbe } from "../injection/probe-points.ts";
import { findFile, removeAll, searchRoots } from "../injection/target-disk.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, untilBudget, usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";

// Stored XSS through an upload (CWE-434 with CWE-79): a small HTML file holding an unknown tag and no
// script, sent as a multipart write's file, then fetched where the application serves it. A file served
// back inline as HTML from the application's own origin runs any script it holds with the session of
// whoever opens its link. Where it is served comes from the upload's answer (a URL or path naming the
// file), the map's reads under the upload's path that take a name, and, when the target runs here, where
// the file landed on disk. Reported when the file comes back as HTML with its tag intact, twice.

const MAX_UPLOADS = 6;
const MAX_PLACES = 8;
/** Types a browser renders as a document that can run script. */
const RENDERED = /text\/html|application\/xhtml\+xml|image\/svg\+xml/i;

interface Hit {
  operation: Operation;
  upload: HttpExchange;
  served: HttpExchange;
  again: HttpExchange;
  name: string;
  tag: string;
}

export async function probeUploadXss(
  run: ProbeRun,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const points = filePartPoints(run.map.operations)
    .filter((point) => mayProbe(run.target, point.operation))
    .slice(0, MAX_UPLOADS);
  const stats: Record<string, unknown> = { upload_points: points.length, uploaded: 0, places_tried: 0 };
  if (points.length === 0) return { candidates: [], stats };
  const hits: Hit[] = [];
  stats.budget_exhausted = await untilBudget(run, async () => {
    const factory = new ResourceFactory(run);
    const users = await usableUsers(run);
    const roots = searchRoots(run);
    for (const point of points) {
      if (hits.some((hit) => hit.operation === point.operation)) continue;
      const open = await openPoint(run, factory, point, users);
      if (!open) continue;
      const token = uniqueToken();
      const tag = `qaas-upload-${token}`;
      const name = `qaas-${token}.html`;
      try {
        const upload = await sendAt(run, open, {
          filename: name,
          content: `<!doctype html><title>qaas</title><${tag}></${tag}>\n`,
          contentType: "text/html",
        });
        if (!upload || !isSuccess(upload.exchange)) continue;
        stats.uploaded = Number(stats.uploaded) + 1;
        for (const place of placesOf(run, point.operation, upload.exchange, name, roots)) {
          stats.places_tried = Number(stats.places_tried) + 1;
          const spec = {
            method: "GET",
            url: joinUrl(run.target.baseUrl, place),
            headers: { accept: "text/html,*/*" },
          };
          const served = await send(run, open.user, spec);
          if (!renderedWith(served, tag)) continue;
          const again = await send(run, undefined, spec);
          const secondLook = renderedWith(again, tag) ? again : await send(run, open.user, spec);
          if (!renderedWith(secondLook, tag)) continue;
          hits.push({
            operation: point.operation,
            upload: upload.exchange,
            served: served!,
            again: secondLook!,
            name,
            tag,
          });
          break;
        }
      } finally {
        if (roots.length > 0) removeAll(roots, [name]);
      }
    }
  });
  stats.confirmed = hits.length;
  return { candidates: hits.map((hit) => findingOf(run, hit)), stats };
}

/** Served as a document a browser renders, inline, with the uploaded tag as markup. */
function renderedWith(exchange: HttpExchange | undefined, tag: string): boolean {
  const response = exchange?.response;
  if (!response || response.status !== 200 || !RENDERED.test(response.contentType)) return false;
  if (/attachment/i.test(response.headers["content-disposition"] ?? "")) return false;
  return response.body.includes(`<${tag}>`);
}

/** Where the uploaded file may be served: paths its answer names, reads under the upload's path, the disk. */
function placesOf(
  run: ProbeRun,
  upload: Operation,
  answer: HttpExchange,
  name: string,
  roots: readonly string[],
): string[] {
  const places: string[] = [];
  const origin = new URL(run.target.baseUrl).origin;
  const stem = name.replace(/\.html$/, "");
  for (const match of (answer.response?.body ?? "").matchAll(/(?:https?:\/\/[^\s"'<>]+|\/[^\s"'<>]*)/g)) {
    if (!match[0].includes(stem)) continue;
    try {
      const url = new URL(match[0].replace(/\\\//g, "/"), origin);
      if (url.origin === origin) places.push(`${url.pathname}${url.search}`);
    } catch {
      // not a URL after all
    }
  }
  const base = toTemplateForm(upload.path).replace(/\/+$/, "");
  for (const read of run.map.operations) {
    const names = pathParameterNames(read.path);
    if (read.method.toUpperCase() !== "GET" || names.length !== 1) continue;
    const template = toTemplateForm(read.path);
    if (!template.startsWith(`${base}/`) && !/upload|file|media|attachment|document|image/i.test(template))
      continue;
    places.push(fillPath(read.path, { [names[0]!]: name }));
  }
  const landed = roots.length > 0 ? findFile(roots, name) : undefined;
  if (landed && roots[0] && !path.relative(roots[0], landed).startsWith("..")) {
    const segments = path.relative(roots[0], landed).split(path.sep);
    for (let count = 1; count <= Math.min(3, segments.length); count += 1)
      places.push(`/${segments.slice(-count).join("/")}`);
  }
  return [...new Set(places)].slice(0, MAX_PLACES);
}

function findingOf(run: ProbeRun, hit: Hit): EnvelopeDraft {
  const upload = operationKey(hit.operation);
  const servedAt = new URL(hit.served.request.url).pathname;
  return buildFinding(run, {
    domain: "security",
    defectClass: "xss",
    title: `Stored XSS through an upload: an HTML file sent to ${upload} is served inline at ${servedAt.replace(hit.name, "{file}")}`,
    summary: `${upload} accepted ${hit.name}, a small HTML file, and ${servedAt} served it back from the application's own origin as ${hit.served.response?.contentType} with no attachment disposition and its <${hit.tag}> tag intact (twice). A script in such a file runs in the browser of whoever opens the link, with their session.`,
    impact:
      "Anyone who can upload can plant a page on the application's origin: it reads and acts with the session of every user who follows its link.",
    location: endpointLocation(hit.operation),
    related: [{ kind: "endpoint", value: `GET ${servedAt}` }],
    severity: severityFor("xss", { stored: true }),
    confidence: 0.9,
    discriminator: "upload-served-inline",
    exchanges: [
      { label: "uploaded", exchange: hit.upload },
      { label: "served inline", exchange: hit.served },
      { label: "served again", exchange: hit.again },
    ],
    suggestedFixArea:
      "the upload: accept only the types the feature needs, and serve user files with Content-Disposition: attachment, a fixed safe type, or from another origin",
  });
}
