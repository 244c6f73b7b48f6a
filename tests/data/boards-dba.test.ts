import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import dbaPlaybook from "../../src/agents/playbooks/dba.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { boardsMap } from "../load/fixtures/boards-map.ts";
import { fixtureTarget, type RunningApp, startApp } from "../load/fixtures/fixture-target.ts";
import { artifactFiles, findingKeys, playbookTools } from "../load/fixtures/playbook-tools.ts";
import { callTool, fakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";

// DBA against an application whose records are created under a parent and addressed by their own id
// (tests/load/fixtures/boards-app.ts lists what is planted and what only looks alike).

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("boards");
});
afterAll(async () => {
  await app?.stop();
});

const tool = (name: string) => dbTools.find((candidate) => candidate.name === name)!;
const context = () => fakeRunContext({ target: fixtureTarget(app), systemMap: boardsMap(app) });

interface Answer {
  candidates: EnvelopeDraft[];
  stats: { outcomes: Array<{ id?: string; target?: string; result: string; detail?: string }> };
}

async function call(name: string, input: Record<string, unknown> = {}): Promise<Answer> {
  const result = await callTool(tool(name), input, context());
  if (!result.ok) throw new Error(`${name}: ${result.error}`);
  return result.data as Answer;
}

const at = (answer: Answer, value: string) =>
  answer.candidates.find((draft) => draft.location.value === value);

