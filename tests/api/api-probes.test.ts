import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import type { InventoryServer } from "../fixtures/inventory-server.ts";
import type { NotesServer } from "../fixtures/notes-server.ts";
import { probeContext } from "../fixtures/probe-harness.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { inventoryTarget, notesTarget, summarize } from "../fixtures/targets.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool } from "../support/fake-run-context.ts";

let notes: FixtureTarget<NotesServer>;
let inventory: FixtureTarget<InventoryServer>;

beforeAll(async () => {
  [notes, inventory] = await Promise.all([notesTarget(), inventoryTarget()]);
});
afterAll(async () => {
  await Promise.all([notes.server.close(), inventory.server.close()]);
});

interface ProbeAnswer {
  candidates: Array<
    Record<string, unknown> & {
      defect_class: string;
      location: { value: string };
      dedupe?: { discriminator?: string };
    }
  >;
  stats: Record<string, unknown>;
}

async function probe(
  tool: string,
  context: FakeRunContext,
  input: Record<string, unknown> = {},
): Promise<ProbeAnswer> {
  const definition = contractTools.find((candidate) => candidate.name === tool)!;
  const result = await callTool(definition, input, context);
  if (!result.ok) throw new Error(result.error);
  return result.data as ProbeAnswer;
}

/** Every candidate is a valid draft whose evidence files exist, with no credential in them. */
function assertEvidence(context: FakeRunContext, answer: ProbeAnswer): void {
  for (const candidate of answer.candidates) {
    const draft = EnvelopeDraftSchema.parse(candidate);
    expect(draft.evidence.some((item) => item.kind === "exchange" || item.kind === "artifact")).toBe(true);
    for (const item of draft.evidence) {
      if (!item.uri) continue;
      const file = path.join(context.artifactsDir, item.uri.replace(/^artifact:\/\/[^/]+\//, ""));
      const text = fs.readFileSync(file, "utf8");
      expect(text).not.toMatch(/-pw\b/);
      expect(text).not.toMatch(/Bearer [0-9a-f]{32}/);
    }
  }
}

describe("API probes on the notes fixture (TypeScript, planted defects)", () => {
  it("check_contract reports the mistyped field and nothing on correct operations", async () => {
    const context = notes.context();
    const answer = await probe("check_contract", context);
    expect(summarize(answer.candidates)).toEqual(["contract-drift GET /api/stats [body-200]"]);
    const [drift] = answer.candidates;
    expect(drift!.summary).toMatch(/notes: expected integer, got string/);
    expect(answer.stats.requests).toBeGreaterThan(10);
    assertEvidence(context, answer);
  });

  it("fuzz_operation finds the crash on unicode input, the unvalidated range and the mass-assigned flag, not the handled 400/409 cases", async () => {
    const context = notes.context();
    const answer = await probe("fuzz_operation", context);
    expect(summarize(answer.candidates)).toEqual([
      // The apostrophe that crashes the search shows SQLite's syntax error: that is the injection probe's.
      "unhandled-error POST /api/orders [body:sku]",
      "validation-missing POST /api/accounts [mass-assignment:is_admin]",
      "validation-missing POST /api/notes [body:priority]",
    ]);
    const crash = answer.candidates.find(
      (candidate) =>
        candidate.defect_class === "unhandled-error" && candidate.location.value.startsWith("POST"),
    )!;
    expect(crash.title).toMatch(/unicode/);
    const gap = answer.candidates.find((candidate) => candidate.dedupe?.discriminator === "body:priority")!;
    expect(gap.title).toMatch(/minimum|maximum/);
    expect(gap.confidence).toBe(0.9);
    assertEvidence(context, answer);
  });

  it("probe_semantics finds the deleted draft that stays readable and no existence leak (404 for others)", async () => {
    const context = notes.context();
    const answer = await probe("probe_semantics", context);
    expect(summarize(answer.candidates)).toEqual([
      "wrong-status DELETE /api/drafts/{draftId} [deleted-still-readable]",
    ]);
    assertEvidence(context, answer);
  });

  it("find_undocumented confirms the hidden API route and ignores documents, health, debug and UI routes", async () => {
    const context = notes.context();
    const answer = await probe("find_undocumented", context);
    expect(summarize(answer.candidates)).toEqual(["undocumented-endpoint GET /api/internal/export"]);
    expect((answer.candidates[0]!.location as { source?: unknown }).source).toEqual({
      file: "src/routes/internal.ts",
      line: 12,
    });
  });

  it("find_undocumented reports nothing when the target has no document to be missing from", async () => {
    const withoutDocument = { ...notes.map, openapi: null };
    const context = probeContext({ profile: notes.profile(), map: withoutDocument });
    const answer = await probe("find_undocumented", context);
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.requests).toBe(0);
  });
});

describe("API probes on the inventory fixture (Python, correct validation)", () => {
  it("reports the refused PUT that still changed the item, and nothing else", async () => {
    const context = inventory.context();
    const [contract, fuzz, semantics] = await Promise.all([
      probe("check_contract", context),
      probe("fuzz_operation", context),
      probe("probe_semantics", context),
    ]);
    expect(summarize(contract.candidates)).toEqual([]);
    expect(summarize(fuzz.candidates)).toEqual([]);
    expect(summarize(semantics.candidates)).toEqual([
      "validation-missing PUT /api/items/{itemId} [refused-write-applied]",
    ]);
    assertEvidence(context, semantics);
  });
});

describe("write policy", () => {
  it("sends no write to an external target that does not allow writes", async () => {
    const before = notes.server.requests.length;
    const context = notes.context({ mode: "external" });
    const answers = await Promise.all(
      ["check_contract", "fuzz_operation", "probe_semantics", "find_undocumented"].map((tool) =>
        probe(tool, context),
      ),
    );
    const sent = notes.server.requests.slice(before);
    const writes = sent.filter((request) => request.method !== "GET" && request.path !== "/api/login");
    expect(sent.length).toBeGreaterThan(5);
    expect(writes).toEqual([]);
    expect(answers.every((answer) => answer.stats.writes_allowed === false)).toBe(true);
  });

  it("stops by itself at the request cap", async () => {
    const context = notes.context();
    const answer = await probe("fuzz_operation", context, { max_requests: 25 });
    expect(answer.stats.requests).toBeLessThanOrEqual(25);
    expect(String(answer.stats.notes)).toMatch(/budget/);
  });
});
