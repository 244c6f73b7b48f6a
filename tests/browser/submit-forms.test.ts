import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import type { Page } from "../../src/map/system-map.ts";
import { updatesExisting } from "../../src/probes/browser/form-journey.ts";
import { type SubmitFormsOptions, submitForms } from "../../src/probes/browser/submit-forms.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { anonymousPagesContext } from "./fixture-site.ts";

// Form journeys over a site where each outcome has a defective form and a safe look-alike: a success
// message over a failed request, an honest error, a 500 page, a working create, an update of an existing
// record (refused before it leaves the browser), a sign-in form (never submitted) and a submit that does
// nothing.

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

const jsForm = (method: string, url: string, onDone: string): string => `
<form id="f"><label for="message">Message</label><textarea id="message" name="message" required></textarea>
<label for="email">Email</label><input id="email" name="email" type="email" required>
<button type="submit">Send</button></form><p id="status"></p>
<script>
document.getElementById("f").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch(${JSON.stringify(url)}, { method: ${JSON.stringify(method)}, headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: document.getElementById("message").value, email: document.getElementById("email").value }) });
  const status = document.getElementById("status");
  ${onDone}
});
</script>`;

const unnamedForm = (url: string, onDone: string): string => `
<form id="u"><label for="handle">Handle</label> <input id="handle" value="main"> <button type="submit">Save</button></form>
<p id="status" role="status"></p>
<script>
document.getElementById("u").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch(${JSON.stringify(url)}, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ handle: document.getElementById("handle").value }) });
  const status = document.getElementById("status");
  ${onDone}
});
</script>`;

const PAGES: Record<string, string> = {
  // The handler announces success whatever the answer (the endpoint does not exist).
  "/feedback": page(
    "Feedback",
    jsForm("POST", "/api/feedback", `status.textContent = "Thanks! Your message was sent.";`),
  ),
  // The same form, honest about the failure.
  "/contact": page(
    "Contact",
    jsForm(
      "POST",
      "/api/contact",
      `status.textContent = response.ok ? "Thanks! Your message was sent." : "Could not send: " + (await response.json()).message;`,
    ),
  ),
  "/notes/new": page(
    "New note",
    `<form method="post" action="/notes"><label>Title <input name="title" required maxlength="40"></label><button>Create note</button></form>`,
  ),
  "/orders/new": page(
    "New order",
    `<form method="post" action="/orders"><label>Quantity <input name="quantity" type="number" min="1" max="5" required></label><label>Deliver on <input name="date" type="date" required></label><button>Place</button></form>`,
  ),
  "/profiles/5/edit": page("Edit profile", jsForm("PUT", "/api/profiles/5", `status.textContent = "Saved";`)),
  "/sign-in": page(
    "Sign in",
    `<form method="post" action="/session"><input name="user"><input name="password" type="password"><button>Go</button></form>`,
  ),
  // Script-driven forms whose fields carry an id and no name, as controlled inputs of SPA frameworks do.
  "/handles": page("Handles", unnamedForm("/api/handles", `status.textContent = "Saved.";`)),
  "/handles-honest": page(
    "Handles honest",
    unnamedForm(
      "/api/handles",
      `status.textContent = response.ok ? "Saved." : "Not saved: " + (await response.json()).message;`,
    ),
  ),
  "/digest": page("Digest", unnamedForm("/api/digest", "")),
  // A handler that keeps the page busy past the click's bound after it sent its request.
  "/slow-submit": page(
    "Slow submit",
    `<form id="s"><label>Topic <input name="topic" required></label><button>Save</button></form><p id="status"></p><script>document.getElementById("s").addEventListener("submit", (event) => { event.preventDefault(); fetch("/api/slow", { method: "POST", body: "topic=1" }).then(() => { document.getElementById("status").textContent = "Saved."; }); const until = Date.now() + 4000; while (Date.now() < until) {} });</script>`,
  ),
  "/newsletter": page(
    "Newsletter",
    `<form id="n"><label>Email <input name="email" type="email" required></label><button>Subscribe</button></form><script>document.getElementById("n").addEventListener("submit", (event) => event.preventDefault());</script>`,
  ),
};

// The same defect as /feedback, but the copy served right after its first submission has a handler that
// swallows the submit: the confirming journey sees nothing happen, as when its click is lost on a busy
// machine, and a third journey decides.
let surveyPosts = 0;
let surveyLostOnce = false;
const surveyPage = (): string => {
  if (surveyPosts === 1 && !surveyLostOnce) {
    surveyLostOnce = true;
    return page(
      "Survey",
      `<form id="f"><label for="email">Email</label><input id="email" name="email" type="email" required><button type="submit">Send</button></form><script>document.getElementById("f").addEventListener("submit", (event) => event.preventDefault());</script>`,
    );
  }
  return page(
    "Survey",
    jsForm("POST", "/api/survey", `status.textContent = "Thanks! Your answers were sent.";`),
  );
};

