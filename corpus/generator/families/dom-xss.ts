import type { Row } from "../../model/row.ts";
import { domScriptOracle } from "../../oracles/browser.ts";
import type { BuildContext, Built } from "../endpoint.ts";
import { assetEndpoint, assetPath, cap, pageDocument, pagePath, pageVariant } from "./ui-page.ts";

// DOM-based XSS (CWE-79, OWASP's DOM-based XSS prevention cheat sheet): the page's own script reads a part
// of its URL the server may never see (the fragment) or echoes nowhere (a query parameter) and hands it to
// a sink that parses HTML or runs code: innerHTML, insertAdjacentHTML, Range.createContextualFragment, a
// string given to setTimeout, a link's href. The server's answer is the same bytes whatever the URL holds,
// so only a browser running the script shows it. The look-alikes read the same inputs and write them
// safely: escaped before the HTML sink, as text, as a function argument, or as a link only when it is
// http(s). Pages send a policy that allows inline handlers and string code, as sites with legacy scripts
// do; the default `default-src 'self'` would block every payload and prove nothing about the code.

export interface DomXssKnobs {
  source: "fragment" | "query";
  sink: "inner-html" | "insert-adjacent" | "contextual-fragment" | "timer-string" | "link-href";
  /** How a safe look-alike writes the value. */
  guard?: "escaped" | "text" | "function" | "http-only";
}

/** What a page that runs legacy inline code sends instead of the servers' strict default. */
const LEGACY_PAGE_POLICY =
  "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; frame-ancestors 'none'";

const PARAMETER: Record<DomXssKnobs["sink"], string> = {
  "inner-html": "q",
  "insert-adjacent": "tag",
  "contextual-fragment": "note",
  "timer-string": "tab",
  "link-href": "back",
};

export function buildDomXss(row: Row<DomXssKnobs>, ctx: BuildContext): Built {
  const { source, sink, guard } = row.knobs;
  const vulnerable = row.label === "vulnerable";
  const path = pagePath(ctx);
  const script = assetPath(ctx, "js");
  const noun = ctx.place.plural;
  const name = PARAMETER[sink];
  const read =
    source === "fragment"
      ? "const value = decodeURIComponent(location.hash.slice(1));\n"
      : `const value = new URLSearchParams(location.search).get(${JSON.stringify(name)}) || "";\n`;
  const escaper =
    'const escapeHtml = (text) => text.replace(/[&<>"\']/g, (c) => "&#" + c.charCodeAt(0) + ";");\n';
  const out = 'const out = document.getElementById("out");\n';
  const code: Record<DomXssKnobs["sink"], string> = {
    "inner-html":
      guard === "escaped"
        ? `${escaper}${out}if (value) out.innerHTML = "Showing " + escapeHtml(value);\n`
        : guard === "text"
          ? `${out}if (value) out.textContent = "Showing " + value;\n`
          : `${out}if (value) out.innerHTML = "Showing " + value;\n`,
    "insert-adjacent":
      guard === "text"
        ? `${out}if (value) {\n  const item = document.createElement("span");\n  item.textContent = value;\n  out.append(item);\n}\n`
        : `${out}if (value) out.insertAdjacentHTML("beforeend", "<span class=\\"tag\\">" + value + "</span>");\n`,
    "contextual-fragment":
      guard === "escaped"
        ? `${escaper}${out}if (value) out.append(document.createRange().createContextualFragment("<em>" + escapeHtml(value) + "</em>"));\n`
        : `${out}if (value) out.append(document.createRange().createContextualFragment("<em>" + value + "</em>"));\n`,
    "timer-string":
      `window.showTab = (tab) => {\n  document.getElementById("out").textContent = "Tab: " + tab;\n};\n` +
      (guard === "function"
        ? 'setTimeout(() => window.showTab(value || "overview"), 0);\n'
        : `setTimeout("showTab('" + (value || "overview") + "')", 0);\n`),
    "link-href":
      guard === "http-only"
        ? 'if (value) {\n  const target = new URL(value, location.href);\n  if (target.protocol === "http:" || target.protocol === "https:") document.getElementById("back").href = target.href;\n}\n'
        : 'if (value) document.getElementById("back").href = value;\n',
  };
  // A query parameter is something the page itself offers: a search form or a link that carries it.
  const offer =
    source === "fragment"
      ? `<p><a href="#${sink === "timer-string" ? "history" : "recent"}">Recent ${noun}</a></p>`
      : sink === "link-href"
        ? `<p><a href="${path}?${name}=/">Open with a way back</a></p>`
        : `<form method="get" action="${path}"><label>Filter <input name="${name}"></label><button type="submit">Apply</button></form>`;
  const body = `<p>Every ${ctx.place.singular} of this month.</p>${offer}<p id="out" role="status"></p><p><a id="back" href="/">Back</a></p>`;
  const where = source === "fragment" ? "the URL fragment" : `the query parameter ${name}`;
  return pageVariant(row, {
    page: { path, label: `${cap(noun)} board`, listed: "menu" },
    document: pageDocument({ title: `${cap(noun)} board`, body, scripts: [script], nav: "none" }),
    policy: LEGACY_PAGE_POLICY,
    summary: `The ${noun} board page`,
    files: [assetEndpoint(script, "js", read + code[sink])],
    title: vulnerable
      ? `The page's script writes ${where} into ${SINK_WORDS[sink]} unescaped (DOM-based XSS)`
      : `The page's script reads ${where} and writes it into the page`,
    why: {
      escaped: "the value is HTML-escaped before it reaches the HTML sink",
      text: "the value is written as text, never parsed as HTML",
      function: "the timer is given a function; the value is only an argument",
      "http-only": "the value becomes a link only when it is an http(s) URL",
    }[guard ?? "escaped"],
    oracle: domScriptOracle(path, source === "fragment" ? "#fragment" : `?${name}`, vulnerable),
  });
}

const SINK_WORDS: Record<DomXssKnobs["sink"], string> = {
  "inner-html": "innerHTML",
  "insert-adjacent": "insertAdjacentHTML",
  "contextual-fragment": "Range.createContextualFragment",
  "timer-string": "a string run by setTimeout",
  "link-href": "a link's href",
};
