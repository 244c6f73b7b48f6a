import type { Row } from "../../model/row.ts";
import { pageOracle } from "../../oracles/browser.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { htmlAnswer } from "../schemas.ts";
import {
  assetEndpoint,
  assetPath,
  cap,
  jsonEndpoint,
  pageDocument,
  pagePath,
  pageVariant,
} from "./ui-page.ts";

// What a page's scripts do when it loads and when a person acts (MDN's `error` and `unhandledrejection`
// events, console.error; Nielsen's heuristics 1 and 9): an exception nothing catches at load or later, a
// promise rejected with no handler, the page's own data request failing 5xx, a button that does nothing or
// throws, a form whose submission ends on an error page or fails without a word. And the look-alikes real
// pages have: console.log/info chatter, a rejection that is handled, a 404 the page expects, a button that
// answers with feedback, a form that lands on its confirmation.

export interface ConsoleKnobs {
  form:
    | "load-exception"
    | "deferred-exception"
    | "unhandled-rejection"
    | "fetch-5xx"
    | "log-noise"
    | "handled-rejection"
    | "expected-404"
    | "fetch-ok";
}

export function buildConsoleError(row: Row<ConsoleKnobs>, ctx: BuildContext): Built {
  const { form } = row.knobs;
  const path = pagePath(ctx);
  const script = assetPath(ctx, "js");
  const data = `${ctx.place.base}/summary`;
  const noun = ctx.place.plural;
  const show = 'document.getElementById("figures")';
  const scripts: Record<ConsoleKnobs["form"], string> = {
    // The element was renamed in the markup and not in the script: a TypeError as the page loads.
    "load-exception": `document.getElementById("open-count").textContent = "12 open";\n`,
    // A helper dropped in a refactor, called once the page has settled.
    "deferred-exception": `window.addEventListener("load", () => {\n  setTimeout(() => {\n    ${show}.textContent = formatTotals([3, 4, 5]);\n  }, 50);\n});\n`,
    // The answer has no nested object the code assumes; the async function rejects and nobody catches it.
    "unhandled-rejection": `async function loadPreferences() {\n  const response = await fetch(${JSON.stringify(data)});\n  const body = await response.json();\n  ${show}.textContent = body.theme.name;\n}\nloadPreferences();\n`,
    "fetch-5xx": `fetch(${JSON.stringify(data)}).then((response) => {\n  ${show}.textContent = response.ok ? "Figures loaded." : "Figures are unavailable.";\n});\n`,
    "log-noise": `console.log("${noun} page ready");\nconsole.info("3 figures rendered");\n${show}.textContent = "3 figures this week.";\n`,
    "handled-rejection": `function cachedFigures() {\n  const saved = window.localStorage.getItem("figures");\n  return saved ? Promise.resolve(saved) : Promise.reject(new Error("nothing cached yet"));\n}\ncachedFigures()\n  .then((saved) => {\n    ${show}.textContent = saved;\n  })\n  .catch(() => {\n    ${show}.textContent = "No figures saved on this device yet.";\n  });\n`,
    "expected-404": `fetch(${JSON.stringify(data)}).then(async (response) => {\n  if (response.status === 404) {\n    ${show}.textContent = "No draft saved yet.";\n    return;\n  }\n  const body = await response.json();\n  ${show}.textContent = body.text;\n});\n`,
    "fetch-ok": `fetch(${JSON.stringify(data)})\n  .then((response) => response.json())\n  .then((body) => {\n    ${show}.textContent = body.text;\n  });\n`,
  };
  const answers: Partial<Record<ConsoleKnobs["form"], [number, Record<string, unknown>]>> = {
    "unhandled-rejection": [200, { theme: null }],
    "fetch-5xx": [500, { error: "summary unavailable" }],
    "expected-404": [404, { error: "no draft yet" }],
    "fetch-ok": [200, { text: "3 figures this week." }],
  };
  const answer = answers[form];
  const api = answer && jsonEndpoint("GET", data, `The ${noun} figures`, answer[0], answer[1]);
  const failing = form === "fetch-5xx";
  const vulnerable = row.label === "vulnerable";
  return pageVariant(row, {
    page: { path, label: `${cap(noun)} figures`, listed: "menu" },
    document: pageDocument({
      title: `${cap(noun)} figures`,
      body: '<p id="figures">Loading figures.</p>',
      scripts: [script],
    }),
    summary: `The ${noun} figures page`,
    files: [assetEndpoint(script, "js", scripts[form]), ...(api && !failing ? [api] : [])],
    ...(api && failing ? { alsoAt: [api] } : {}),
    ...(failing
      ? { collateral: { class: "unhandled-error", title: `GET ${data} always answers 500`, at: api! } }
      : {}),
    title: vulnerable
      ? consoleTitle(form)
      : `The ${noun} figures page writes to the console and fetches data`,
    why: {
      "log-noise": "console.log and console.info are not errors",
      "handled-rejection": "the rejection has a catch handler that shows a message",
      "expected-404": "the 404 means 'no draft yet' and the page handles it",
      "fetch-ok": "its data request answers 200",
    }[form as "log-noise"],
    oracle: pageOracle(path, "consoleErrors", vulnerable),
  });
}