// Served, but only in the maps of the tests with little time.
const MANY_FORMS = page(
  "Many forms",
  ["A", "B", "C"]
    .map(
      (name) =>
        `<form method="post" action="/saved"><h2>Form ${name}</h2><label>Name <input name="name" required></label><button>Save ${name}</button></form>`,
    )
    .join(""),
);

// A form whose token is renewed on every page load: journeys side by side spoil each other's tokens.
let latestToken = "";
const onceForm = (token: string, name: string): string =>
  page(
    `Once ${name}`,
    `<form method="post" action="/once-save"><input type="hidden" name="token" value="${token}"><label>Note <input name="note" required></label><button>Save</button></form>`,
  );

let server: http.Server;
let baseUrl: string;
const writes: string[] = [];
let context: FakeRunContext;
let candidates: EnvelopeDraft[];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = request.url ?? "/";
    const html = (status: number, body: string) =>
      response.writeHead(status, { "content-type": "text/html" }).end(body);
    if (request.method !== "GET") {
      writes.push(`${request.method} ${url}`);
      request.resume();
      if (url === "/api/survey") surveyPosts += 1;
      if (url === "/api/contact")
        return void response
          .writeHead(422, { "content-type": "application/json" })
          .end(JSON.stringify({ message: "the mail relay is down" }));
      if (url === "/notes") return html(500, page("Internal Server Error", "<p>Traceback: boom</p>"));
      if (url === "/api/handles")
        return void response
          .writeHead(409, { "content-type": "application/json" })
          .end(JSON.stringify({ message: "that handle is already taken" }));
      if (url === "/api/digest")
        return void response
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ message: "mailer down" }));
      if (url === "/once-save") {
        // Only the token of the latest page load is valid, as with per-request anti-forgery tokens; a stale
        // one makes this application fail outright, as one whose token check throws.
        let posted = "";
        request.on("data", (chunk: Buffer) => {
          posted += chunk.toString();
        });
        return void request.on("end", () => {
          const valid = new URLSearchParams(posted).get("token") === latestToken;
          if (valid) response.writeHead(303, { location: "/orders/ok" }).end();
          else html(500, "<!doctype html><title>Error</title><h1>Internal Server Error</h1>");
        });
      }
      if (url === "/api/slow") return void response.writeHead(201).end();
      if (url === "/orders" || url === "/saved")
        return void response.writeHead(303, { location: "/orders/ok" }).end();
      return html(404, page("Not found", ""));
    }
    if (url === "/orders/ok") return html(200, page("Order placed", "<p>Your order was placed.</p>"));
    if (/^\/once\d$/.test(url)) {
      latestToken = `t${Math.random().toString(36).slice(2)}`;
      return html(200, onceForm(latestToken, url.slice(-1)));
    }
    if (url === "/survey") return html(200, surveyPage());
    const body = url === "/many" ? MANY_FORMS : PAGES[url.split("?")[0] as string];
    return body ? html(200, body) : html(404, page("Not found", ""));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  context = anonymousPagesContext("forms", baseUrl, [...Object.keys(PAGES), "/survey"], {
    allowWrites: true,
  });
  const answer = await submitForms(context, { max_seconds: 150 });
  if (typeof answer === "string") throw new Error(answer);
  candidates = answer.candidates;
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const found = (): string[] =>
  candidates.map((draft) => `${draft.domain}/${draft.defect_class} ${draft.location.value}`).sort();

