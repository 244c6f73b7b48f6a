import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import type { InventoryServer } from "../fixtures/inventory-server.ts";
import type { NotesServer } from "../fixtures/notes-server.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { inventoryTarget, notesTarget } from "../fixtures/targets.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool } from "../support/fake-run-context.ts";
import { runNodeTest } from "../support/node-test.ts";

let notes: FixtureTarget<NotesServer>;
let inventory: FixtureTarget<InventoryServer>;

beforeAll(async () => {
  [notes, inventory] = await Promise.all([notesTarget(), inventoryTarget()]);
});
afterAll(async () => {
  await Promise.all([notes.server.close(), inventory.server.close()]);
});

async function candidates(tool: string, context: FakeRunContext): Promise<EnvelopeDraft[]> {
  const result = await callTool(contractTools.find((candidate) => candidate.name === tool)!, {}, context);
  if (!result.ok) throw new Error(result.error);
  return (result.data as { candidates: EnvelopeDraft[] }).candidates;
}

function testFileOf(context: FakeRunContext, draft: EnvelopeDraft): string {
  const item = draft.evidence.find((evidence) => evidence.kind === "failing_test")!;
  expect(draft.reproduction.test?.command).toMatch(/^node --test tests\/qaas\/.+\.test\.mjs$/);
  return path.join(context.artifactsDir, item.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
}

/** Runs a generated test as REPRODUCER would: plain node, the base URL and the profile's secrets in the environment. */
function runTest(file: string, baseUrl: string): Promise<{ code: number; output: string }> {
  return runNodeTest(file, { QAAS_BASE_URL: baseUrl });
}

describe("generated failing tests", () => {
  it("fail while the defect exists (contract drift, crash, refused write that persisted, mass assignment)", async () => {
    const notesContext = notes.context();
    const inventoryContext = inventory.context();
    const [contract, fuzz, semantics] = await Promise.all([
      candidates("check_contract", notesContext),
      candidates("fuzz_operation", notesContext),
      candidates("probe_semantics", inventoryContext),
    ]);
    const files = [
      {
        file: testFileOf(notesContext, contract[0]!),
        baseUrl: notes.server.baseUrl,
        expected: /notes: expected integer/,
      },
      {
        file: testFileOf(notesContext, fuzz.find((draft) => draft.defect_class === "unhandled-error")!),
        baseUrl: notes.server.baseUrl,
        expected: /must answer a 4xx, not 500/,
      },
      {
        file: testFileOf(inventoryContext, semantics[0]!),
        baseUrl: inventory.server.baseUrl,
        expected: /must not change when the update is refused/,
      },
      {
        file: testFileOf(
          notesContext,
          fuzz.find((draft) => draft.dedupe?.discriminator === "mass-assignment:is_admin")!,
        ),
        baseUrl: notes.server.baseUrl,
        expected: /is_admin must not be settable by the client/,
      },
    ];
    for (const { file, baseUrl, expected } of files) {
      const source = fs.readFileSync(file, "utf8");
      expect(source).not.toMatch(/-pw\b/);
      const result = await runTest(file, baseUrl);
      expect(result.code, result.output).not.toBe(0);
      expect(result.output).toMatch(expected);
    }
  });

  it("generate_contract_test writes a test that passes on a correct operation and fails on a drifting one", async () => {
    const context = notes.context();
    const tool = contractTools.find((candidate) => candidate.name === "generate_contract_test")!;
    const correct = await callTool(tool, { operation: "GET /api/notes/{noteId}", user: "alice" }, context);
    const drifting = await callTool(tool, { operation: "GET /api/stats", user: "alice" }, context);
    if (!correct.ok || !drifting.ok) throw new Error("generate_contract_test failed");
    const fileOf = (data: unknown) =>
      path.join(
        context.artifactsDir,
        (data as { artifact: string }).artifact.replace(/^artifact:\/\/[^/]+\//, ""),
      );
    expect((correct.data as { content: string }).content).toContain('"name":"setup1"');
    const passing = await runTest(fileOf(correct.data), notes.server.baseUrl);
    expect(passing.code, passing.output).toBe(0);
    const failing = await runTest(fileOf(drifting.data), notes.server.baseUrl);
    expect(failing.code).not.toBe(0);
    expect(failing.output).toMatch(/notes is a integer/);
  });
});
