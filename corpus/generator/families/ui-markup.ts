import type { Row } from "../../model/row.ts";
import { pageOracle } from "../../oracles/browser.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { htmlAnswer, STR } from "../schemas.ts";
import {
  assetEndpoint,
  assetPath,
  cap,
  PICTURE_SVG,
  pageDocument,
  pagePath,
  pageVariant,
} from "./ui-page.ts";

// What a page's markup promises: links and files that answer (RFC 9110's 404, WCAG 2.4.4), controls and
// images with accessible names (WCAG 1.1.1, 1.3.1, 4.1.2; axe-core's label, select-name, image-alt and
// button-name rules) and text at 4.5:1 contrast (WCAG 1.4.3, axe color-contrast). Layout is ui-layout.ts.

export interface LinkKnobs {
  form:
    | "nav-404"
    | "wrong-id"
    | "missing-image"
    | "missing-script"
    | "external-link"
    | "sign-in-link"
    | "assets-present"
    | "valid-ids";
}

export function buildBrokenLink(row: Row<LinkKnobs>, ctx: BuildContext): Built {
  const { form } = row.knobs;
  const path = pagePath(ctx);
  const noun = ctx.place.plural;
  const vulnerable = row.label === "vulnerable";
  const files: Endpoint[] = [];
  const places: Array<{ page: string }> = [];
  let body = `<p>The ${noun} of this quarter.</p>`;
  let scripts: string[] = [];
  switch (form) {
    case "nav-404": {
      // The menu still points at a section that was removed.
      const gone = pagePath(ctx, "/archive");
      places.push({ page: gone });
      body += `<nav aria-label="Sections"><ul><li><a href="${path}">Current</a></li><li><a href="${gone}">Archive</a></li></ul></nav>`;
      break;
    }
    case "wrong-id":
    case "valid-ids": {
      // Detail pages exist for ids 1 to 3; the vulnerable list links its third entry by position + 6.
      const detail = pagePath(ctx, "/{id}");
      files.push(detailPages(detail, noun));
      places.push({ page: detail });
      const ids = form === "wrong-id" ? [1, 2, 9] : [1, 2, 3];
      body += `<ul>${ids.map((id, index) => `<li><a href="${path}/${id}">${cap(ctx.place.singular)} ${index + 1}</a></li>`).join("")}</ul>`;
      break;
    }
    case "missing-image":
    case "assets-present": {
      const picture = assetPath(ctx, "svg");
      // The picture is a place of the flaw (or of its absence) too: a broken-file finding names the file.
      places.push({ page: picture });
      if (form === "assets-present") files.push(assetEndpoint(picture, "svg", PICTURE_SVG));
      body += `<img src="${picture}" alt="Weekly ${noun} chart" width="48" height="48">`;
      break;
    }
    case "missing-script": {
      const script = assetPath(ctx, "js");
      places.push({ page: script });
      scripts = [script];
      break;
    }
    case "external-link":
      body +=
        '<p>How we write these pages: <a href="https://www.w3.org/WAI/standards-guidelines/wcag/">WCAG overview</a>.</p>';
      break;
    case "sign-in-link": {
      const account = pagePath(ctx, "/mine");
      files.push(signedInPage(account, noun));
      places.push({ page: account });
      body += `<p><a href="${account}">Your ${noun}</a> (sign in first).</p>`;
      break;
    }
  }
  return pageVariant(row, {
    page: { path, label: `${cap(noun)} overview`, listed: "menu", ...(places.length > 0 ? { places } : {}) },
    document: pageDocument({ title: `${cap(noun)} overview`, body, scripts }),
    summary: `The ${noun} overview page`,
    files,
    title: vulnerable
      ? {
          "nav-404": "A menu link leads to a removed section (404)",
          "wrong-id": "A list links a detail page by a wrong id (404)",
          "missing-image": "The page shows an image that is not served (404)",
          "missing-script": "The page loads a script that is not served (404)",
        }[form as "nav-404"]
      : `The ${noun} overview links other pages`,
    why: {
      "external-link": "the only link away is to an external site, which answers",
      "sign-in-link": "the link leads to a page that needs sign-in: anonymous visitors are sent to /login",
      "assets-present": "every file the page loads is served",
      "valid-ids": "every detail link names an existing record",
    }[form as "external-link"],
    oracle: pageOracle(path, "brokenLinks", vulnerable),
  });
}

function detailPages(template: string, noun: string): Endpoint {
  const page = (id: string) => pageDocument({ title: `Detail ${id}`, body: `<p>One of the ${noun}.</p>` });
  const notFound = pageDocument({ title: "Not found", body: "<p>There is no such page.</p>" });
  return {
    method: "GET",
    path: template,
    summary: `One of the ${noun}, as a page`,
    access: "public",
    parameters: [{ name: "id", in: "path", required: true, schema: STR }],
    responses: { "200": htmlAnswer("the page"), "404": htmlAnswer("no such record") },
    node: nodeRoute(
      "GET",
      template,
      `const id = String(request.params["id"]);\nif (!["1", "2", "3"].includes(id)) return html(reply, 404, ${JSON.stringify(notFound)});\nreturn html(reply, 200, ${JSON.stringify(page("{id}"))}.replace("{id}", id));`,
    ),
    python: pyRoute(
      "GET",
      template,
      `if id not in ("1", "2", "3"):\n    return html_page(404, ${JSON.stringify(notFound)})\nreturn html_page(200, ${JSON.stringify(page("{id}"))}.replace("{id}", id))`,
    ),
  };
}