describe("submit_forms", () => {
  it("flags a success message over a failed request, a 500 behind a form and a submit that does nothing — nothing else, fields named or not", () => {
    expect(found()).toEqual([
      "ui/broken-journey /digest",
      "ui/broken-journey /newsletter",
      "ui/broken-journey /notes/new",
      "usability/misleading-copy /feedback",
      "usability/misleading-copy /handles",
      "usability/misleading-copy /survey",
    ]);
  });

  it("asks a third journey when the confirming one saw nothing happen after a first that sent its request", () => {
    expect(surveyLostOnce).toBe(true);
    expect(writes.filter((write) => write === "POST /api/survey")).toHaveLength(2);
  });

  it("confirms each on a second journey with fresh values, and keeps the request as replayable evidence", () => {
    expect(writes.filter((write) => write === "POST /api/feedback")).toHaveLength(2);
    const copy = candidates.find((draft) => draft.defect_class === "misleading-copy") as EnvelopeDraft;
    expect(copy.summary).toContain("Thanks! Your message was sent.");
    expect(copy.summary).toContain("404");
    expect(copy.reproduction.test?.command).toMatch(/node --test/);
    expect(copy.evidence.some((item) => item.kind === "exchange")).toBe(true);
  });

  it("submits a form once when its click outlasts the bound after the handler sent the request", () => {
    expect(writes.filter((write) => write === "POST /api/slow")).toHaveLength(1);
  });

  it("never sends an update of a record it did not create, nor a sign-in form", () => {
    expect(writes.some((write) => write.startsWith("PUT "))).toBe(false);
    expect(writes.some((write) => write.includes("/session"))).toBe(false);
    expect(writes.filter((write) => write === "POST /orders").length).toBe(1);
  });

  it("tells updates of existing records from creations", () => {
    expect(updatesExisting("PATCH", "http://x/api/tasks")).toBe(true);
    expect(updatesExisting("POST", "http://x/api/users/42")).toBe(true);
    expect(updatesExisting("POST", "http://x/api/tasks/42/comments")).toBe(false);
    expect(updatesExisting("POST", "http://x/api/projects")).toBe(false);
  });
});

describe("submit_forms on a target that does not allow writes", () => {
  it("submits nothing and says why", async () => {
    const readOnly = probeContext({
      profile: profileFor({ name: "ro", source: {}, environment: { mode: "external", base_url: baseUrl } }),
      map: systemMapFor({ target: "ro", baseUrl, document: { openapi: "3.0.0", paths: {} } }),
      agent: "BROWSER",
    });
    const before = writes.length;
    expect(await submitForms(readOnly, {})).toMatch(/does not allow writes/);
    expect(writes.length).toBe(before);
  });
});

const formPage = (path: string, hasForm: boolean): Page => ({
  path,
  status: 200,
  links: [],
  forms: hasForm ? [{ action: path, method: "POST", fields: ["name"], scripted: false }] : [],
  roles: ["anonymous"],
});

async function hurriedRun(pages: Page[], options: SubmitFormsOptions) {
  const hurried = probeContext({
    profile: profileFor({
      name: "hurried",
      source: {},
      environment: { mode: "external", base_url: baseUrl, allow_writes: true },
    }),
    map: systemMapFor({ target: "hurried", baseUrl, document: { openapi: "3.0.0", paths: {} }, pages }),
    agent: "BROWSER",
  });
  try {
    const answer = await submitForms(hurried, options);
    if (typeof answer === "string") throw new Error(answer);
    return answer;
  } finally {
    await closeRunServices(hurried);
  }
}

describe("submit_forms with little time", () => {
  it("opens the pages the map saw a form on before the others", async () => {
    // Listed last and the only one with a form in the map: with one journey allowed, it is the one tried.
    const pages = ["/handles", "/digest", "/newsletter"].map((path) => formPage(path, false));
    const answer = await hurriedRun([...pages, formPage("/notes/new", true)], { max_forms: 1, at_once: 1 });
    expect(answer.stats).toMatchObject({ pages_opened: 1, pages_left: 3, forms_tried: 1 });
    expect(answer.candidates.map((draft) => draft.location.value)).toEqual(["/notes/new"]);
  }, 90_000);

  it("tries a page's first two forms, then the next page's, before the rest of the first", async () => {
    const answer = await hurriedRun([formPage("/many", true), formPage("/notes/new", true)], {
      max_forms: 3,
      at_once: 1,
    });
    expect((answer.stats.tried as Array<{ form: string }>).map((entry) => entry.form)).toEqual([
      "Form A",
      "Form B",
      "New note",
    ]);
    expect(answer.stats).toMatchObject({ forms_left: 1 });
  }, 90_000);

  it("confirms a failure alone, so journeys side by side never report each other's spoiled tokens", async () => {
    const answer = await hurriedRun(
      ["/once1", "/once2", "/once3"].map((path) => formPage(path, true)),
      { max_seconds: 120 },
    );
    expect(answer.stats).toMatchObject({ forms_tried: 3 });
    expect(answer.candidates).toEqual([]);
  }, 150_000);

  it("runs journeys side by side and still answers in page order", async () => {
    const answer = await hurriedRun(
      ["/feedback", "/notes/new", "/digest", "/many"].map((path) => formPage(path, true)),
      { max_seconds: 120 },
    );
    expect(answer.candidates.map((draft) => draft.location.value)).toEqual([
      "/feedback",
      "/notes/new",
      "/digest",
    ]);
    expect(answer.stats).toMatchObject({ forms_tried: 6, forms_left: 0 });
  }, 150_000);
});
