import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { guideTools } from "../../src/tools/servers/guide-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { type FixtureServer, SOURCE_TEMPLATES, startShop } from "./navigation-fixture.ts";

// check_navigation against a small shop: what a person reaches by clicking from the entry (script-built
// menus included) against the pages the application serves. Each defect has a safe look-alike next to it.

let shop: FixtureServer;
let context: FakeRunContext;
let candidates: EnvelopeDraft[];
let stats: Record<string, unknown>;

beforeAll(async () => {
  shop = await startShop();
  const document = { openapi: "3.0.3", info: { title: "shop", version: "1" }, paths: {} };
  const map = systemMapFor({
    target: "shop",
    baseUrl: shop.baseUrl,
    document,
    extraOperations: SOURCE_TEMPLATES.map((template) => undocumented("GET", template)),
    pages: [{ path: "/invoices/6", status: 200, links: [], forms: [], roles: ["anonymous"] }],
  });
  const profile = profileFor({
    name: "shop",
    source: {},
    environment: { mode: "external", base_url: shop.baseUrl },
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
  const tool = guideTools.find((each) => each.name === "check_navigation");
  if (!tool) throw new Error("check_navigation is missing");
  const answer = await tool.run(tool.input.parse({ max_seconds: 120 }), context);
  if (!answer.ok) throw new Error(answer.error);
  ({ candidates, stats } = answer.data as { candidates: EnvelopeDraft[]; stats: Record<string, unknown> });
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  await shop.close();
});

function flagged(defectClass: string): string[] {
  return candidates
    .filter((draft) => draft.defect_class === defectClass)
    .map((draft) => draft.location.value)
    .sort();
}

function skippedFor(check: string, reason: string): string[] {
  const outcome = stats[check] as { skipped: Record<string, string[]> };
  return outcome.skipped[reason] ?? [];
}

describe("check_navigation: undiscoverable-feature", () => {
  it("walks the rendered UI: the menu a script builds counts as a way to its page", () => {
    expect(stats.rendered).toBe(true);
    expect(skippedFor("undiscoverable", "linked from a reachable page")).toContain("/reports");
  });

  it("flags pages served when typed that nothing reachable links to or mentions", () => {
    expect(flagged("undiscoverable-feature")).toEqual(["/archive", "/products/{id}/history"]);
  });

  it("leaves alone a page a form post redirects to, an API route, sign-in, and a page a script mentions", () => {
    expect(skippedFor("undiscoverable", "may be where a form submission redirects")).toContain(
      "/feedback/thanks",
    );
    const notFeatures = skippedFor(
      "undiscoverable",
      "not a feature page (API, sign-in, health, file or email-reached path)",
    );
    expect(notFeatures).toEqual(expect.arrayContaining(["/api/stats", "/login"]));
    expect(skippedFor("undiscoverable", "mentioned in a reachable page or the scripts it loads")).toContain(
      "/settings/advanced",
    );
    expect(skippedFor("undiscoverable", "parameters no crawled link fills")).toContain(
      "/admin/{tenant}/audit",
    );
  });

  it("fills a template with an id from crawled links and carries replayable evidence", () => {
    const history = candidates.find((draft) => draft.location.value === "/products/{id}/history");
    expect(history?.domain).toBe("usability");
    expect(history?.location.kind).toBe("page");
    expect(history?.reproduction.curl).toMatch(/\/products\/\d\/history/);
    expect(history?.confidence).toBeGreaterThanOrEqual(0.6);
    expect(history?.confidence).toBeLessThanOrEqual(0.85);
    const facts = history?.evidence.find((item) => item.description.startsWith("what was examined"));
    const file = path.join(context.artifactsDir, (facts?.uri ?? "").replace(/^artifact:\/\/[^/]+\//, ""));
    const searched = JSON.parse(fs.readFileSync(file, "utf8")) as {
      searched_pages: Array<{ pages: Array<{ path: string }> }>;
    };
    expect(searched.searched_pages[0]?.pages.map((page) => page.path)).toContain("/products");
    expect(history?.evidence.some((item) => item.description.startsWith("screenshot"))).toBe(true);
  });

  it("never submits a form while walking", () => {
    expect(shop.requests.filter((request) => request.startsWith("POST"))).toEqual([]);
  });
});

describe("check_navigation: dead-end", () => {
  it("flags a reached page with no way on, confirmed on a second page of its template", () => {
    expect(flagged("dead-end")).toEqual(["/invoices/{id}", "/receipts/{id}"]);
    const receipt = candidates.find((draft) => draft.location.value === "/receipts/{id}");
    expect(receipt?.summary).toMatch(/a second page of the same template, \/receipts\/\d/);
  });

  it("confirms on a second record's page the walk did not open, known from the crawl", () => {
    const invoice = candidates.find((draft) => draft.location.value === "/invoices/{id}");
    expect(invoice?.summary).toMatch(/a second page of the same template, \/invoices\/6/);
    expect(invoice?.confidence).toBe(0.75);
  });

  it("does not flag a print page with a back link nor a page whose button goes back", () => {
    const deadEnds = flagged("dead-end");
    expect(deadEnds).not.toContain("/products/{id}/print");
    expect(deadEnds).not.toContain("/notices/{id}");
  });

  it("does not flag a bare page that is only ever opened in a new tab", () => {
    expect(flagged("dead-end")).not.toContain("/labels/{id}");
    const outcome = stats.dead_end as { skipped: Record<string, string[]> };
    expect(outcome.skipped["opened in a new tab or a frame only"]).toContain("/labels/{id}");
  });
});
