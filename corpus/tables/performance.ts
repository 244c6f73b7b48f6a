import type { NPlusOneKnobs } from "../generator/families/n-plus-one.ts";
import type { RegexDosKnobs } from "../generator/families/regex-dos.ts";
import type { SlowEndpointKnobs } from "../generator/families/slow-endpoint.ts";
import type { UnboundedKnobs } from "../generator/families/unbounded-result.ts";
import type { UnindexedKnobs } from "../generator/families/unindexed-query.ts";
import { rowMaker } from "../model/row.ts";
import { NP, NS, PK, PP, PS } from "../model/servers.ts";

// Performance: answers without bounds (lists, searches, reports, CSV exports) and lists that query once
// per row. Spread over both stacks and both databases; the safe twins page with a maximum or load the
// related rows in one statement. A safe N+1 twin pages as well: unpaged, it would be a real unbounded
// result at the very place its ledger entry calls correct.

const unbounded = rowMaker<UnboundedKnobs>("unbounded-result", "medium");

export const UNBOUNDED_RESULT = [
  unbounded.v("UNB-01", NS, { shape: "list", paging: "limit" }),
  unbounded.s("UNB-01S", NS, { shape: "list", paging: "limit" }),
  unbounded.v("UNB-02", PP, { shape: "search", paging: "per_page" }),
  unbounded.s("UNB-02S", PP, { shape: "search", paging: "per_page" }),
  unbounded.v("UNB-03", NP, { shape: "csv-export", paging: "none" }),
  unbounded.s("UNB-03S", NP, { shape: "csv-export", paging: "none" }),
  unbounded.v("UNB-04", PS, { shape: "report", paging: "none" }),
  unbounded.s("UNB-04S", PS, { shape: "report", paging: "page_size" }),
  unbounded.v("UNB-05", PK, { shape: "list", paging: "page_size", flaw: "uncapped" }),
  unbounded.s("UNB-05S", PK, { shape: "list", paging: "page_size" }),
  unbounded.v("UNB-06", NP, { shape: "report", paging: "limit", flaw: "uncapped" }),
  unbounded.v("UNB-07", PS, { shape: "list", paging: "none" }),
  unbounded.v("UNB-08", NS, { shape: "list", paging: "none", itemPath: true }),
  unbounded.s("UNB-08S", NS, { shape: "list", paging: "none", itemPath: true }),
];

const nPlusOne = rowMaker<NPlusOneKnobs>("n-plus-one", "medium");

export const N_PLUS_ONE = [
  nPlusOne.v("NPO-01", NS, { related: "tags", paging: "limit" }),
  nPlusOne.s("NPO-01S", NS, { related: "tags", paging: "limit" }),
  nPlusOne.v("NPO-02", PP, { related: "owner", paging: "limit" }),
  nPlusOne.s("NPO-02S", PP, { related: "owner", paging: "limit" }),
  nPlusOne.v("NPO-03", NP, { related: "tag-count", paging: "limit" }),
  nPlusOne.s("NPO-03S", NP, { related: "tag-count", paging: "limit" }),
  nPlusOne.v("NPO-04", PS, { related: "tags", paging: "none" }),
  nPlusOne.s("NPO-04S", PS, { related: "owner", paging: "limit" }),
  nPlusOne.v("NPO-05", PK, { related: "owner", paging: "none" }),
];

// Slow work inline, in a read and in two kinds of write; each safe twin does the same work off the request.
const slow = rowMaker<SlowEndpointKnobs>("slow-endpoint", "medium");

export const SLOW_ENDPOINT = [
  slow.v("SLOW-01", NS, { shape: "report" }),
  slow.s("SLOW-01S", NS, { shape: "report" }),
  slow.v("SLOW-02", PP, { shape: "action" }),
  slow.s("SLOW-02S", PP, { shape: "action" }),
  slow.v("SLOW-03", NP, { shape: "create" }),
  slow.s("SLOW-03S", NP, { shape: "create" }),
  slow.v("SLOW-04", PK, { shape: "create" }),
  slow.v("SLOW-05", NS, { shape: "action" }),
  slow.v("SLOW-06", PS, { shape: "report" }),
  slow.s("SLOW-06S", PS, { shape: "report" }),
];

// Only on the SQLite servers: their database is a file a tool can ask for a plan (see the builder).
const unindexed = rowMaker<UnindexedKnobs>("unindexed-query", "medium");

export const UNINDEXED_QUERY = [
  unindexed.v("UNX-01", NS, { lookup: "by-reference" }),
  unindexed.s("UNX-01S", NS, { lookup: "by-reference" }),
  unindexed.v("UNX-02", PK, { lookup: "by-category" }),
  unindexed.s("UNX-02S", PK, { lookup: "by-category" }),
  unindexed.v("UNX-03", PS, { lookup: "by-reference" }),
  unindexed.s("UNX-03S", PS, { lookup: "by-category" }),
  unindexed.v("UNX-04", NS, { lookup: "by-category" }),
  unindexed.v("UNX-05", PK, { lookup: "newest" }),
  unindexed.s("UNX-05S", PK, { lookup: "newest" }),
  unindexed.v("UNX-06", NS, { lookup: "largest" }),
  unindexed.s("UNX-06S", PS, { lookup: "largest" }),
];

// Format checks on the three places real code puts them: a lookup's query, a creation's body and the
// update of one of the caller's own records (PUT and PATCH). Each stack's backtracking engine, every
// document style; the safe twins check the same format with a pattern that has one way to match.
const regexDos = rowMaker<RegexDosKnobs>("regex-dos", "high");

export const REGEX_DOS = [
  regexDos.v("RDX-01", NS, { input: "query", pattern: "email", field: "email" }),
  regexDos.s("RDX-01S", NS, { input: "query", pattern: "email", field: "email" }),
  regexDos.v("RDX-02", PP, { input: "create", pattern: "url", field: "website" }),
  regexDos.s("RDX-02S", PP, { input: "create", pattern: "url", field: "website" }),
  regexDos.v("RDX-03", PK, { input: "update", pattern: "email", field: "contact_email", method: "PUT" }),
  regexDos.s("RDX-03S", PK, { input: "update", pattern: "email", field: "contact_email", method: "PUT" }),
  regexDos.v("RDX-04", NP, { input: "update", pattern: "phone", field: "phone", method: "PATCH" }),
  regexDos.s("RDX-04S", NP, { input: "update", pattern: "phone", field: "phone", method: "PATCH" }),
  regexDos.v("RDX-05", PS, { input: "query", pattern: "username", field: "username" }),
  regexDos.s("RDX-05S", PS, { input: "query", pattern: "username", field: "username" }),
  regexDos.v("RDX-06", NS, { input: "update", pattern: "url", field: "homepage", method: "PATCH" }),
];