/** A page for signed-in people only: anyone else is sent to the sign-in page, as sites do. */
function signedInPage(path: string, noun: string): Endpoint {
  const document = JSON.stringify(
    pageDocument({ title: `Your ${noun}`, body: `<p>Nothing of yours yet.</p>` }),
  );
  return {
    method: "GET",
    path,
    summary: `Your ${noun}`,
    access: "user",
    responses: { "200": htmlAnswer("the page"), "302": { description: "to the sign-in page" } },
    node: nodeRoute(
      "GET",
      path,
      `if (!(await signedIn(request))) return reply.redirect("/login", 302);\nreturn html(reply, 200, ${document});`,
    ),
    python: pyRoute(
      "GET",
      path,
      `if signed_in() is None:\n    return redirect("/login", code=302)\nreturn html_page(200, ${document})`,
    ),
  };
}

export interface AccessibilityKnobs {
  form:
    | "unlabeled-input"
    | "unlabeled-select"
    | "image-no-alt"
    | "icon-button"
    | "low-contrast"
    | "aria-label"
    | "label-for"
    | "decorative-image"
    | "aria-labelledby"
    | "wrapping-label";
}

export function buildAccessibility(row: Row<AccessibilityKnobs>, ctx: BuildContext): Built {
  const { form } = row.knobs;
  const path = pagePath(ctx);
  const noun = ctx.place.plural;
  const vulnerable = row.label === "vulnerable";
  const files: Endpoint[] = [];
  const styles: string[] = [];
  const scripts: string[] = [];
  const search = (control: string) =>
    `<form method="get" action="${path}" role="search">${control} <button type="submit">Search</button></form>`;
  let body: string;
  switch (form) {
    case "unlabeled-input":
      body = search('<span>Find</span> <input type="text" name="q">');
      break;
    case "aria-label":
      body = search(`<input type="text" name="q" aria-label="Search ${noun}">`);
      break;
    case "unlabeled-select":
    case "label-for": {
      const select = `<select id="sort" name="sort"><option value="new">Newest</option><option value="old">Oldest</option></select>`;
      body = search(
        form === "label-for"
          ? `<label for="sort">Sort by</label> ${select}`
          : `<span>Sort by</span> ${select}`,
      );
      break;
    }
    case "image-no-alt":
    case "decorative-image": {
      const picture = assetPath(ctx, "svg");
      files.push(assetEndpoint(picture, "svg", PICTURE_SVG));
      // The safe page's picture is a decoration beside a heading that says it all (WCAG H67: alt="").
      body = `<h2>Opening hours</h2><img src="${picture}" ${form === "decorative-image" ? 'alt="" ' : ""}width="48" height="48"><p>${form === "image-no-alt" ? "The chart above says when we are open." : "Monday to Friday, 9 to 5."}</p>`;
      break;
    }
    case "icon-button":
    case "aria-labelledby": {
      const script = assetPath(ctx, "js");
      scripts.push(script);
      files.push(
        assetEndpoint(
          script,
          "js",
          `document.getElementById("more-${ctx.place.slug}").addEventListener("click", () => {\n  const panel = document.getElementById("panel");\n  panel.hidden = !panel.hidden;\n});\n`,
        ),
      );
      const named = form === "aria-labelledby" ? ' aria-labelledby="more-label"' : "";
      body = `${form === "aria-labelledby" ? '<span id="more-label">Show the details</span> ' : ""}<button type="button" id="more-${ctx.place.slug}"${named}>${ICON}</button><div id="panel" hidden><p>Three ${noun} are due this week.</p></div>`;
      break;
    }
    case "low-contrast":
    case "wrapping-label": {
      const sheet = assetPath(ctx, "css");
      styles.push(sheet);
      const colour = form === "low-contrast" ? "#b0b0b0" : "#333333";
      files.push(assetEndpoint(sheet, "css", `.hint { color: ${colour}; background: #ffffff; }\n`));
      body = search(
        form === "wrapping-label"
          ? '<label>Search <input type="text" name="q"></label>'
          : '<label for="q">Search</label> <input id="q" type="text" name="q">',
      );
      body += `<p class="hint">Results show the last ninety days of ${noun}.</p>`;
      break;
    }
  }
  return pageVariant(row, {
    page: { path, label: `Find ${noun}`, listed: "menu" },
    document: pageDocument({ title: `Find ${noun}`, body, styles, scripts }),
    summary: `The ${noun} search page`,
    files,
    title: vulnerable
      ? {
          "unlabeled-input": "A text input has no label (WCAG 1.3.1, 4.1.2; axe label)",
          "unlabeled-select": "A select has no label (WCAG 4.1.2; axe select-name)",
          "image-no-alt": "An informative image has no alt text (WCAG 1.1.1; axe image-alt)",
          "icon-button": "An icon-only button has no accessible name (WCAG 4.1.2; axe button-name)",
          "low-contrast": "Hint text has a 2.1:1 contrast ratio (WCAG 1.4.3; axe color-contrast)",
        }[form as "unlabeled-input"]
      : `The ${noun} search page has controls and images`,
    why: {
      "aria-label": "the input is named by aria-label",
      "label-for": "the select has a label element pointing at it",
      "decorative-image": 'the image is decorative and says so with alt=""',
      "aria-labelledby": "the icon button is named by aria-labelledby",
      "wrapping-label": "the input sits inside its label and the hint has 12.6:1 contrast",
    }[form as "aria-label"],
    oracle: pageOracle(path, "accessibility", vulnerable),
  });
}

const ICON =
  '<svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path d="M2 5l6 6 6-6" fill="none" stroke="#000" stroke-width="2"/></svg>';
