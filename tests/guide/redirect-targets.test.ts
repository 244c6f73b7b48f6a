import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { checkNavigation } from "../../src/probes/guide/check-navigation.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";

// A page people reach only after submitting a form elsewhere (`POST /signup` → `/welcome`): the walk never
// submits, so the source's redirect is what shows the way there. A page no code leads to is still flagged.

const SOURCE = `
app.post("/signup", (req, res) => {
  createAccount(req.body);
  res.redirect(303, "/welcome");
});
app.get("/welcome", (req, res) => res.render("welcome"));
app.get("/changelog", (req, res) => res.render("changelog"));
app.get("/ledger", (req, res) => res.render("ledger"));
const ledgerForm = '<form data-api="POST /api/entries" data-redirect="/ledger">';
`;

// A test that navigates to a page says nothing about how people reach it.
const TEST_SOURCE = `it("opens the ledger", () => router.push("/ledger"));`;

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a> <a href="/join">Join</a></nav>${body}</body></html>`;
}

let server: http.Server;
let root: string;
let context: FakeRunContext;
let candidates: EnvelopeDraft[];
let skipped: Record<string, string[]>;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "guide-source-"));
  fs.writeFileSync(path.join(root, "server.js"), SOURCE);
  fs.mkdirSync(path.join(root, "tests"));
  fs.writeFileSync(path.join(root, "tests", "pages.test.js"), TEST_SOURCE);
  server = http.createServer((request, response) => {
    const pages: Record<string, string> = {
      "/": page("Home", "<h1>Home</h1>"),
      "/join": page(
        "Join",
        `<form method="post" action="/accounts"><input name="email"><button>Join</button></form>`,
      ),
      "/welcome": page("Welcome", "<h1>Welcome aboard</h1>"),
      "/changelog": page("Changes", "<h1>What changed</h1>"),
      // The page's own form comes back to it after saving: no way in from anywhere else.
      "/ledger": page(
        "Ledger",
        `<form data-api="POST /api/entries" data-redirect="/ledger"><input name="hours"><button>Save</button></form>`,
      ),
    };
    const body = pages[(request.url ?? "/").split("?")[0] as string];
    if (!body)
      return void response.writeHead(404, { "content-type": "text/html" }).end(page("Not found", ""));
    response.writeHead(200, { "content-type": "text/html" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const map = systemMapFor({
    target: "join",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "join", version: "1" }, paths: {} },
    extraOperations: ["/", "/join", "/welcome", "/changelog", "/ledger"].map((each) =>
      undocumented("GET", each),
    ),
  });
  const profile = profileFor({
    name: "join",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  context = probeContext({ profile, map, root, agent: "GUIDE" });
  const outcome = await checkNavigation(context, { max_seconds: 60 });
  if (typeof outcome === "string") throw new Error(outcome);
  candidates = outcome.candidates;
  skipped = (outcome.stats.undiscoverable as { skipped: Record<string, string[]> }).skipped;
}, 120_000);

afterAll(async () => {
  await closeRunServices(context);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(root, { recursive: true, force: true });
});

describe("pages reached after a form submission", () => {
  it("leaves alone a page the source redirects to after a post, and flags those nothing leads to", () => {
    expect(skipped["the source redirects or navigates there (reached after an action)"]).toEqual([
      "/welcome",
    ]);
    expect(
      candidates
        .filter((draft) => draft.defect_class === "undiscoverable-feature")
        .map((draft) => draft.location.value),
    ).toEqual(["/changelog", "/ledger"]);
  });
});
