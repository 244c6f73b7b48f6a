import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import auditorPlaybook from "../../src/agents/playbooks/auditor.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { authzTools } from "../../src/tools/servers/authz-server.ts";
import { depsTools } from "../../src/tools/servers/deps-server.ts";
import { httpTools } from "../../src/tools/servers/http-server.ts";
import { securityTools } from "../../src/tools/servers/security-server.ts";
import { fakeEngineTools } from "../fixtures/fake-engine.ts";
import type { InventoryServer } from "../fixtures/inventory-server.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { inventoryTarget, summarize } from "../fixtures/targets.ts";
import { runPlaybookDirectly } from "../support/fake-run-context.ts";

let inventory: FixtureTarget<InventoryServer>;

beforeAll(async () => {
  inventory = await inventoryTarget();
});
afterAll(async () => {
  await inventory.server.close();
});

describe("AUDITOR playbook (builtin seat)", () => {
  it("runs every security probe and the dependency audit, emitting each distinct finding once", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-auditor-root-"));
    fs.writeFileSync(path.join(root, "requirements.txt"), "requests==2.30.0\nwerkzeug==3.0.3\n");
    const emitted: EnvelopeDraft[] = [];
    const context = inventory.context({ agent: "AUDITOR", root });
    const calls = await runPlaybookDirectly(
      auditorPlaybook,
      [
        ...httpTools,
        ...authzTools,
        ...securityTools,
        ...depsTools,
        ...fakeEngineTools(inventory.map, emitted),
      ],
      context,
    );
    expect(calls.filter((call) => !call.result.ok).map((call) => call.tool)).toEqual([]);
    expect(summarize(emitted)).toEqual([
      // The session is a cookie without SameSite and the create parses JSON sent as text/plain.
      "csrf POST /api/items [csrf-text-plain-json]",
      "injection GET /api/products/{productId} [path:productId]",
      "misconfiguration GET /api/admin/users [cors]",
      "missing-authentication GET /api/reports",
      "missing-authentication POST /api/feedback [create]",
      "missing-authorization GET /api/admin/users",
      "vulnerable-dependency requests@2.30.0",
    ]);
  });

  it("audits dependencies even when there is no live target", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-auditor-static-"));
    fs.writeFileSync(path.join(root, "requirements.txt"), "pyyaml==5.3\n");
    const emitted: EnvelopeDraft[] = [];
    const context = inventory.context({ agent: "AUDITOR", root });
    context.setSystemMap(undefined);
    const tools = [
      ...httpTools,
      ...authzTools,
      ...securityTools,
      ...depsTools,
      ...fakeEngineTools(inventory.map, emitted),
    ].filter((tool) => tool.name !== "get_system_map");
    await runPlaybookDirectly(auditorPlaybook, tools, context);
    expect(summarize(emitted)).toEqual(["vulnerable-dependency pyyaml@5.3"]);
  });
});
