import type { Row } from "../../model/row.ts";
import type { Oracle } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, DocResponse, Endpoint, UiPage } from "../endpoint.ts";
import { htmlAnswer, STR } from "../schemas.ts";

// The pages UI and usability variants serve, written once and served as the same bytes by both stacks.
// Every server sends a Content-Security-Policy of `default-src 'self'`, as a careful site does, so a page's
// scripts and styles are files of their own (inline ones would be refused, and the refusal is itself a
// console error); each variant serves its files under /assets/. Pages are complete documents: a language,
// a viewport, a title, one h1, content in <main>, and a way back unless the variant is about having none.

export type PageNav = "site" | "none" | "back" | "breadcrumb";

export interface PageSpec {
  title: string;
  /** The markup inside <main>, after the h1. */
  body: string;
  nav?: PageNav;
  scripts?: string[];
  styles?: string[];
  /** Markup after </main> (a footer). */
  after?: string;
}

/** The variant's page path: its place without the API prefix (`/catalog/parcels`). */
export function pagePath(ctx: BuildContext, suffix = ""): string {
  return `/${ctx.place.group}/${ctx.place.plural}${suffix}`;
}

/** A file of the variant's own (`/assets/catalog-parcels.js`). */
export function assetPath(ctx: BuildContext, extension: string, stem = ""): string {
  return `/assets/${ctx.place.group}-${ctx.place.plural}${stem}.${extension}`;
}

export function pageDocument(spec: PageSpec): string {
  const nav = spec.nav ?? "site";
  const head = [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${spec.title}</title>`,
    ...(spec.styles ?? []).map((href) => `<link rel="stylesheet" href="${href}">`),
    ...(spec.scripts ?? []).map((src) => `<script src="${src}" defer></script>`),
  ].join("");
  const header = nav === "site" ? '<header><nav aria-label="Main"><a href="/">Home</a></nav></header>' : "";
  const crumbs =
    nav === "breadcrumb"
      ? `<nav aria-label="Breadcrumb"><ol><li><a href="/">Home</a></li><li aria-current="page">${spec.title}</li></ol></nav>`
      : "";
  const back = nav === "back" ? '<p><a href="/">Back to the overview</a></p>' : "";
  return `<!doctype html><html lang="en"><head>${head}</head><body>${header}<main>${crumbs}<h1>${spec.title}</h1>${spec.body}${back}</main>${spec.after ?? ""}</body></html>`;
}

/**
 * The GET that serves a page. On the cookie server a page holding a form gets the session's CSRF token in
 * place of `{csrf}`, as every form there must carry it. `policy` replaces the servers' strict
 * Content-Security-Policy for this page.
 */
export function pageEndpoint(
  path: string,
  summary: string,
  document: string,
  status = 200,
  policy?: string,
): Endpoint {
  const literal = JSON.stringify(document);
  const ownPolicy = policy ? `g.csp = ${JSON.stringify(policy)}\n` : "";
  const python = document.includes("{csrf}")
    ? `${ownPolicy}session = session_of()\nreturn html_page(${status}, ${literal}.replace("{csrf}", session["csrf"] if session else ""))`
    : `${ownPolicy}return html_page(${status}, ${literal})`;
  return {
    method: "GET",
    path,
    summary,
    access: "public",
    responses: { [String(status)]: htmlAnswer("the page") },
    node: nodeRoute(
      "GET",
      path,
      `return html(reply, ${status}, ${document.includes("{csrf}") ? `${literal}.replace("{csrf}", "")` : literal});`,
      policy ? `{ config: { csp: ${JSON.stringify(policy)} } }` : undefined,
    ),
    python: pyRoute("GET", path, python),
  };
}

const TYPES = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
} as const;

/** A static file a page loads. */
export function assetEndpoint(path: string, kind: keyof typeof TYPES, text: string): Endpoint {
  const type = TYPES[kind];
  const answer: DocResponse = { description: "the file", contentType: type.split(";")[0]!, schema: STR };
  return {
    method: "GET",
    path,
    summary: `A file pages load (${kind})`,
    access: "public",
    responses: { "200": answer },
    node: nodeRoute("GET", path, `return reply.type(${JSON.stringify(type)}).send(${JSON.stringify(text)});`),
    python: pyRoute(
      "GET",
      path,
      `return ${JSON.stringify(text)}, 200, {"Content-Type": ${JSON.stringify(type)}}`,
    ),
  };
}

/** A small picture for pages that show one: an outlined square, 48 px. */
export const PICTURE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" viewBox="0 0 48 48"><rect x="4" y="4" width="40" height="40" fill="none" stroke="#333" stroke-width="4"/></svg>';

/**
 * The home page of a server that has none: a menu of the listed pages, and a footer for those the site
 * tucks away there (terms, settings, archives), as many sites do.
 */
export function siteHome(pages: readonly UiPage[]): Endpoint {
  const item = (page: UiPage) => `<li><a href="${page.path}">${page.label}</a></li>`;
  const menu = [
    ...pages.filter((page) => page.listed === "menu").map(item),
    ...pages.flatMap((page) =>
      page.via ? [`<li><a href="${page.via.path}">${page.via.label}</a></li>`] : [],
    ),
  ];
  const footer = pages.filter((page) => page.listed === "footer").map(item);
  const document = pageDocument({
    title: "Workspace",
    nav: "none",
    body: `<nav aria-label="Main"><ul>${menu.join("")}</ul></nav><p>Pick a section to start.</p>`,
    after: footer.length > 0 ? `<footer><ul>${footer.join("")}</ul></footer>` : "",
  });
  return pageEndpoint("/", "The site's home page", document);
}

export interface PageVariant {
  page: UiPage;
  document: string;
  summary: string;
  /** A Content-Security-Policy of the page's own (see pageEndpoint). */
  policy?: string;
  title: string;
  why: string;
  /** The files and data operations the page uses: correct code, supporting operations. */
  files?: Endpoint[];
  alsoAt?: Endpoint[];
  collateral?: Built["collateral"];
  oracle: Oracle;
}

/** A page variant's Built: the page is the ledger place, its GET and files are supporting operations. */
export function pageVariant(row: Pick<Row, "label">, spec: PageVariant): Built {
  return {
    endpoint: pageEndpoint(spec.page.path, spec.summary, spec.document, 200, spec.policy),
    page: spec.page,
    support: spec.files ?? [],
    ...(spec.alsoAt ? { alsoAt: spec.alsoAt } : {}),
    ...(spec.collateral && row.label === "vulnerable" ? { collateral: spec.collateral } : {}),
    title: spec.title,
    ...(row.label === "safe" ? { why: spec.why } : {}),
    oracle: spec.oracle,
  };
}

/** A small JSON operation a page's script calls: `answer` is the literal status and body both stacks send. */
export function jsonEndpoint(
  method: "GET" | "POST",
  path: string,
  summary: string,
  status: number,
  body: Record<string, unknown>,
): Endpoint {
  const text = JSON.stringify(body);
  return {
    method,
    path,
    summary,
    access: "public",
    ...(method === "POST"
      ? { body: { contentType: "application/json", schema: { type: "object" }, required: false } }
      : {}),
    responses: {
      [String(status)]: { description: summary, contentType: "application/json", schema: { type: "object" } },
    },
    node: nodeRoute(
      method,
      path,
      `return reply.code(${status}).type("application/json").send(${JSON.stringify(text)});`,
    ),
    python: pyRoute(
      method,
      path,
      `return ${JSON.stringify(text)}, ${status}, {"Content-Type": "application/json"}`,
    ),
  };
}

/** `parcels` → `Parcels`, for titles and labels. */
export function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
