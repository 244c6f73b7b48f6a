import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { LocationKind } from "../../envelope/taxonomy.ts";
import { buildFinding } from "../evidence/finding.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { MappedPath } from "./misconfig-support.ts";
import { getMapped, isHtmlAnswer, locationOf, mappedGetPaths } from "./misconfig-support.ts";

// Missing protective headers on HTML pages (low severity): Content-Security-Policy, X-Content-Type-Options:
// nosniff, frame protection (X-Frame-Options or CSP frame-ancestors), and HSTS when served over HTTPS.
// Headers are set in one place per page family, so pages that lack the same set are one finding: at the
// entry page when it is among them, with the others as related places.

const MAX_PAGES = 80;
const MAX_RELATED = 10;

export function missingHeaders(exchange: HttpExchange, https: boolean): string[] {
  const headers = exchange.response?.headers ?? {};
  const csp = headers["content-security-policy"];
  const missing: string[] = [];
  if (!csp) missing.push("content-security-policy");
  if ((headers["x-content-type-options"] ?? "").toLowerCase() !== "nosniff")
    missing.push("x-content-type-options");
  if (!headers["x-frame-options"] && !/frame-ancestors/i.test(csp ?? "")) missing.push("x-frame-options");
  if (https && !headers["strict-transport-security"]) missing.push("strict-transport-security");
  return missing;
}

interface Page {
  target: MappedPath;
  exchange: HttpExchange;
  missing: string[];
  entry: boolean;
}

export async function checkSecurityHeaders(
  run: ProbeRun,
  user: string | undefined,
  stats: { pages_checked: number },
): Promise<EnvelopeDraft[]> {
  const entry = run.target.profile?.ui?.entry ?? "/";
  const https = run.target.baseUrl.startsWith("https:");
  const targets: MappedPath[] = [
    { path: entry },
    ...byPageLikelihood(run, mappedGetPaths(run)).filter((target) => target.path !== entry),
  ].slice(0, MAX_PAGES);
  const pages: Page[] = [];
  await mapConcurrent(targets, 6, async (target) => {
    const asUser = target.operation?.security === "public" || target.path === entry ? undefined : user;
    const exchange = await getMapped(run, asUser, target, { accept: "text/html" });
    stats.pages_checked += 1;
    if (!exchange?.response || !isSuccess(exchange) || !isHtmlAnswer(exchange)) return;
    pages.push({ target, exchange, missing: missingHeaders(exchange, https), entry: target.path === entry });
  });
  const families = new Map<string, Page[]>();
  for (const page of pages.sort(
    (a, b) => Number(b.entry) - Number(a.entry) || a.target.path.localeCompare(b.target.path),
  )) {
    if (page.missing.length === 0) continue;
    const key = page.missing.join(",");
    families.set(key, [...(families.get(key) ?? []), page]);
  }
  return [...families.values()].map((family) => findingOf(run, family, pages.length));
}

/** Paths the crawl saw answer as HTML (a title, a form) first: the headers matter on pages, not on JSON. */
function byPageLikelihood(run: ProbeRun, targets: MappedPath[]): MappedPath[] {
  const html = new Set(
    run.map.pages
      .filter((page) => page.title !== undefined || page.forms.length > 0)
      .map((page) => page.path.split(/[?#]/)[0]),
  );
  return [...targets].sort((a, b) => Number(html.has(b.path)) - Number(html.has(a.path)));
}

function findingOf(run: ProbeRun, family: Page[], htmlPages: number): EnvelopeDraft {
  const first = family[0]!;
  const missing = first.missing;
  const path = first.target.path;
  const others = family.slice(1, MAX_RELATED + 1);
  const location: { kind: LocationKind; value: string } =
    first.entry && !first.target.operation ? { kind: "page", value: path } : locationOf(first.target);
  const related: Array<{ kind: LocationKind; value: string }> = [
    first.entry && !first.target.operation
      ? { kind: "endpoint", value: `GET ${path}` }
      : { kind: "page", value: path },
    ...others.map((page) => locationOf(page.target)),
  ];
  const scope =
    family.length === htmlPages
      ? "every HTML page checked"
      : `${family.length} of ${htmlPages} HTML pages (the others send them, so these pages are set up apart)`;
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `${family.length > 1 ? `${path} and ${family.length - 1} other page(s) are` : `${path} is`} served without security headers (${missing.join(", ")})`,
    summary: `GET ${path} (text/html) lacks ${missing.join(", ")}; so do ${scope === "every HTML page checked" ? scope : scope}. Reported once for the pages that share this header set${others.length > 0 ? `: ${others.map((page) => page.target.path).join(", ")}` : ""}.`,
    impact:
      "Without them, injected scripts run unrestricted, the page can be framed for clickjacking, and content types can be sniffed.",
    location,
    related,
    severity: "low",
    confidence: 0.8,
    discriminator: "security-headers",
    exchanges: [{ label: "page", exchange: first.exchange }],
    repro: {
      title: `${path} sends the basic security headers`,
      steps: [{ name: "page", method: "GET", path, headers: { accept: "text/html" } }],
      assertions: missing.map((header) => ({
        kind: "header_present" as const,
        step: "page",
        header,
        message: `${header} must be set`,
      })),
    },
  });
}
