import { execFile } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { browsePages } from "../../src/probes/browser/browse-pages.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { isOwnAssertion } from "../../src/tools/testing/finding-test.ts";
import { parseTap } from "../../src/tools/testing/test-results.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import type { TextServer } from "../support/text-server.ts";
import { startTextServer } from "../support/text-server.ts";
import { anonymousPagesContext, generatedBrowserTest } from "./fixture-site.ts";

// Overlapped controls and clipped text, in the forms they take in real stylesheets, beside the look-alikes
// that hide or cover on purpose: a custom checkbox over its invisible native input, a modal dialog, a fixed
// banner, a decorative badge that lets clicks through, a link wrapped over two lines, an ellipsis, a line
// clamp, screen-reader-only text, a collapsed panel. Only the faults are reported, each once per page (a frame every page shares,
// once for all of them), with a generated test that fails while the fault is there and passes once fixed.

let fixed = false;

const BRAND = `<header class="site"><a class="brand" href="/home-a" style="display:inline-block;width:70px;white-space:nowrap;overflow:hidden">Northwind Logistics Portal</a></header>`;

const page = (title: string, body: string, head = "", frame = ""): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><style>body{font:16px/1.4 sans-serif;margin:16px}${head}</style></head><body>${frame}<main><h1>${title}</h1>${body}</main></body></html>`;

const PAGES: Record<string, () => string> = {
  // A button pulled on top of its neighbour.
  "/toolbar": () =>
    page(
      "Toolbar",
      `<div class="bar"><button type="button" class="print">Print the list</button><button type="button" class="export">Export</button></div>`,
      fixed
        ? ".bar{display:flex;gap:8px}"
        : ".bar{position:relative}.export{position:absolute;left:20px;top:0}",
    ),
  // Fine at desktop; at phone width a notice is pulled up over the button.
  "/phone-only": () =>
    page(
      "Orders",
      `<p><button type="button" class="save">Save the order</button></p><p class="notice">Saved orders are kept for thirty days.</p>`,
      fixed ? "" : "@media (max-width: 600px){.notice{margin-top:-40px;position:relative;background:#fff}}",
    ),
  // A fixed-width label cut mid-word.
  "/badge": () =>
    page(
      "Badge",
      `<p><span class="tag">Awaiting customer approval</span></p><p><button type="button" class="go"><span>Download the quarterly report</span></button></p>`,
      `.tag,.go{display:inline-block;${fixed ? "" : "width:90px;"}white-space:nowrap;overflow:hidden;border:1px solid #333;padding:2px 4px}`,
    ),
  // A one-line box whose text wraps onto lines it hides.
  "/summary": () =>
    page(
      "Summary",
      `<div class="card"><p class="lead">Shipments leave the warehouse every weekday morning and reach most cities within two working days of dispatch.</p></div>`,
      `.card{width:260px}.lead{margin:0;${fixed ? "" : "height:1.4em;"}overflow:hidden}`,
    ),
  // Look-alikes.
  "/checkbox": () =>
    page(
      "Preferences",
      `<p class="pick"><input type="checkbox" id="news"><label for="news">Send me the newsletter</label></p>`,
      ".pick{position:relative}.pick input{position:absolute;left:0;top:0;width:20px;height:20px;margin:0}.pick label{position:relative;padding-left:28px;display:inline-block;background:#fff;z-index:1}",
    ),
  "/dialog": () =>
    page(
      "Dialog",
      `<button type="button">Open the archive</button><div role="dialog" aria-modal="true" aria-label="Notice" class="modal"><p>Read this first.</p><button type="button">Close</button></div><div class="cookies">We use a cookie to keep you signed in. <button type="button">Accept</button></div>`,
      ".modal{position:fixed;inset:0;background:#fff}.cookies{position:fixed;left:0;right:0;bottom:0;background:#eee}",
    ),
  "/decorated": () =>
    page(
      "Decorated",
      `<p class="wrap"><button type="button">Inbox</button><span class="dot" aria-hidden="true">3</span></p>`,
      ".wrap{position:relative;display:inline-block}.dot{position:absolute;left:10px;top:0;pointer-events:none;background:#c00;color:#fff;border-radius:8px;padding:0 4px}",
    ),
  "/truncated": () =>
    page(
      "Truncated",
      `<p class="name" title="Awaiting customer approval">Awaiting customer approval</p><p class="clamp">Shipments leave the warehouse every weekday morning and reach most cities within two working days of dispatch, and the rest within four.</p><a href="/truncated"><span class="sr">Go to </span>Truncated</a><p class="narrow">Read the <a href="/truncated">guide to shipping rates for every region of the country</a> first.</p><div class="panel"><p>${"A line of the collapsed history. ".repeat(40)}</p></div>`,
      ".name{width:90px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}.clamp{width:260px;display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2;overflow:hidden}.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}.panel{height:12em;overflow:hidden}.narrow{width:200px}",
    ),
  // The same clipped brand in the frame of two pages.
  "/home-a": () => page("Home", "<p>Welcome.</p>", "", BRAND),
  "/home-b": () => page("Help", "<p>Ask us.</p>", "", BRAND),
};

