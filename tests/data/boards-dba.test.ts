import { afterAll, beforeAll, describe, expect, it } from "vitest";
import dbaPlaybook from "../../src/agents/playbooks/dba.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { boardsMap } from "../load/fixtures/boards-map.ts";
import { fixtureTarget, type RunningApp, startApp } from "../load/fixtures/fixture-target.ts";
import { findingKeys, playbookTools } from "../load/fixtures/playbook-tools.ts";
import { fakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("boards");
});
afterAll(async () => {
  await app?.stop();
});

describe("DBA on nested resources", () => {
  it("debug", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: boardsMap(app) });
    const { tools, emitted } = playbookTools();
    const calls = await runPlaybookDirectly(dbaPlaybook, [...dbTools, ...tools], context);
    console.log(JSON.stringify(calls.map((c) => [c.tool, JSON.stringify(c).slice(0, 3000)]), null, 1));
    console.log(findingKeys(emitted));
    expect(emitted.length).toBeGreaterThanOrEqual(0);
  }, 60_000);
});
