import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { checkNavigation } from "../../src/probes/guide/check-navigation.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { type FixtureServer, SOURCE_TEMPLATES, startShop } from "./navigation-fixture.ts";

// With no Chromium, check_navigation falls back to the HTML crawl: it says so, still judges undiscoverable
// pages on served links and the mention signal, and does not judge dead ends at all (only the rendered
// page tells whether a script offers a way on).

let shop: FixtureServer;
let context: FakeRunContext;
let candidates: EnvelopeDraft[];
let stats: Record<string, unknown>;
const previous = process.env.QAAS_CHROMIUM;

beforeAll(async () => {
  process.env.QAAS_CHROMIUM = "/nonexistent/chromium";
  shop = await startShop();
  const map = systemMapFor({
    target: "shop",
    baseUrl: shop.baseUrl,
    document: { openapi: "3.0.3", info: { title: "shop", version: "1" }, paths: {} },
    extraOperations: SOURCE_TEMPLATES.map((template) => undocumented("GET", template)),
  });
  const profile = profileFor({
    name: "shop",
    source: {},
    environment: { mode: "external", base_url: shop.baseUrl },
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
  const outcome = await checkNavigation(context, { max_seconds: 60 });
  if (typeof outcome === "string") throw new Error(outcome);
  ({ candidates, stats } = outcome);
}, 120_000);

afterAll(async () => {
  if (previous === undefined) delete process.env.QAAS_CHROMIUM;
  else process.env.QAAS_CHROMIUM = previous;
  await closeRunServices(context);
  await shop.close();
});

describe("check_navigation without a browser", () => {
  it("says the walk was not rendered and why, and judges no dead end", () => {
    expect(stats.rendered).toBe(false);
    expect(String(stats.browser_error)).toMatch(/QAAS_CHROMIUM/);
    expect((stats.dead_end as { ran: boolean }).ran).toBe(false);
    expect(candidates.filter((draft) => draft.defect_class === "dead-end")).toEqual([]);
  });

  it("still flags unlinked, unmentioned pages, with lower confidence, and spares the mentioned one", () => {
    const found = candidates.filter((draft) => draft.defect_class === "undiscoverable-feature");
    expect(found.map((draft) => draft.location.value)).toEqual(
      expect.arrayContaining(["/archive", "/products/{id}/history"]),
    );
    expect(found.every((draft) => draft.confidence <= 0.65)).toBe(true);
    const skipped = (stats.undiscoverable as { skipped: Record<string, string[]> }).skipped;
    expect(skipped["mentioned in a reachable page or the scripts it loads"]).toContain("/settings/advanced");
  });
});
