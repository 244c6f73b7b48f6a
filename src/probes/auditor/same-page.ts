import { Parser } from "htmlparser2";

// Server-rendered pages are compared by the text they show, not byte for byte: the same page rendered for
// two users differs in its chrome (the signed-in name, the role's menu, a fresh CSRF token) while the data
// it carries is the same. The chrome sits in `<nav>`, `<header>`, `<footer>`, `<aside>` and attributes;
// the data in `<main>` when the page has one, else in the rest of the body.

/** Elements whose text is chrome or not shown: never data. */
const CHROME = new Set([
  "head",
  "script",
  "style",
  "noscript",
  "template",
  "nav",
  "header",
  "footer",
  "aside",
  "svg",
  "select",
]);

/** Whether a body is an HTML document (not a JSON or text answer). */
export function isHtmlDocument(text: string): boolean {
  return /^\s*(?:<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(text) || /<body[\s>]/i.test(text);
}

/**
 * The text segments a page shows as its content, whitespace collapsed, each at least three characters:
 * those inside `<main>` (or `role="main"`) when the page marks one, else every segment outside the chrome.
 */
export function pageSegments(html: string): string[] {
  const everywhere: string[] = [];
  const inMain: string[] = [];
  const open: string[] = [];
  let chromeDepth = 0;
  let mainDepth = 0;
  let sawMain = false;
  let pending = "";
  const flush = () => {
    const segment = pending.replace(/\s+/g, " ").trim();
    pending = "";
    if (segment.length < 3 || chromeDepth > 0) return;
    everywhere.push(segment);
    if (mainDepth > 0) inMain.push(segment);
  };
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        flush();
        const isMain = name === "main" || attributes.role === "main";
        open.push(isMain ? "main" : CHROME.has(name) ? "chrome" : "");
        if (isMain) {
          mainDepth += 1;
          sawMain = true;
        } else if (CHROME.has(name)) chromeDepth += 1;
      },
      ontext(text) {
        pending += text;
      },
      onclosetag() {
        flush();
        const kind = open.pop();
        if (kind === "main") mainDepth -= 1;
        else if (kind === "chrome") chromeDepth -= 1;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html.slice(0, 2_000_000));
  parser.end();
  flush();
  return sawMain ? inMain : everywhere;
}

/**
 * Whether two pages show the same content: at least 80% (and two or more) of the reference's segments
 * appear in the other, and at least 80% of the other's appear in the reference (a refusal page in the same
 * layout, or a page about something else that shares a few headings, is not the same page).
 */
export function samePage(reference: string, other: string): boolean {
  const expected = [...new Set(pageSegments(reference))];
  const actual = [...new Set(pageSegments(other))];
  if (expected.length < 2 || actual.length === 0) return false;
  const actualSet = new Set(actual);
  const expectedSet = new Set(expected);
  const found = expected.filter((segment) => actualSet.has(segment)).length;
  const back = actual.filter((segment) => expectedSet.has(segment)).length;
  return found >= 2 && found / expected.length >= 0.8 && back / actual.length >= 0.8;
}
