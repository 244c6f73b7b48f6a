import { afterAll, beforeAll, describe, expect, it } from "vitest";
import browser from "../../src/agents/playbooks/browser.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { browserTools } from "../../src/tools/servers/browser-server.ts";
import { envelopeTools } from "../../src/tools/servers/envelope-server.ts";
import { profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { fakeRunContext, runPlaybookDirectly, testAgent } from "../support/fake-run-context.ts";
import type { FixtureSite } from "./fixture-site.ts";
import { startFixtureSite } from "./fixture-site.ts";

// The builtin BROWSER playbook: read the map, browse its pages once, emit what browse_pages confirmed.

let site: FixtureSite;
const contexts: FakeRunContext[] = [];
beforeAll(async () => {
  site = await startFixtureSite();
});
afterAll(async () => {
  for (const context of contexts) await closeRunServices(context);
  await site.close();
});

function browserContext(withMap: boolean): FakeRunContext {
  const profile = profileFor({
    name: "site",
    source: {},
    environment: { mode: "external", base_url: site.baseUrl },
  });
  const map = systemMapFor({
    target: "site",
    baseUrl: site.baseUrl,
    document: { openapi: "3.0.0", paths: {} },
    pages: ["/console-bad", "/console-ok", "/a11y-ok"].map((path) => ({
      path,
      links: [],
      forms: [],
      roles: ["anonymous"],
    })),
  });
  const context = fakeRunContext({
    target: { profile, file: "/tmp/profile.yaml", root: undefined, goldenLedger: undefined },
    ...(withMap ? { systemMap: map } : {}),
    agent: testAgent({ name: "BROWSER" }),
  });
  contexts.push(context);
  return context;
}

describe("the BROWSER playbook", () => {
  it("browses the mapped pages and emits exactly the confirmed findings", async () => {
    const context = browserContext(true);
    const calls = await runPlaybookDirectly(browser, [...browserTools, ...envelopeTools], context);
    const made = calls
      .filter((call) => call.tool !== "emit_envelope")
      .map((call) => [call.tool, call.result.ok]);
    expect(made[0]).toEqual(["get_system_map", true]);
    // The two short passes side by side, in either order, then the page checks.
    expect(made.slice(1, 3).sort()).toEqual([
      ["probe_dom_xss", true],
      // The fixture target does not allow writes: no journey is submitted.
      ["submit_forms", false],
    ]);
    expect(made.slice(3)).toEqual([["browse_pages", true]]);
    expect(
      context
        .readEnvelopes()
        .map(
          (envelope) =>
            `${envelope.domain} ${envelope.defect_class} ${envelope.location.value} ${envelope.discovered_by}`,
        )
        .sort(),
    ).toEqual(["ui console-error /console-bad BROWSER", "ui console-error /console-bad BROWSER"]);
  }, 120_000);

  it("stops without browsing when no map is pinned", async () => {
    const context = browserContext(false);
    const calls = await runPlaybookDirectly(browser, [...browserTools, ...envelopeTools], context);
    expect(calls.map((call) => call.tool)).toEqual(["get_system_map"]);
  });
});