describe("DBA on nested resources", () => {
  it("reads a lookup by (scope, natural key) as a uniqueness assumption, and tells it from an indexed one", async () => {
    const result = await callTool(tool("infer_data_assumptions"), {}, context());
    const assumptions = (result as { data: { assumptions: Array<{ id: string; enforced: boolean }> } }).data
      .assumptions;
    const state = (id: string) => assumptions.find((assumption) => assumption.id === id)?.enforced;
    expect(state("unique:boards.slug,team_id")).toBe(false);
    expect(state("unique:labels.board_id,name")).toBe(true);
    // Declared by the request schemas: unenforced where no CHECK exists, enforced where one does.
    expect(state("allowed-values:cards.size")).toBe(false);
    expect(state("non-negative:cards.points")).toBe(false);
    expect(state("allowed-values:cards.color")).toBe(true);
    expect(state("non-negative:cards.weight")).toBe(true);
    // A number computed over rows (`SELECT COALESCE(MAX(position), 0) + 1 … WHERE card_id = ?`) is no lookup.
    expect(state("unique:checks.card_id")).toBeUndefined();
  });

  it("confirms the composite key with two creations in one scope, at the natural key's column", async () => {
    const answer = await call("confirm_constraint", { assumptions: ["unique:boards.slug,team_id"] });
    const draft = at(answer, "boards.slug");
    expect(draft).toBeDefined();
    expect(draft!.location.related).toEqual([{ kind: "table", value: "boards.team_id" }]);
    expect(draft!.confidence).toBeGreaterThanOrEqual(0.9);
    expect(draft!.summary).toMatch(/one slug and the same team_id/);
  });

  it("confirms a missing foreign key by deleting a parent of its own, and leaves alone children the code deletes", async () => {
    const answer = await call("confirm_constraint", {
      assumptions: ["foreign-key:notes.card_id", "foreign-key:checks.card_id"],
    });
    expect(answer.candidates.map((draft) => draft.location.value)).toEqual(["notes.card_id"]);
    const draft = at(answer, "notes.card_id")!;
    expect(draft.confidence).toBeGreaterThanOrEqual(0.9);
    expect(draft.summary).toMatch(/after DELETE \/api\/cards\/\{id\} deleted a cards row/);
    const checks = answer.stats.outcomes.find((outcome) => outcome.id === "foreign-key:checks.card_id");
    expect(checks).toMatchObject({ result: "rejected-by-application" });
    expect(checks!.detail).toMatch(/also removed its checks/);
    // The orphan the trial left is its own note, nothing else: every card it made is gone.
    const live = new Database(app.dbFile, { readonly: true });
    const orphans = live
      .prepare("SELECT COUNT(*) AS n FROM notes WHERE card_id NOT IN (SELECT id FROM cards)")
      .get() as { n: number };
    live.close();
    expect(orphans.n).toBe(1);
  });

  it("on a scratch copy alone, a reference whose children the code deletes itself is held, the other filed", async () => {
    const answer = await call("confirm_constraint", {
      assumptions: ["foreign-key:notes.card_id", "foreign-key:checks.card_id"],
      via: "scratch",
    });
    expect(answer.candidates.map((draft) => [draft.location.value, draft.confidence]).sort()).toEqual([
      ["checks.card_id", 0.5],
      ["notes.card_id", 0.75],
    ]);
  });

  it("confirms declared domains the application stores anyway, not those a CHECK or the application keeps", async () => {
    const answer = await call("confirm_constraint", {
      assumptions: ["allowed-values:cards.size", "non-negative:cards.points", "non-negative:boards.budget"],
    });
    expect(answer.candidates.map((draft) => draft.location.value).sort()).toEqual([
      "cards.points",
      "cards.size",
    ]);
    expect(at(answer, "cards.size")!.summary).toMatch(/accepted and stored size = 'qaas_invalid_/);
    expect(at(answer, "cards.points")!.summary).toMatch(/accepted and stored points = -1/);
    expect(
      answer.stats.outcomes.find((outcome) => outcome.id === "non-negative:boards.budget"),
    ).toMatchObject({
      result: "rejected-by-application",
    });
  });

  it("confirms an end stored before its start where one write refuses it and another does not", async () => {
    const inferred = await callTool(tool("infer_data_assumptions"), {}, context());
    const ids = (inferred as { data: { assumptions: Array<{ id: string }> } }).data.assumptions.map(
      (assumption) => assumption.id,
    );
    expect(ids).toEqual(
      expect.arrayContaining(["ordered:sprints.starts_on,ends_on", "ordered:releases.opens_at,closes_at"]),
    );
    const answer = await call("confirm_constraint", {
      assumptions: ["ordered:sprints.starts_on,ends_on", "ordered:releases.opens_at,closes_at"],
    });
    expect(answer.candidates.map((draft) => draft.location.value)).toEqual(["sprints.ends_on"]);
    const draft = at(answer, "sprints.ends_on")!;
    expect(draft.location.related).toEqual([{ kind: "table", value: "sprints.starts_on" }]);
    expect(draft.summary).toMatch(
      /POST \/api\/boards\/\{id\}\/sprints refuses ends_on before starts_on \(400\), but PATCH \/api\/sprints\/\{id\} stored ends_on = 2024-02-01/,
    );
    expect(draft.confidence).toBeGreaterThanOrEqual(0.9);
    const releases = answer.stats.outcomes.find(
      (outcome) => outcome.id === "ordered:releases.opens_at,closes_at",
    );
    expect(releases).toMatchObject({ result: "rejected-by-application" });
    // Every span the trial made is gone again.
    const live = new Database(app.dbFile, { readonly: true });
    const left = live
      .prepare("SELECT (SELECT COUNT(*) FROM sprints) + (SELECT COUNT(*) FROM releases) AS n")
      .get() as {
      n: number;
    };
    live.close();
    expect(left.n).toBe(0);
  });

  it("races a per-parent number computed in code, and not one read and written without a pause", async () => {
    const answer = await call("probe_race");
    const draft = at(answer, "POST /api/boards/{id}/cards");
    expect(draft).toMatchObject({ domain: "data", defect_class: "data-integrity", confidence: 0.9 });
    expect(draft!.location.related).toEqual([{ kind: "table", value: "cards.serial" }]);
    expect(draft!.summary).toMatch(/handed out \d+ number\(s\) more than once/);
    const checks = answer.stats.outcomes.find((outcome) => outcome.target?.startsWith("sequence:checks"));
    expect(checks?.result).toMatch(/position stayed unique under 10 concurrent creations/);
  }, 20_000);

  it("the playbook emits exactly the planted defects, with their evidence on disk", async () => {
    const run = context();
    const { tools, emitted } = playbookTools();
    await runPlaybookDirectly(dbaPlaybook, [...dbTools, ...tools], run);
    expect(findingKeys(emitted)).toEqual([
      "data-integrity POST /api/boards/{id}/cards",
      "missing-constraint boards.slug",
      "missing-constraint cards.points",
      "missing-constraint cards.size",
      "missing-constraint notes.card_id",
      "missing-constraint sprints.ends_on",
    ]);
    expect(artifactFiles(emitted, run.artifactsDir)).toEqual([]);
    for (const draft of emitted) expect(draft.confidence).toBeGreaterThanOrEqual(0.8);
  }, 30_000);
});
