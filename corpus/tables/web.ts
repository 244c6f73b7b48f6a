import type { DomXssKnobs } from "../generator/families/dom-xss.ts";
import type { DebugKnobs, ExposedFileKnobs, ListingKnobs } from "../generator/families/misconfiguration.ts";
import type { UploadServeKnobs } from "../generator/families/upload-serve.ts";
import type {
  CorsKnobs,
  CsrfKnobs,
  HeadersKnobs,
  OpenRedirectKnobs,
  XssKnobs,
} from "../generator/families/web.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// What browsers trust and what a site should not serve (OWASP A05, CWE-79/601/942/693/352/489/538/548).

const xss = rowMaker<XssKnobs>("xss", "high");

export const XSS = [
  xss.v("XSS-01", NS, { kind: "reflected", context: "body" }),
  xss.s("XSS-01S", NS, { kind: "reflected", context: "body", guard: "json" }),
  xss.v("XSS-02", PK, { kind: "stored", context: "body" }),
  xss.s("XSS-02S", PK, { kind: "stored", context: "body", guard: "escaped" }),

  xss.v("XSS-03", PS, { kind: "reflected", context: "attribute" }),
  xss.s("XSS-03S", PS, { kind: "reflected", context: "attribute", guard: "escaped" }),
  xss.v("XSS-04", PS, { kind: "reflected", context: "script" }),
  xss.s("XSS-04S", PS, { kind: "reflected", context: "script", guard: "escaped" }),
  xss.v("XSS-05", PS, { kind: "stored", context: "href" }),
  xss.s("XSS-05S", PS, { kind: "reflected", context: "href", guard: "escaped" }),

  xss.v("XSS-06", NP, { kind: "reflected", context: "href" }),
  xss.s("XSS-06S", NP, { kind: "reflected", context: "body", guard: "text" }),

  xss.v("XSS-07", PP, { kind: "reflected", context: "body" }),
  xss.s("XSS-07S", PP, { kind: "reflected", context: "body", guard: "escaped" }),
  xss.v("XSS-08", PK, { kind: "stored", context: "attribute" }),
];

// DOM-based: the server answers the same bytes whatever the URL holds; the page's script is the flaw.
const upload = rowMaker<UploadServeKnobs>("upload-xss", "high");

export const UPLOAD_XSS = [
  upload.v("UPX-01", PK, {}),
  upload.s("UPX-01S", PK, { guard: "attachment" }),
  upload.s("UPX-02S", PK, { guard: "text-plain" }),
  upload.v("UPX-02", PP, {}),
  upload.s("UPX-03S", PP, { guard: "images-only" }),
];

const domXss = rowMaker<DomXssKnobs>("dom-xss", "high");

export const DOM_XSS = [
  domXss.v("DXSS-01", NS, { source: "fragment", sink: "inner-html" }),
  domXss.s("DXSS-01S", NS, { source: "fragment", sink: "inner-html", guard: "escaped" }),
  domXss.v("DXSS-02", PK, { source: "query", sink: "insert-adjacent" }),
  domXss.s("DXSS-02S", PK, { source: "query", sink: "insert-adjacent", guard: "text" }),
  domXss.v("DXSS-03", PS, { source: "fragment", sink: "timer-string" }),
  domXss.s("DXSS-03S", PS, { source: "fragment", sink: "timer-string", guard: "function" }),
  domXss.v("DXSS-04", NP, { source: "query", sink: "link-href" }),
  domXss.s("DXSS-04S", NP, { source: "query", sink: "link-href", guard: "http-only" }),
  domXss.v("DXSS-05", PP, { source: "query", sink: "contextual-fragment" }),
  domXss.s("DXSS-05S", PP, { source: "query", sink: "contextual-fragment", guard: "escaped" }),
  domXss.s("DXSS-06S", NS, { source: "query", sink: "inner-html", guard: "text" }),
];

const redirect = rowMaker<OpenRedirectKnobs>("open-redirect", "medium");

