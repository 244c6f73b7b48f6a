import type { FormValue } from "../api/request-builder.ts";
import { encodeMultipart, encodeUrlencoded, multipartBoundary } from "../api/request-builder.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import type { HtmlForm, ParsedPage } from "./html-forms.ts";
import { isHtml, parseHtmlPage, pathOfAction } from "./html-forms.ts";
import type { RedirectChain } from "./redirects.ts";
import { followRedirects } from "./redirects.ts";

// What a browser does around a form: load the page that shows it, read the form (hidden fields and the
// CSRF token come from there), and submit what a person typed over its defaults, encoded as the form says.

export type Sender = (spec: HttpRequestSpec) => Promise<HttpExchange>;

export interface LoadedForm {
  /** The page's URL after redirects. */
  url: string;
  page: RedirectChain;
  parsed: ParsedPage;
  form: HtmlForm | undefined;
}

const HTML_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/**
 * Loads each candidate page in turn (following redirects) until one shows a form `pick` accepts; answers
 * the last page loaded (with no form) when none does, the paths tried and every exchange made.
 */
export async function loadForm(
  send: Sender,
  baseUrl: string,
  candidates: readonly string[],
  pick: (forms: HtmlForm[]) => HtmlForm | undefined,
): Promise<{ loaded: LoadedForm | undefined; tried: string[]; exchanges: HttpExchange[] }> {
  const tried: string[] = [];
  const exchanges: HttpExchange[] = [];
  let last: LoadedForm | undefined;
  for (const candidate of unique(candidates)) {
    const url = /^https?:\/\//i.test(candidate) ? candidate : joinUrl(baseUrl, candidate);
    tried.push(pathOfAction(url) ?? candidate);
    const page = await followRedirects(send, { method: "GET", url, headers: { accept: HTML_ACCEPT } });
    exchanges.push(...page.chain);
    const response = page.final.response;
    const finalUrl = page.final.request.url;
    const parsed =
      response && response.status < 400 && isHtml(response.contentType, response.body)
        ? parseHtmlPage(response.body, finalUrl)
        : { forms: [], meta: {}, messages: [] };
    last = { url: finalUrl, page, parsed, form: pick(parsed.forms) };
    if (last.form) return { loaded: last, tried, exchanges };
  }
  return { loaded: last, tried, exchanges };
}

/** The form among `forms` that posts to `path` (a concrete path or a `{param}` template), by method when given. */
export function formPostingTo(
  forms: readonly HtmlForm[],
  path: string,
  method?: string,
): HtmlForm | undefined {
  const fits = (form: HtmlForm) => {
    const action = pathOfAction(form.action);
    return action !== undefined && samePath(path, action);
  };
  return (
    forms.find((form) => fits(form) && (method === undefined || form.method === method.toUpperCase())) ??
    forms.find(fits)
  );
}

/**
 * Whether the answer to a submission is the submitted form shown again (a form posting to the same path by
 * the same method): how server-rendered applications refuse input, often with a 200 (Django, Spring MVC,
 * older Rails). A status alone would read such a refusal as accepted.
 */
export function showsFormAgain(exchange: HttpExchange): boolean {
  const response = exchange.response;
  const method = exchange.request.method.toUpperCase();
  if (!response || method === "GET" || !isHtml(response.contentType, response.body)) return false;
  const path = pathOfAction(exchange.request.url);
  if (path === undefined) return false;
  const forms = parseHtmlPage(response.body, exchange.request.url).forms;
  return forms.some((form) => form.method === method && pathOfAction(form.action) === path);
}

/** A 2xx that is not the submitted form shown again. */
export function acceptedSubmission(exchange: HttpExchange): boolean {
  return isSuccess(exchange) && !showsFormAgain(exchange);
}

/** Whether a concrete path fits a path or `{param}`/`:param` template, ignoring a trailing slash. */
export function samePath(template: string, concrete: string): boolean {
  const pattern = template
    .split("?")[0]!
    .replace(/\/+$/, "")
    .split("/")
    .map((part) =>
      /^\{[^}]+\}$|^:[A-Za-z_]\w*$|^<[^>]+>$/.test(part)
        ? "[^/]+"
        : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return new RegExp(`^${pattern}/?$`, "i").test(concrete.split("?")[0]!);
}

/**
 * Overlays `values` on the form's defaults, keeping the defaults' order: a named value replaces every
 * default of that name (an array sends the name once per item), a new name is appended.
 */
export function overlayFields(
  defaults: ReadonlyArray<[string, string]>,
  values: Record<string, FormValue | FormValue[] | undefined>,
): Array<[string, FormValue]> {
  const result: Array<[string, FormValue]> = [];
  const placed = new Set<string>();
  for (const [name, value] of defaults) {
    if (!(name in values)) {
      result.push([name, value]);
      continue;
    }
    if (placed.has(name)) continue;
    placed.add(name);
    for (const item of asList(values[name])) result.push([name, item]);
  }
  for (const [name, value] of Object.entries(values)) {
    if (placed.has(name) || defaults.some(([existing]) => existing === name)) continue;
    for (const item of asList(value)) result.push([name, item]);
  }
  return result;
}

/** The request a browser makes when the form is submitted: GET with a query, or a body encoded per enctype. */
export function formRequest(options: {
  url: string;
  method: string;
  enctype: string;
  fields: ReadonlyArray<readonly [string, FormValue]>;
  referer?: string;
  seed?: string;
}): HttpRequestSpec {
  const method = options.method.toUpperCase();
  const origin = new URL(options.url).origin;
  const headers: Record<string, string> = { accept: HTML_ACCEPT, origin };
  if (options.referer) headers.referer = options.referer;
  if (method === "GET") {
    const query = encodeUrlencoded(options.fields);
    const url = new URL(options.url);
    url.search = query;
    return { method, url: url.toString(), headers };
  }
  if (options.enctype.toLowerCase().startsWith("multipart/form-data")) {
    const boundary = multipartBoundary(options.seed ?? "", options.fields);
    headers["content-type"] = `multipart/form-data; boundary=${boundary}`;
    return { method, url: options.url, headers, body: encodeMultipart(options.fields, boundary) };
  }
  headers["content-type"] = "application/x-www-form-urlencoded";
  return { method, url: options.url, headers, body: encodeUrlencoded(options.fields) };
}

function asList(value: FormValue | FormValue[] | undefined): FormValue[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values.filter((value) => value.length > 0))];
}
