import { execFile } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { browsePages } from "../../src/probes/browser/browse-pages.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import type { TextServer } from "../support/text-server.ts";
import { startTextServer } from "../support/text-server.ts";
import { anonymousPagesContext, generatedBrowserTest } from "./fixture-site.ts";

// Accessibility faults of the frame every page shares (a logo without a text alternative, an icon link
// with no name) and of one page's own content (a picture without one, an unlabelled input). The frame's
// are one finding per rule with the other pages as related places; a page's own are its own finding, and
// its generated test checks its own elements only: fixing the page makes it pass while the frame is broken.

const LOGO = '<header><a href="/home"><img src="/logo.svg" width="40" height="40"></a> Shop</header>';
const ICON = '<footer><a href="/help" class="help-icon"><span aria-hidden="true">?</span></a></footer>';

let ownFixed = false;
const page = (title: string, body: string, frame = true): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${frame ? LOGO : ""}<main><h1>${title}</h1>${body}</main>${frame ? ICON : ""}</body></html>`;
const PAGES: Record<string, () => string> = {
  "/home": () => page("Home", "<p>Welcome.</p>"),
  "/catalog": () =>
    page(
      "Catalog",
      `<p>Our range.</p><img src="/chart.svg" ${ownFixed ? 'alt="Sales by month" ' : ""}width="80" height="40">`,
    ),
  "/search": () =>
    page(
      "Search",
      '<form method="get" action="/search"><input type="text" name="q"> <button>Go</button></form>',
    ),
  "/plain": () =>
    page("Plain", '<p>Alone.</p><img src="/logo.svg" alt="Shop" width="40" height="40">', false),
};
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40"/></svg>';

let server: TextServer;
let context: FakeRunContext;
let candidates: EnvelopeDraft[];

beforeAll(async () => {
  server = await startTextServer((request, _text, response) => {
    const pathname = (request.url ?? "/").split("?")[0] as string;
    if (pathname.endsWith(".svg"))
      return response.writeHead(200, { "content-type": "image/svg+xml" }).end(SVG);
    const body = PAGES[pathname]?.();
    response.writeHead(body ? 200 : 404, { "content-type": "text/html" }).end(body ?? "");
  });
  context = anonymousPagesContext("frame", server.baseUrl, Object.keys(PAGES));
  const answer = await browsePages(context, { max_seconds: 150, checks: ["accessibility"] });
  if (typeof answer === "string") throw new Error(answer);
  candidates = answer.candidates;
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  await server.close();
});

const accessibility = () =>
  candidates
    .filter((draft) => draft.defect_class === "accessibility")
    .map((draft) => ({
      at: draft.location.value,
      rule: draft.dedupe?.discriminator,
      related: (draft.location.related ?? []).map((place) => place.value).sort(),
    }))
    .sort((a, b) => `${a.at} ${a.rule}`.localeCompare(`${b.at} ${b.rule}`));

const generatedTest = (draft: EnvelopeDraft | undefined) => generatedBrowserTest(context, draft, "frame");

function run(file: string): Promise<number> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      ["--test", file],
      { env: { ...process.env, QAAS_BASE_URL: server.baseUrl }, timeout: 60_000 },
      (error) => resolve(error ? (typeof error.code === "number" ? error.code : -1) : 0),
    ),
  );
}

describe("accessibility findings per rule and component", () => {
  it("reports the shared frame's faults once per rule, naming the other pages, and each page's own apart", () => {
    const first = accessibility().find((finding) => finding.rule === "image-alt shared")?.at;
    const others = ["/catalog", "/home", "/search"].filter((template) => template !== first);
    expect(accessibility()).toEqual(
      [
        { at: first, rule: "image-alt shared", related: others },
        { at: first, rule: "link-name shared", related: others },
        { at: "/catalog", rule: "image-alt", related: [] },
        { at: "/search", rule: "label", related: [] },
      ].sort((a, b) => `${a.at} ${a.rule}`.localeCompare(`${b.at} ${b.rule}`)),
    );
  });

  it("names the failing elements with their markup", () => {
    const frame = candidates.find((draft) => draft.dedupe?.discriminator === "image-alt shared");
    const notes = frame?.evidence.map((item) => item.description).join("\n");
    expect(notes).toContain('<img src="/logo.svg"');
    expect(frame?.summary).toContain("frame the pages share");
  });

  it("gives a page's own finding a test that passes once the page is fixed, the frame still broken", async () => {
    const own = generatedTest(
      candidates.find(
        (draft) => draft.location.value === "/catalog" && draft.dedupe?.discriminator === "image-alt",
      ),
    );
    const frame = generatedTest(
      candidates.find((draft) => draft.dedupe?.discriminator === "image-alt shared"),
    );
    try {
      expect([await run(own), await run(frame)]).toEqual([1, 1]);
      ownFixed = true;
      expect([await run(own), await run(frame)]).toEqual([0, 1]);
    } finally {
      ownFixed = false;
      fs.rmSync(own, { force: true });
      fs.rmSync(frame, { force: true });
    }
  }, 120_000);
});