let server: TextServer;
let context: FakeRunContext;
let candidates: EnvelopeDraft[];

beforeAll(async () => {
  server = await startTextServer((request, _text, response) => {
    const render = PAGES[(request.url ?? "/").split("?")[0] as string];
    response.writeHead(render ? 200 : 404, { "content-type": "text/html" }).end(render ? render() : "");
  });
  context = anonymousPagesContext("layout", server.baseUrl, Object.keys(PAGES));
  const answer = await browsePages(context, { max_seconds: 150, checks: ["layout"] });
  if (typeof answer === "string") throw new Error(answer);
  candidates = answer.candidates;
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  await server.close();
});

const found = () =>
  candidates
    .map((draft) => ({
      at: draft.location.value,
      fault: draft.dedupe?.discriminator,
      related: (draft.location.related ?? []).map((place) => place.value),
    }))
    .sort((a, b) => `${a.at} ${a.fault}`.localeCompare(`${b.at} ${b.fault}`));

function draftAt(at: string): EnvelopeDraft {
  const draft = candidates.find((candidate) => candidate.location.value === at);
  if (!draft) throw new Error(`no finding at ${at}`);
  return draft;
}

function run(file: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      ["--test", "--test-reporter=tap", file],
      { env: { ...process.env, QAAS_BASE_URL: server.baseUrl }, timeout: 60_000 },
      (error, stdout) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout }),
    ),
  );
}

describe("layout faults", () => {
  it("reports covered controls and cut-off text, once per page or shared frame, and none of the look-alikes", () => {
    // Whichever of the two pages was opened first carries the frame's fault.
    const home = candidates.find((draft) => draft.dedupe?.discriminator === "clipped a.brand")?.location
      .value;
    const other = home === "/home-a" ? "/home-b" : "/home-a";
    expect(found()).toEqual(
      [
        { at: "/badge", fault: "clipped button.go", related: [] },
        { at: "/badge", fault: "clipped span.tag", related: [] },
        { at: "/phone-only", fault: "overlap button.save under p.notice", related: [] },
        { at: "/summary", fault: "clipped p.lead", related: [] },
        { at: "/toolbar", fault: "overlap button.print under button.export", related: [] },
        { at: home, fault: "clipped a.brand", related: [other] },
      ].sort((a, b) => `${a.at} ${a.fault}`.localeCompare(`${b.at} ${b.fault}`)),
    );
  });

  it("says where a click lands and how far text runs past its box, and at which width", () => {
    const toolbar = draftAt("/toolbar");
    expect(toolbar.defect_class).toBe("visual-defect");
    expect(toolbar.summary).toContain('"Print the list"');
    expect(toolbar.summary).toMatch(/lands on button\.export "Export"/);
    expect(draftAt("/phone-only").title).toContain("mobile width");
    expect(draftAt("/badge").summary).toMatch(/runs \d+px past the right edge of its \d+×\d+px box/);
    expect(draftAt("/summary").summary).toMatch(/runs \d+px below its \d+×\d+px box/);
  });

  it("gives each a test that fails on its own assertion while the fault is there and passes once fixed", async () => {
    const files = ["/toolbar", "/phone-only", "/badge", "/summary"].map((at) =>
      generatedBrowserTest(context, draftAt(at), "layout"),
    );
    try {
      for (const file of files) {
        const { code, stdout } = await run(file);
        expect(code, file).toBe(1);
        const failure = parseTap(stdout).find((entry) => !entry.passed);
        expect(isOwnAssertion(failure?.message, fs.readFileSync(file, "utf8")), file).toBe(true);
      }
      fixed = true;
      for (const file of files) expect((await run(file)).code, file).toBe(0);
    } finally {
      fixed = false;
      for (const file of files) fs.rmSync(file, { force: true });
    }
  }, 180_000);
});