function consoleTitle(form: ConsoleKnobs["form"]): string {
  return {
    "load-exception": "A TypeError is thrown as the page loads (a script reads an element that is not there)",
    "deferred-exception": "A ReferenceError is thrown after load by a deferred call to a missing function",
    "unhandled-rejection": "An async function rejects with a TypeError and nothing handles the rejection",
    "fetch-5xx": "The page's own data request answers 500",
  }[form as "load-exception"];
}

export interface JourneyKnobs {
  form:
    | "inert-button"
    | "throwing-button"
    | "error-page"
    | "hidden-5xx"
    | "feedback"
    | "redirect"
    | "saved-page"
    | "fetch-saved";
}

export function buildBrokenJourney(row: Row<JourneyKnobs>, ctx: BuildContext): Built {
  const { form } = row.knobs;
  const path = pagePath(ctx);
  const script = assetPath(ctx, "js");
  const noun = ctx.place.plural;
  const vulnerable = row.label === "vulnerable";
  const action = `${path}/save`;
  const api = `${ctx.place.base}/subscriptions`;
  const files: Endpoint[] = [];
  const alsoAt: Endpoint[] = [];
  let body: string;
  const status = '<p id="status" role="status"></p>';
  switch (form) {
    case "inert-button":
    case "throwing-button":
    case "feedback": {
      const handler = {
        // The handler was left as a stub: the click is swallowed.
        "inert-button": "(event) => {\n  event.preventDefault();\n}",
        "throwing-button":
          '() => {\n  const rows = undefined;\n  document.getElementById("status").textContent = rows.toCsv();\n}',
        feedback:
          '() => {\n  document.getElementById("status").textContent = "Export started: the file arrives by email.";\n}',
      }[form];
      files.push(
        assetEndpoint(
          script,
          "js",
          `document.getElementById("export-${ctx.place.slug}").addEventListener("click", ${handler});\n`,
        ),
      );
      body = `<p>Every ${ctx.place.singular} of this month.</p><button type="button" id="export-${ctx.place.slug}">Export the ${noun}</button>${status}`;
      break;
    }
    case "error-page":
    case "redirect":
    case "saved-page": {
      const done = `${path}/done`;
      const handler = {
        "error-page": {
          node: 'return reply.code(500).type("text/html; charset=utf-8").send("<!doctype html><title>Error</title><h1>Internal Server Error</h1>");',
          python:
            'return "<!doctype html><title>Error</title><h1>Internal Server Error</h1>", 500, {"Content-Type": "text/html; charset=utf-8"}',
        },
        redirect: {
          node: `return reply.redirect(${JSON.stringify(done)}, 303);`,
          python: `return redirect(${JSON.stringify(done)}, code=303)`,
        },
        "saved-page": {
          node: `return html(reply, 200, ${JSON.stringify(savedPage(noun))});`,
          python: `return html_page(200, ${JSON.stringify(savedPage(noun))})`,
        },
      }[form];
      const post: Endpoint = {
        method: "POST",
        path: action,
        summary: `Save the ${noun} note`,
        access: "public",
        body: {
          contentType: "application/x-www-form-urlencoded",
          schema: { type: "object", properties: { note: { type: "string" } } },
        },
        responses:
          form === "error-page"
            ? { "500": htmlAnswer("an error page") }
            : form === "redirect"
              ? { "303": { description: "to the confirmation" } }
              : { "200": htmlAnswer("saved") },
        node: nodeRoute("POST", action, handler.node),
        python: pyRoute("POST", action, handler.python),
      };
      if (form === "error-page") alsoAt.push(post);
      else files.push(post);
      if (form === "redirect") {
        const page: Endpoint = {
          method: "GET",
          path: done,
          summary: `The ${noun} note is saved`,
          access: "public",
          responses: { "200": htmlAnswer("the confirmation") },
          node: nodeRoute("GET", done, `return html(reply, 200, ${JSON.stringify(savedPage(noun))});`),
          python: pyRoute("GET", done, `return html_page(200, ${JSON.stringify(savedPage(noun))})`),
        };
        files.push(page);
      }
      body = `<form method="post" action="${action}"><input type="hidden" name="csrf_token" value="{csrf}"><label for="note">Note</label> <input id="note" name="note" value="Ready"> <button type="submit">Save the note</button></form>`;
      break;
    }
    case "hidden-5xx":
    case "fetch-saved": {
      const failing = form === "hidden-5xx";
      const endpoint = jsonEndpoint(
        "POST",
        api,
        `Subscribe to the ${noun} digest`,
        failing ? 500 : 201,
        failing ? { error: "mailer unavailable" } : { subscribed: true },
      );
      (failing ? alsoAt : files).push(endpoint);
      // The vulnerable script never looks at the answer: the page stays as it was, whatever happened.
      const after = failing
        ? "() => {}"
        : '(response) => {\n    document.getElementById("status").textContent = response.ok ? "Subscribed: the digest arrives on Mondays." : "Not subscribed, try again later.";\n  }';
      files.push(
        assetEndpoint(
          script,
          "js",
          `document.getElementById("subscribe").addEventListener("submit", (event) => {\n  event.preventDefault();\n  fetch(${JSON.stringify(api)}, {\n    method: "POST",\n    headers: { "content-type": "application/json" },\n    body: JSON.stringify({ email: document.getElementById("email").value }),\n  }).then(${after});\n});\n`,
        ),
      );
      body = `<form id="subscribe"><label for="email">Email</label> <input id="email" type="email" value="team@corpus.test"> <button type="submit">Subscribe</button></form>${status}`;
      break;
    }
  }
  const usesScript = ["inert-button", "throwing-button", "feedback", "hidden-5xx", "fetch-saved"].includes(
    form,
  );
  return pageVariant(row, {
    page: { path, label: `${cap(noun)} tools`, listed: "menu" },
    document: pageDocument({
      title: `${cap(noun)} tools`,
      body,
      ...(usesScript ? { scripts: [script] } : {}),
    }),
    summary: `The ${noun} tools page`,
    files,
    ...(alsoAt.length > 0 ? { alsoAt } : {}),
    ...(alsoAt[0]
      ? {
          collateral: {
            class: "unhandled-error",
            title: `${alsoAt[0].method} ${alsoAt[0].path} always answers 500`,
            at: alsoAt[0],
          },
        }
      : {}),
    title: vulnerable
      ? {
          "inert-button": "The export button does nothing when clicked",
          "throwing-button": "The export button throws a TypeError when clicked",
          "error-page": "Saving the form ends on a 500 error page",
          "hidden-5xx": "Subscribing fails with a 500 the page never shows",
        }[form as "inert-button"]
      : `The ${noun} tools page has a button that acts`,
    why: {
      feedback: "the click shows a status message",
      redirect: "the form is answered 303 to a confirmation page that answers 200",
      "saved-page": "the form is answered with a confirmation page",
      "fetch-saved": "the request answers 201 and the page says so",
    }[form as "feedback"],
    oracle: pageOracle(path, "brokenSteps", vulnerable),
  });
}

function savedPage(noun: string): string {
  return pageDocument({ title: "Saved", body: `<p>Your ${noun} note is saved.</p>` });
}
