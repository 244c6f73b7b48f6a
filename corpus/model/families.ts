import type { Domain } from "../../src/envelope/taxonomy.ts";

// The corpus measures techniques per *family*: a flaw as the public catalogues name it (CWE, OWASP Top 10,
// OWASP API Top 10), finer than the ledger's closed class list. Each family says which ledger domain and
// class its defects are filed under, so `qaas score` matches them like any target's, and which public
// entries describe it, so a reader can check a variant against the catalogue rather than against qaas.

export interface Family {
  name: string;
  domain: Domain;
  /** The ledger class (spec/golden-ledger.md). A row may override it when the family straddles two. */
  ledgerClass: string;
  /** Public catalogue entries the variants follow. */
  references: string[];
  summary: string;
}

const family = (
  name: string,
  domain: Domain,
  ledgerClass: string,
  references: string[],
  summary: string,
): Family => ({ name, domain, ledgerClass, references, summary });

export const FAMILIES = [
  family("sql-injection", "security", "injection", ["CWE-89", "OWASP A03:2021"], "input reaches SQL text"),
  family(
    "nosql-injection",
    "security",
    "injection",
    ["CWE-943", "OWASP A03:2021"],
    "a JSON operator object reaches a document filter",
  ),
  family(
    "command-injection",
    "security",
    "injection",
    ["CWE-78", "OWASP A03:2021"],
    "input reaches a shell command line",
  ),
  family(
    "template-injection",
    "security",
    "injection",
    ["CWE-1336", "OWASP A03:2021"],
    "input is compiled as a server-side template",
  ),
  family(
    "path-traversal",
    "security",
    "injection",
    ["CWE-22", "OWASP A01:2021"],
    "input names a file outside the folder it should stay in",
  ),
  family(
    "path-traversal-write",
    "security",
    "injection",
    ["CWE-22", "CWE-73", "OWASP A01:2021"],
    "a file name from the request decides where the application writes",
  ),
  family("xxe", "security", "xxe", ["CWE-611", "OWASP A05:2021"], "an XML parser resolves external entities"),
  family(
    "ssrf",
    "security",
    "ssrf",
    ["CWE-918", "OWASP A10:2021"],
    "the server fetches a URL the client chose",
  ),
  family("xss", "security", "xss", ["CWE-79", "OWASP A03:2021"], "input lands unescaped in an HTML answer"),
  family(
    "upload-xss",
    "security",
    "xss",
    ["CWE-434", "CWE-79", "OWASP A04:2021"],
    "an uploaded file is served back inline as a page of the site",
  ),
  family(
    "dom-xss",
    "security",
    "xss",
    ["CWE-79", "OWASP DOM based XSS Prevention Cheat Sheet"],
    "a page's own script writes part of its URL into HTML or code",
  ),
  family(
    "open-redirect",
    "security",
    "open-redirect",
    ["CWE-601"],
    "a redirect target comes from the request unchecked",
  ),
  family(
    "insecure-deserialization",
    "security",
    "insecure-deserialization",
    ["CWE-502", "OWASP A08:2021"],
    "a client-supplied blob is deserialised by a format that runs code",
  ),
  family(
    "object-authorization",
    "security",
    "missing-authorization",
    ["CWE-639", "OWASP API1:2023"],
    "one user reaches another user's object by its id",
  ),
  family(
    "function-authorization",
    "security",
    "missing-authorization",
    ["CWE-285", "OWASP API5:2023"],
    "a role-restricted operation answers a lower role",
  ),
  family(
    "cookie-flag",
    "security",
    "missing-authorization",
    ["CWE-565", "CWE-602", "OWASP A01:2021"],
    "a plain cookie the client can change decides who is let in",
  ),
  family(
    "mass-assignment",
    "api",
    "validation-missing",
    ["CWE-915", "OWASP API3:2023"],
    "a body sets a field the client must not control (role, owner, price)",
  ),
  family(
    "client-price",
    "api",
    "validation-missing",
    ["CWE-472", "CWE-602"],
    "a price, total or fee a page fixes is stored as the request sends it",
  ),
  family(
    "missing-authentication",
    "security",
    "missing-authentication",
    ["CWE-306", "OWASP API2:2023"],
    "an operation meant for signed-in users answers anyone",
  ),
  family(
    "token-forgery",
    "security",
    "broken-authentication",
    ["CWE-347", "CWE-613", "OWASP API2:2023"],
    "a JWT is accepted unsigned, forged with a common secret, expired or tampered",
  ),
  family(
    "user-enumeration",
    "security",
    "broken-authentication",
    ["CWE-204", "OWASP A07:2021"],
    "sign-in or reset answers tell existing accounts from unknown ones",
  ),
  family(
    "brute-force",
    "security",
    "broken-authentication",
    ["CWE-307", "OWASP A07:2021"],
    "repeated failed sign-ins are never limited",
  ),
  family(
    "reset-token-exposure",
    "security",
    "broken-authentication",
    ["CWE-640", "OWASP A07:2021"],
    "a password-reset answer hands back the reset token",
  ),
  family(
    "password-hash-exposure",
    "security",
    "sensitive-data-exposure",
    ["CWE-200", "CWE-916", "OWASP API3:2023"],
    "an answer carries password hashes",
  ),
  family(
    "secret-in-response",
    "security",
    "secret-exposure",
    ["CWE-200", "CWE-522"],
    "an answer carries live tokens, API keys or private keys",
  ),
  family(
    "excessive-data-exposure",
    "security",
    "sensitive-data-exposure",
    ["CWE-213", "OWASP API3:2023"],
    "an answer carries private fields the document does not declare",
  ),
  family(
    "error-disclosure",
    "security",
    "misconfiguration",
    ["CWE-209", "CWE-497"],
    "an error answer carries a stack trace, a traceback or a connection string",
  ),
  family(
    "debug-exposure",
    "security",
    "misconfiguration",
    ["CWE-489", "CWE-215"],
    "a debug page answers in production",
  ),
  family(
    "exposed-file",
    "security",
    "misconfiguration",
    ["CWE-538", "CWE-530", "CWE-527"],
    "VCS metadata, environment files or backups are served",
  ),
  family("directory-listing", "security", "misconfiguration", ["CWE-548"], "a folder's index is listed"),
  family("cors", "security", "misconfiguration", ["CWE-942"], "any origin may read credentialed answers"),
  family(
    "security-headers",
    "security",
    "misconfiguration",
    ["CWE-693", "CWE-1021", "OWASP Secure Headers"],
    "an HTML answer lacks the usual protective headers",
  ),
  family(
    "csrf",
    "security",
    "csrf",
    ["CWE-352"],
    "a cookie-authenticated state change accepts a forged form",
  ),
  family(
    "wrong-status",
    "api",
    "wrong-status",
    ["RFC 9110 §15"],
    "an error answered 200, or a client error answered 5xx",
  ),
  family(
    "undocumented-status",
    "api",
    "contract-drift",
    ["OpenAPI 3.0 responses"],
    "a status the document does not list",
  ),
  family(
    "contract-drift",
    "api",
    "contract-drift",
    ["OpenAPI 3.0 schema"],
    "a field renamed, retyped, null or missing against the document",
  ),
  family("unhandled-error", "api", "unhandled-error", ["CWE-755"], "a 5xx for a valid but unusual input"),
  family(
    "validation-missing",
    "api",
    "validation-missing",
    ["CWE-20", "CWE-1284"],
    "wrong types, negative quantities or values outside an enum are stored",
  ),
  family(
    "http-semantics",
    "api",
    "contract-drift",
    ["RFC 9110 §9.2"],
    "GET with side effects, a second DELETE answered 5xx, a PUT that is not idempotent",
  ),
  family(
    "unbounded-result",
    "performance",
    "unbounded-result",
    ["CWE-400", "CWE-770", "OWASP API4:2023"],
    "a list, search, report or export ignores its page size (or has none) and returns every row",
  ),
  family(
    "n-plus-one",
    "performance",
    "n-plus-one",
    ["CWE-1073", "CWE-1049", "N+1 selects"],
    "a list runs one more query for each row it returns (its tags, owner or counts)",
  ),
  family(
    "unindexed-query",
    "performance",
    "unindexed-query",
    ["CWE-1067"],
    "a lookup filters a large table on a column no index starts with, scanning it on every request",
  ),
  family(
    "slow-endpoint",
    "performance",
    "slow-endpoint",
    ["CWE-1050", "CWE-400"],
    "a report, a create or an action waits on slow work inline (a service call, a mail, a rendering)",
  ),
  family(
    "regex-dos",
    "performance",
    "slow-endpoint",
    ["CWE-1333", "OWASP ReDoS"],
    "a format check (email, web address, phone, user name) uses a pattern that backtracks exponentially",
  ),
  family(
    "uniqueness-in-code",
    "data",
    "missing-constraint",
    ["CWE-1188", "CWE-362", "Rails validates uniqueness caveat"],
    "a value the code treats as unique (plain, per owner, one active, ignoring case) has no unique index",
  ),
  family(
    "unchecked-domain",
    "data",
    "missing-constraint",
    ["CWE-20", "CWE-1173"],
    "a rule on a column's values (not negative, at most 100, end after start) is checked in code, not by a CHECK",
  ),
  family(
    "orphan-on-delete",
    "data",
    "missing-constraint",
    ["CWE-1173", "SQL FOREIGN KEY … ON DELETE"],
    "deleting a parent leaves its children behind: the reference has no foreign key",
  ),
  family(
    "repeated-transition",
    "data",
    "data-integrity",
    ["CWE-841", "CWE-837", "OWASP WSTG-BUSL-06"],
    "a one-shot state transition (return, pay, cancel) done again adds to its counter again",
  ),
  family(
    "double-submit-race",
    "data",
    "data-integrity",
    ["CWE-362", "CWE-367", "OWASP WSTG-BUSL-09"],
    "simultaneous requests all pass a state check made before the write, so the effect happens twice",
  ),
  family(
    "stale-derived-field",
    "data",
    "data-integrity",
    ["CWE-1250", "CWE-682"],
    "a stored total, end or count is not recomputed when an update changes its parts",
  ),
  family(
    "lost-update",
    "data",
    "data-integrity",
    ["CWE-362", "RFC 9110 §13.1.1", "optimistic locking"],
    "a change made from a stale version or ETag overwrites the newer one",
  ),
  family(
    "ws-authentication",
    "realtime",
    "ws-unauthenticated",
    ["CWE-306", "CWE-287", "CWE-347", "CWE-613", "OWASP WebSocket Security Cheat Sheet"],
    "a channel accepts connections without a valid credential and streams private records",
  ),
  family(
    "ws-authorization",
    "realtime",
    "ws-authorization",
    ["CWE-639", "CWE-863", "OWASP WebSocket Security Cheat Sheet"],
    "a channel fans records out to signed-in users of other organisations",
  ),
  family(
    "ws-event-exposure",
    "realtime",
    "ws-authorization",
    ["CWE-213", "CWE-522", "OWASP API3:2023", "OWASP WebSocket Security Cheat Sheet"],
    "events embed the author's whole account row, whose password hash the API never shows",
  ),
  family(
    "ws-ordering",
    "realtime",
    "ws-ordering",
    ["CWE-696", "CWE-362"],
    "a burst of events arrives reversed, or numbered with repeats",
  ),
  family(
    "ws-reconnect",
    "realtime",
    "ws-reconnect",
    ["CWE-404", "OWASP WebSocket Security Cheat Sheet"],
    "a channel that promises resume replays nothing, or the already seen event, after a reconnect",
  ),
  family(
    "ws-backpressure",
    "realtime",
    "ws-backpressure",
    ["CWE-400", "CWE-770"],
    "a channel buffers without limit for a connection that stopped reading",
  ),
  // The browser's side (domain ui) and a person's (domain usability): pages, their scripts, links, markup
  // and copy. Written from WCAG 2.x success criteria, axe-core's rule descriptions, Nielsen's heuristics
  // and MDN, one family per ledger class.
  family(
    "console-error",
    "ui",
    "console-error",
    ["MDN Window: error event", "MDN Window: unhandledrejection event", "MDN console.error()"],
    "a page throws an uncaught exception, leaves a rejection unhandled or fails its own data request",
  ),
  family(
    "broken-link",
    "ui",
    "broken-link",
    ["RFC 9110 §15.5.5 (404)", "WCAG 2.x 2.4.4 Link Purpose", "W3C Link Checker"],
    "a link, or a script, stylesheet or image a page loads, answers 404",
  ),
  family(
    "accessibility",
    "ui",
    "accessibility",
    [
      "WCAG 2.x 1.1.1 Non-text Content",
      "WCAG 2.x 1.3.1 Info and Relationships",
      "WCAG 2.x 1.4.3 Contrast (Minimum)",
      "WCAG 2.x 4.1.2 Name, Role, Value",
      "axe-core rules label, select-name, image-alt, button-name, color-contrast",
    ],
    "a control without an accessible name, an image without alt text, text below 4.5:1 contrast",
  ),
  family(
    "broken-journey",
    "ui",
    "broken-journey",
    ["Nielsen heuristic 1 (visibility of system status)", "Nielsen heuristic 9 (recover from errors)"],
    "a button that does nothing or throws, a form whose submission ends on an error page or fails unseen",
  ),
  family(
    "visual-defect",
    "ui",
    "visual-defect",
    [
      "WCAG 2.x 1.4.10 Reflow",
      "WCAG 2.x 1.4.4 Resize Text",
      "WCAG 2.2 2.5.8 Target Size",
      "MDN Responsive design",
    ],
    "content wider than a phone's viewport, so the page scrolls sideways; a control another element covers; text its box cuts off",
  ),
  family(
    "undiscoverable-feature",
    "usability",
    "undiscoverable-feature",
    ["Nielsen heuristic 6 (recognition rather than recall)", "WCAG 2.x 2.4.5 Multiple Ways"],
    "a working page that no menu, footer, breadcrumb or link leads to",
  ),
  family(
    "misleading-copy",
    "usability",
    "misleading-copy",
    ["Nielsen heuristic 1 (visibility of system status)", "Nielsen heuristic 2 (match the real world)"],
    "help text promising a limit or an undo the application does not honour, a success shown for a failure",
  ),
  family(
    "dead-end",
    "usability",
    "dead-end",
    ["Nielsen heuristic 3 (user control and freedom)", "WCAG 2.x 2.4.8 Location"],
    "a page with no link onward or back, no menu and no breadcrumb",
  ),
] as const satisfies readonly Family[];

export type FamilyName = (typeof FAMILIES)[number]["name"];

/** Defects the corpus did not seed as variants but which its own structure makes real (see README). */
export const DERIVED_FAMILIES = {
  /** A 5xx answer a security variant gives to an unusual input: a real unhandled error beside the flaw. */
  collateral: "collateral",
  /** An operation a partial document leaves out. */
  undocumentedEndpoint: "undocumented-endpoint",
} as const;

export function familyOf(name: string): Family {
  const found = FAMILIES.find((candidate) => candidate.name === name);
  if (!found)
    throw new Error(`unknown corpus family "${name}" (known: ${FAMILIES.map((f) => f.name).join(", ")})`);
  return found;
}
