import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { probeMassAssignment } from "../../src/probes/api/mass-assignment.ts";
import { ResourceFactory } from "../../src/probes/api/resource-factory.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import type { AssignmentStyle, ShopServer } from "./mass-assignment-server.ts";
import { startShopServer } from "./mass-assignment-server.ts";

// One shop three ways: storing the fields a client must not set, silently dropping them, refusing them.
// Only the first may give findings, and each must be proven by reading the object back.

const servers = new Map<AssignmentStyle, ShopServer>();

beforeAll(async () => {
  process.env.SHOP_PASSWORD = "pw";
  for (const style of ["vulnerable", "ignore", "reject"] as const)
    servers.set(style, await startShopServer(style));
});
afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.close()));
});

async function massAssignment(style: AssignmentStyle, annRole = "member") {
  const server = servers.get(style)!;
  const map = systemMapFor({
    target: "shop",
    baseUrl: server.baseUrl,
    document: server.document,
    extraOperations: server.operations,
  });
  const profile = profileFor({
    name: "shop",
    source: {},
    environment: { mode: "managed", base_url: server.baseUrl, allow_writes: true },
    auth: {
      login: {
        kind: "json",
        endpoint: "POST /api/login",
        body: { email: "{username}", password: "{password}" },
        token_from: "body:token",
      },
    },
    users: [
      { name: "ann", role: annRole, username: "ann@shop.test", password: "secret_ref:SHOP_PASSWORD" },
      { name: "ben", role: "member", username: "ben@shop.test", password: "secret_ref:SHOP_PASSWORD" },
    ],
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "API" }), "fuzz_operation");
  if (typeof run === "string") throw new Error(run);
  const factory = new ResourceFactory(run);
  const drafts = [];
  for (const family of factory.families.filter((candidate) => candidate.create))
    drafts.push(...(await probeMassAssignment(run, factory, family, "ann")));
  for (const draft of drafts) EnvelopeDraftSchema.parse(draft);
  return drafts;
}

describe("mass assignment", () => {
  it("finds a price, a role and an owner the client sets on create and update, each read back", async () => {
    const drafts = await massAssignment("vulnerable");
    expect(summarize(drafts)).toEqual([
      "validation-missing PATCH /api/tickets/{id} [mass-assignment:owner_id]",
      "validation-missing POST /api/orders [mass-assignment:price]",
      "validation-missing POST /api/tickets [mass-assignment:role]",
    ]);
    const price = drafts.find((draft) => draft.title.includes("price"))!;
    // The order was made with a sku the catalogue shows: a generated one is refused.
    expect(JSON.stringify(price)).toContain("SKU-7");
    expect(price.summary).toMatch(/second, different value/);
  });

  it("leaves role fields alone for an admin actor, who grants nothing it does not hold", async () => {
    const drafts = await massAssignment("vulnerable", "admin");
    expect(summarize(drafts)).toEqual([
      "validation-missing PATCH /api/tickets/{id} [mass-assignment:owner_id]",
      "validation-missing POST /api/orders [mass-assignment:price]",
    ]);
  });

  it("is silent when the server drops the fields", async () => {
    expect(summarize(await massAssignment("ignore"))).toEqual([]);
  });

  it("is silent when the server refuses the fields", async () => {
    expect(summarize(await massAssignment("reject"))).toEqual([]);
  });
});
