import type { Masker } from "../http/masking.ts";
import type { CookieJar } from "./cookie-jar.ts";
import type { HtmlControl, HtmlForm } from "./html-forms.ts";

// Where applications keep their anti-forgery token, across frameworks: a hidden form field (Rails
// authenticity_token, Django csrfmiddlewaretoken, Laravel _token, ASP.NET __RequestVerificationToken, csurf
// _csrf, WordPress _wpnonce), a <meta> tag read by scripts (Rails/Laravel csrf-token, Spring _csrf), or a
// readable cookie that scripts echo in a header (Angular/Spring/Laravel XSRF-TOKEN → X-XSRF-TOKEN, Django
// csrftoken → X-CSRFToken).

const CSRF_FIELD =
  /csrf|xsrf|^_?token$|authenticity_token|requestverificationtoken|anti[-_]?forgery|^_?wpnonce$|^nonce$|form[-_]?token/i;

/** The control carrying the form's CSRF token: the declared field when named, else one with a telling name. */
export function csrfControl(form: HtmlForm, declared?: string): HtmlControl | undefined {
  if (declared) return form.controls.find((control) => control.name === declared);
  return form.controls.find(
    (control) => control.type === "hidden" && CSRF_FIELD.test(control.name) && control.value !== "",
  );
}

export interface MetaCsrf {
  token: string;
  /** The field name a form post carries it in (Rails csrf-param), when the page says. */
  param?: string;
  /** The header scripts send it in (Spring _csrf_header), when the page says. */
  header?: string;
}

const META_TOKEN = ["csrf-token", "_csrf", "csrf_token", "xsrf-token", "_token", "csrf"];

/** The token a page hands its scripts in a <meta> tag, if any. */
export function metaCsrf(meta: Record<string, string>): MetaCsrf | undefined {
  const name = META_TOKEN.find((candidate) => meta[candidate]);
  if (!name) return undefined;
  return {
    token: meta[name]!,
    param: meta["csrf-param"] || undefined,
    header: meta._csrf_header || meta["csrf-header"] || undefined,
  };
}

/** Readable CSRF cookies and the header their frameworks expect them echoed in. */
export const CSRF_COOKIES: ReadonlyArray<{ cookie: RegExp; header: string }> = [
  { cookie: /^xsrf-token$/i, header: "X-XSRF-TOKEN" },
  { cookie: /^csrftoken$/i, header: "X-CSRFToken" },
  { cookie: /^_xsrf$/i, header: "X-XSRFToken" },
  { cookie: /^csrf[-_]?token$/i, header: "X-CSRF-Token" },
  { cookie: /^(x-)?(csrf|xsrf)[-_]?(token|cookie)?$/i, header: "X-CSRF-Token" },
];

/** Names of headers that carry a CSRF token (a request already carrying one is left alone). */
export const CSRF_HEADER = /^x-(xsrf|csrf)[-_]?token$|^x-csrftoken$|^x-xsrftoken$|^x-requested-with-csrf$/i;

/**
 * The header a script of the application would add to an unsafe request: a CSRF cookie echoed (decoded, as
 * axios and Angular do), else the page's meta token. Undefined when the session shows neither.
 */
export function csrfHeader(
  jar: CookieJar,
  url: string,
  meta: MetaCsrf | undefined,
): { name: string; value: string } | undefined {
  for (const [name, value] of Object.entries(jar.values(url))) {
    // csurf keeps its *secret* in `_csrf`; echoing it would prove nothing, so it is never used.
    if (name === "_csrf" || !value) continue;
    const known = CSRF_COOKIES.find((entry) => entry.cookie.test(name));
    if (known) return { name: known.header, value: safeDecode(value) };
  }
  if (meta) return { name: meta.header ?? "X-CSRF-Token", value: meta.token };
  return undefined;
}

export function isUnsafeMethod(method: string): boolean {
  return !["GET", "HEAD", "OPTIONS", "TRACE"].includes(method.toUpperCase());
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** CSRF tokens are bound to a session: evidence shows that one was sent, never its value. */
export function maskCsrfTokens(
  masker: Masker,
  form: HtmlForm | undefined,
  meta: Record<string, string> | undefined,
): void {
  const control = form ? csrfControl(form) : undefined;
  if (control && control.value.length >= 12) masker.addSecret(control.value);
  const token = metaCsrf(meta ?? {})?.token;
  if (token && token.length >= 12) masker.addSecret(token);
}
