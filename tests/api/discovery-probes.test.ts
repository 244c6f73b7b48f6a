import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { selectOperations } from "../../src/probes/api/operation-index.ts";
import { ResourceFactory } from "../../src/probes/api/resource-factory.ts";
import { ResponseValidator } from "../../src/probes/api/response-validator.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext } from "../fixtures/probe-harness.ts";
import type { FixtureTarget } from "../fixtures/targets.ts";
import { summarize, trackerTarget } from "../fixtures/targets.ts";
import type { TrackerServer } from "../fixtures/tracker-server.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool } from "../support/fake-run-context.ts";

// The resource layer on items nothing addresses directly (cards made under a board, notes under a card,
// people never listed), and the contract and semantics oracles that depend on it: each on the defective
// tracker and on its correct look-alike.

let defective: FixtureTarget<TrackerServer>;
let correct: FixtureTarget<TrackerServer>;

beforeAll(async () => {
  [defective, correct] = await Promise.all([
    trackerTarget({ budgetAsString: true, missingNoteIsNull: true }),
    trackerTarget(),
  ]);
});
afterAll(async () => {
  await Promise.all([defective.server.close(), correct.server.close()]);
});

async function probe(tool: string, context: FakeRunContext): Promise<EnvelopeDraft[]> {
  const result = await callTool(contractTools.find((candidate) => candidate.name === tool)!, {}, context);
  if (!result.ok) throw new Error(result.error);
  const data = result.data as { candidates: EnvelopeDraft[] };
  for (const candidate of data.candidates) EnvelopeDraftSchema.parse(candidate);
  return data.candidates;
}

function only(map: FixtureTarget<TrackerServer>["map"], key: string) {
  const [operation] = selectOperations(map, key);
  if (!operation) throw new Error(`no operation ${key}`);
  return operation;
}

describe("resource layer", () => {
  it("creates a child under its parent when only a nested collection creates it (board first, then card, then note)", async () => {
    const { run } = defective.run("check_contract");
    const factory = new ResourceFactory(run);
    const notes = factory.familyOf(only(defective.map, "GET /api/notes/{noteId}"))!;
    expect(factory.canCreate(notes)).toBe(true);
    const note = (await factory.ensure(notes, "ann"))!;
    expect(note.family.collection).toBe("/api/notes");
    expect(note.parents.map((parent) => parent.family.collection)).toEqual(["/api/boards", "/api/cards"]);
    expect(note.request.operation.path).toBe("/api/cards/{cardId}/notes");
    expect(note.pathValues).toEqual({
      boardId: note.parents[0]!.id,
      cardId: note.parents[1]!.id,
      noteId: note.id,
    });
    const located = await factory.pathValuesFor(only(defective.map, "GET /api/notes/{noteId}"), "ann");
    expect(located).toEqual({ values: note.pathValues, resource: note, owned: true });
  });

  it("harvests ids the user already sees: own id from sign-in and me, a colleague's from assignee_id, items from lists", async () => {
    const { run } = correct.run("scan_exposure", { mode: "external" });
    const factory = new ResourceFactory(run);
    const people = factory.familyOf(only(correct.map, "GET /api/people/{personId}"))!;
    expect(await factory.harvestedIds(people, "ann")).toEqual(["11"]);
    const cards = factory.familyOf(only(correct.map, "GET /api/cards/{cardId}"))!;
    expect(await factory.harvestedIds(cards, "ann")).toEqual(["2"]);
    // Every stage: the directory lists the members, cards name ben as assignee, boards ada as owner.
    expect((await factory.harvestedIds(people, "ann", { every: true })).sort()).toEqual(["11", "12", "13"]);
    expect(await factory.harvestedIds(people, "ben")).toEqual(["12"]);
    // Without the directory, references alone still name them: `assignee_id` on cards, `owner_id` on boards.
    const map = {
      ...correct.map,
      operations: correct.map.operations.filter((operation) => !operation.path.endsWith("/members")),
    };
    const bare = openProbeRun(probeContext({ profile: correct.profile({ mode: "external" }), map }), "scan");
    if (typeof bare === "string") throw new Error(bare);
    const fromReferences = new ResourceFactory(bare);
    const family = fromReferences.familyOf(only(map, "GET /api/people/{personId}"))!;
    expect((await fromReferences.harvestedIds(family, "ann", { every: true })).sort()).toEqual([
      "11",
      "12",
      "13",
    ]);
    const read = await factory.pathValuesFor(only(correct.map, "GET /api/people/{personId}"), "ann");
    expect(read).toEqual({ values: { personId: "11" }, owned: false });
    // Harvested ids never address a write.
    const write = { ...only(correct.map, "GET /api/people/{personId}"), method: "DELETE" };
    expect(await factory.pathValuesFor(write, "ann")).toBeUndefined();
  });
});

describe("check_contract on the tracker fixture", () => {
  it("reports a mistyped field of an item read at high confidence, through allOf and a nullable reference; the correct tracker is silent", async () => {
    const candidates = await probe("check_contract", defective.context());
    expect(summarize(candidates)).toEqual(["contract-drift GET /api/boards/{boardId} [body-200]"]);
    expect(candidates[0]!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(candidates[0]!.summary).toMatch(/budget: expected number, got string/);
    expect(summarize(await probe("check_contract", correct.context()))).toEqual([]);
  });

  it("validates OpenAPI 3.0 nullable references without a type instead of skipping the body", () => {
    const validator = new ResponseValidator("3.0.3");
    const schema = {
      allOf: [
        { type: "object", required: ["budget"], properties: { budget: { type: "number" } } },
        {
          type: "object",
          properties: {
            owner: { allOf: [{ type: "object", properties: { id: { type: "integer" } } }], nullable: true },
          },
        },
      ],
    };
    expect(validator.validate(schema, { budget: "4.0", owner: null })).toEqual([
      { path: "budget", kind: "type", message: "expected number, got string" },
    ]);
    expect(validator.validate(schema, { budget: 4, owner: { id: 1 } })).toEqual([]);
  });
});

describe("probe_semantics on the tracker fixture", () => {
  it("flags an unknown note answered 200 null where 404 is documented, not the 200-only label lookup; the correct tracker is silent", async () => {
    const candidates = await probe("probe_semantics", defective.context());
    expect(summarize(candidates)).toEqual(["wrong-status GET /api/notes/{noteId} [unknown-id]"]);
    expect(candidates[0]!.evidence.filter((item) => item.kind === "exchange")).toHaveLength(2);
    expect(summarize(await probe("probe_semantics", correct.context()))).toEqual([]);
  });
});
