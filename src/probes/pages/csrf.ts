// How frameworks name the anti-forgery token a form must echo back: Django (csrfmiddlewaretoken), Rails
// (authenticity_token), Laravel (_token), ASP.NET (__RequestVerificationToken), csurf/Express and Spring
// (_csrf), Angular and others (xsrf).

const CSRF_FIELD = /csrf|xsrf|^_?token$|authenticity_token|__requestverificationtoken|anti[-_]?forgery/i;

/** Whether a form field's name is a framework's anti-forgery token. */
export function isCsrfFieldName(name: string): boolean {
  return CSRF_FIELD.test(name);
}

/** What a page's `<meta>` tags say about its anti-forgery token (scripts send it; Rails' UJS adds it to forms). */
export interface CsrfMeta {
  /** The meta tag carrying the token, e.g. `csrf-token`, `_csrf`, `xsrf-token`. */
  meta: string;
  /** The form field the token belongs in, when the page says (`<meta name="csrf-param">`, Rails). */
  param?: string;
  /** The header a script sends it in, when the page says (`<meta name="_csrf_header">`, Spring). */
  header?: string;
}

const CSRF_META = /^(?:csrf[-_]?token|_csrf|xsrf[-_]?token|csrf)$/i;
const CSRF_PARAM_META = /^csrf[-_]?param$/i;
const CSRF_HEADER_META = /^_?csrf[-_]?header(?:[-_]?name)?$/i;

/** Reads every `<meta name content>` of a page into what it says about its token, if anything. */
export class CsrfMetaReader {
  private meta: string | undefined;
  private param: string | undefined;
  private header: string | undefined;

  read(name: string, content: string): void {
    if (CSRF_META.test(name)) this.meta ??= name;
    else if (CSRF_PARAM_META.test(name) && content) this.param ??= content;
    else if (CSRF_HEADER_META.test(name) && content) this.header ??= content;
  }

  /** Undefined unless the page carries a token (a `csrf-param` alone names a field with nothing to put in it). */
  result(): CsrfMeta | undefined {
    if (!this.meta) return undefined;
    return {
      meta: this.meta,
      ...(this.param ? { param: this.param } : {}),
      ...(this.header ? { header: this.header } : {}),
    };
  }
}