export const OPEN_REDIRECT = [
  redirect.v("REDIR-01", NS, { param: "next", check: "none" }),
  redirect.s("REDIR-01S", NS, { param: "next", guard: "relative-only" }),
  redirect.v("REDIR-02", PS, { param: "returnTo", check: "prefix-slash" }),
  redirect.s("REDIR-02S", PS, { param: "returnTo", guard: "allow-list" }),
  redirect.v("REDIR-03", PS, { param: "url", check: "contains-host" }),
  redirect.v("REDIR-04", NP, { param: "redirect_uri", check: "none" }),
  redirect.s("REDIR-04S", NP, { param: "redirect_uri", guard: "allow-list" }),
  redirect.v("REDIR-05", PP, { param: "next", check: "prefix-slash" }),
  redirect.s("REDIR-05S", PP, { param: "next", guard: "relative-only" }),
];

const cors = rowMaker<CorsKnobs>("cors", "medium");

export const CORS = [
  cors.v("CORS-01", NS, { policy: "reflect" }),
  cors.s("CORS-01S", NS, { guard: "allow-list" }),
  cors.v("CORS-02", NP, { policy: "null" }),
  cors.s("CORS-02S", NP, { guard: "wildcard-public" }),
  cors.v("CORS-03", PP, { policy: "suffix" }),
  cors.s("CORS-03S", PP, { guard: "allow-list" }),
  cors.v("CORS-04", PS, { policy: "reflect" }),
];

const headers = rowMaker<HeadersKnobs>("security-headers", "low");

export const SECURITY_HEADERS = [
  headers.v("HDR-01", NS, {}),
  headers.s("HDR-01S", NS, {}),
  headers.v("HDR-02", PS, {}),
  headers.s("HDR-02S", PS, {}),
  headers.v("HDR-03", PP, {}),
];

const csrf = rowMaker<CsrfKnobs>("csrf", "medium");

export const CSRF = [
  csrf.v("CSRF-01", PS, {}),
  csrf.v("CSRF-02", PS, {}),
  csrf.v("CSRF-03", PS, {}),
  csrf.s("CSRF-01S", PS, { guard: "token" }),
  csrf.s("CSRF-02S", PS, { guard: "json-only" }),
  csrf.v("CSRF-04", PS, { via: "get" }),
  csrf.s("CSRF-04S", PS, { via: "get" }),
];

const debug = rowMaker<DebugKnobs>("debug-exposure", "high");

export const DEBUG_EXPOSURE = [
  debug.v("DEBUG-01", NS, { page: "vars" }),
  debug.s("DEBUG-01S", NS, { guard: "status-only" }),
  debug.v("DEBUG-02", PS, { page: "config" }),
  debug.s("DEBUG-02S", PS, { guard: "admin-only" }),
  debug.v("DEBUG-03", NP, { page: "vars" }),
  debug.s("DEBUG-04S", PP, { guard: "status-only" }),
];

const file = rowMaker<ExposedFileKnobs>("exposed-file", "high");

export const EXPOSED_FILE = [
  file.v("FILE-01", NS, { file: "env" }),
  file.v("FILE-02", NS, { file: "git-config" }),
  file.s("FILE-01S", NS, { file: "robots" }),
  file.v("FILE-03", PS, { file: "backup" }),
  file.v("FILE-04", PS, { file: "tilde" }),
  file.s("FILE-03S", PS, { file: "security-txt" }),
  file.v("FILE-05", NP, { file: "git-config" }),
  file.v("FILE-06", NP, { file: "sql-dump" }),
  file.s("FILE-05S", NP, { file: "static-js" }),
  file.v("FILE-07", PP, { file: "env" }),
  file.s("FILE-07S", PP, { file: "robots" }),
];

const listing = rowMaker<ListingKnobs>("directory-listing", "low");

export const DIRECTORY_LISTING = [
  listing.v("LIST-01", PS, { folder: "uploads" }),
  listing.v("LIST-02", NP, { folder: "exports" }),
  listing.s("LIST-01S", NS, { folder: "downloads" }),
  listing.s("LIST-02S", PP, { folder: "downloads" }),
];
