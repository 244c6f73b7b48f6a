import { describe, expect, it } from "vitest";
import { mergeCandidates } from "../../src/explore/bug-bash/candidates.ts";
import { deriveCharters, parseGivenCharter } from "../../src/explore/bug-bash/charters.ts";
import { judgeCandidate, type TestRun } from "../../src/explore/bug-bash/confirm.ts";
import type { ExploreFinding, ExploreRunFile } from "../../src/explore/run-file.ts";
import type { SystemMap } from "../../src/map/system-map.ts";

// The bug bash's decisions without a browser: which charters, how sessions merge into candidates, and the
// one rule that confirms a candidate (every run fails on the assertion that encodes it).

const ENCODES = "the page answers an error status";
const fail = (failure: string, own = true): TestRun => ({
  passed: false,
  failure,
  own_assertion: own,
  timed_out: false,
});
const pass: TestRun = { passed: true, own_assertion: false, timed_out: false };

describe("confirming a candidate", () => {
  it("confirms only when every run failed on the encoding assertion", () => {
    expect(
      judgeCandidate([fail(`${ENCODES} (got 500)`), fail(ENCODES), fail(ENCODES)], ENCODES),
    ).toMatchObject({
      status: "confirmed",
      failedAt: ENCODES,
    });
  });

  it("rejects a test that passes, or wavers, as did-not-reproduce", () => {
    expect(judgeCandidate([pass, pass, pass], ENCODES)).toMatchObject({
      status: "rejected",
      reason: "did-not-reproduce",
    });
    expect(judgeCandidate([fail(ENCODES), pass, fail(ENCODES)], ENCODES)).toMatchObject({
      status: "rejected",
      reason: "did-not-reproduce",
    });
  });

  it("rejects a failure on another assertion as an artifact, and one before any assertion as the environment", () => {
    const other = "the page does not show the expected text";
    expect(judgeCandidate([fail(other), fail(other), fail(other)], ENCODES)).toMatchObject({
      status: "rejected",
      reason: "artifact",
      failedAt: other,
    });
    const setup = "QAAS_COOKIE is not set: the page is seen as admin";
    expect(
      judgeCandidate([fail(setup, false), fail(setup, false), fail(setup, false)], ENCODES),
    ).toMatchObject({
      status: "rejected",
      reason: "environment",
    });
    // A message that merely starts like the assertion is not it.
    expect(judgeCandidate([fail(`${ENCODES}s`), fail(`${ENCODES}s`)], ENCODES).status).toBe("rejected");
  });
});

function finding(part: Partial<ExploreFinding>): ExploreFinding {
  return {
    kind: "issue",
    severity: 4,
    title: "/x answers 500",
    screen: "/x",
    expected: "/x opens",
    observed: "the server answered 500",
    repro: ["open the entry page"],
    evidence: [{ kind: "screenshot", path: "artifact://r/shot.png" }],
    step: 1,
    check: { kind: "page-status", page: "/x", status: 500 },
    ...part,
  };
}

function session(id: string, persona: string, findings: ExploreFinding[]) {
  const run = { findings } as ExploreRunFile;
  return { charter: { id, persona, text: "t", origin: "given" as const }, run };
}

describe("merging the sessions", () => {
  it("keeps the first report of a check and rejects the others as duplicates of it", () => {
    const merged = mergeCandidates([
      session("C1", "anonymous", [finding({})]),
      session("C2", "anonymous", [finding({ step: 3 })]),
    ]);
    expect(
      merged.map((candidate) => [candidate.id, candidate.status, candidate.reason, candidate.duplicateOf]),
    ).toEqual([
      ["BB-1", "pending", undefined, undefined],
      ["BB-2", "rejected", "duplicate", "BB-1"],
    ]);
  });

  it("rejects a refusal to a persona as design and a claim no check decided as an artifact", () => {
    const merged = mergeCandidates([
      session("C1", "anonymous", [
        finding({ check: { kind: "page-status", page: "/x", status: 403 } }),
        finding({ kind: "warning", title: "submitting does nothing", check: undefined }),
        finding({ title: "", check: { kind: "text-shown", page: "/y", text: "Total" } }),
      ]),
    ]);
    expect(merged.map((candidate) => candidate.reason)).toEqual(["design", "artifact", "artifact"]);
  });
});

describe("choosing the charters", () => {
  it("reads a persona prefix only for a persona the profile has", () => {
    expect(parseGivenCharter("as editor: open the entry page", 0, ["anonymous", "editor"])).toMatchObject({
      id: "C1",
      persona: "editor",
      text: "open the entry page",
    });
    expect(parseGivenCharter("as ghost: open it", 1, ["anonymous"])).toMatchObject({
      persona: "anonymous",
      text: "as ghost: open it",
    });
  });

  it("derives the entry walk per persona, then one charter per area each persona reaches, up to the cap", () => {
    const page = (path: string, roles: string[], status = 200, forms: unknown[] = []) => ({
      path,
      roles,
      status,
      links: [],
      forms,
    });
    const map = {
      pages: [
        page("/", ["anonymous", "member"]),
        page("/alpha", ["anonymous", "member"]),
        page("/alpha/new", ["member"], 200, [
          { action: "/alpha", method: "POST", fields: ["name"], inputs: [{ name: "name", type: "text" }] },
        ]),
        page("/beta/{id}", ["member"]),
        // A sign-out button in the layout is a POST form with nothing to type: no form charter.
        page("/beta/list", ["member"], 200, [{ action: "/out", method: "POST", fields: [], inputs: [] }]),
        page("/gone", ["anonymous"], 404),
      ],
    } as unknown as SystemMap;
    const charters = deriveCharters(map, ["anonymous", "member", "auditor"], 5);
    expect(charters.map((charter) => `${charter.id} ${charter.persona}: ${charter.text}`)).toEqual([
      "C1 anonymous: open the entry page and follow the links it offers",
      "C2 member: open the entry page and follow the links it offers",
      "C3 anonymous: open the entry page and find a way to /alpha",
      "C4 member: open the entry page and find a way to /alpha/new, then fill the alpha form",
      "C5 member: open the entry page and find a way to /beta/list",
    ]);
    expect(deriveCharters(undefined, ["anonymous"], 4)).toEqual([
      {
        id: "C1",
        persona: "anonymous",
        text: "open the entry page and follow the links it offers",
        origin: "derived",
      },
    ]);
  });
});
