import { afterAll, beforeAll, describe, expect, it } from "vitest";
import apiPlaybook from "../../src/agents/playbooks/api.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { httpTools } from "../../src/tools/servers/http-server.ts";
import { fakeEngineTools } from "../fixtures/fake-engine.ts";
import type { NotesServer } from "../fixtures/notes-server.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { notesTarget, summarize } from "../fixtures/targets.ts";
import { runPlaybookDirectly } from "../support/fake-run-context.ts";

let notes: FixtureTarget<NotesServer>;

beforeAll(async () => {
  notes = await notesTarget();
});
afterAll(async () => {
  await notes.server.close();
});

describe("API playbook (builtin seat)", () => {
  it("reads the map, signs every user in, runs the contract probes and emits each distinct finding once", async () => {
    const emitted: EnvelopeDraft[] = [];
    const context = notes.context({ agent: "API" });
    const before = notes.server.requests.length;
    const started = performance.now();
    const calls = await runPlaybookDirectly(
      apiPlaybook,
      [...httpTools, ...contractTools, ...fakeEngineTools(notes.map, emitted)],
      context,
    );
    const seconds = (performance.now() - started) / 1000;
    expect(calls.slice(0, 2).map((call) => call.tool)).toEqual(["get_system_map", "sign_in"]);
    expect(
      calls
        .filter((call) => call.tool !== "emit_envelope")
        .map((call) => call.tool)
        .sort(),
    ).toEqual([
      "check_contract",
      "find_undocumented",
      "fuzz_operation",
      "get_system_map",
      "probe_semantics",
      "sign_in",
    ]);
    expect(summarize(emitted)).toEqual([
      "contract-drift GET /api/stats [body-200]",
      "undocumented-endpoint GET /api/internal/export",
      "unhandled-error POST /api/orders [body:sku]",
      "validation-missing POST /api/accounts [mass-assignment:is_admin]",
      "validation-missing POST /api/notes [body:priority]",
      "wrong-status DELETE /api/drafts/{draftId} [deleted-still-readable]",
    ]);
    const requests = notes.server.requests.length - before;
    // Counted requests never exceed the agent's budget, and the run stays fast.
    expect(requests).toBeLessThan(3000);
    expect(seconds).toBeLessThan(15);
  });
});
