import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBudget } from "../../src/explore/budget.ts";
import { walkCharter } from "../../src/explore/charter-walker.ts";
import { checkFinding } from "../../src/explore/finding-contract.ts";
import { newRunFile, RunFileWriter, readRunFile } from "../../src/explore/run-file.ts";
import { EXPLORE_TOOLS, guardedStepCaller } from "../../src/explore/step-caller.ts";
import { verdictOf } from "../../src/explore/verdict.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { testAgent } from "../support/fake-run-context.ts";
import { type ExploreSite, startExploreSite } from "./explore-site.ts";

// The deterministic walker drives a real Chromium through the guarded step tools against a local site: it
// reaches a page by its link, checks texts, reports a missing one as an issue with a screenshot, and
// records a target that is down as blocked (then stuck), never as a product failure.

let site: ExploreSite;

beforeAll(async () => {
  site = await startExploreSite();
});

afterAll(async () => {
  await site.close();
});

function exploreContext(baseUrl: string) {
  const profile = profileFor({
    name: "site",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
  });
  const map = systemMapFor({
    target: "site",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "s", version: "1" }, paths: {} },
  });
  const context = probeContext({ profile, map, agent: "EXPLORER" });
  context.agent = testAgent({ name: "EXPLORER", tools: [...EXPLORE_TOOLS] });
  return context;
}

async function walk(charter: string, options: { baseUrl?: string; steps?: number; persona?: string } = {}) {
  const context = exploreContext(options.baseUrl ?? site.baseUrl);
  const dir = path.join(context.artifactsDir, "explore");
  const run = newRunFile({
    goal: charter,
    persona: options.persona ?? "anonymous",
    ...resolveBudget({ steps: options.steps }),
  });
  const writer = new RunFileWriter(dir, run);
  const seen: number[] = [];
  try {
    const ended = await walkCharter({
      charter,
      persona: options.persona ?? "anonymous",
      entry: "/",
      call: guardedStepCaller(context, "explore-test"),
      writer,
      onStep: (step) => seen.push(readRunFile(writer.file).steps.length - step.index),
    });
    return { ended, context, file: writer.file, seen };
  } finally {
    await closeRunServices(context);
  }
}

describe("charter walker", () => {
  it("finds a way to a page by its link and checks what it shows", async () => {
    const { ended, context, file, seen } = await walk(
      'open the entry page and find a way to Settings; it shows "Notifications"',
    );
    expect(ended.steps.map((step) => [step.title, step.status])).toEqual([
      ["open the entry page (/) as anonymous", "passed"],
      ["find a way to Settings", "passed"],
      ['check that the page shows "Notifications"', "passed"],
    ]);
    expect(ended.steps[1]!.detail).toMatch(/followed the link "Settings" to .*\/settings/);
    expect(ended.ended?.reason).toBe("goal-reached");
    expect(verdictOf(ended)).toBe("passed");
    // Every step was on disk when it was announced, and the file matches the end state.
    expect(seen).toEqual([0, 0, 0]);
    expect(readRunFile(file)).toEqual(ended);
    // Every browser step went through the guardrails and the ledger.
    const tools = context.entries
      .filter((entry) => entry.kind === "tool_called")
      .map((entry) => entry.data.tool);
    expect(tools).toEqual(expect.arrayContaining(["navigate", "locate", "act", "expect"]));
  }, 90_000);

  it("reports a text the page lacks as an issue with a screenshot, and fails the run", async () => {
    const { ended, context } = await walk('go to /about and check it shows "Team directory"');
    expect(ended.steps.map((step) => step.status)).toEqual(["passed", "passed", "failed"]);
    expect(ended.steps[2]).toMatchObject({ code: "ASSERTION_FAILED" });
    expect(ended.findings).toHaveLength(1);
    const finding = ended.findings[0]!;
    expect(finding).toMatchObject({
      kind: "issue",
      step: 3,
      screen: "/about",
      expected: 'the page shows "Team directory"',
      observed: expect.stringContaining("Who we are"),
      repro: [
        "open the entry page (/) as anonymous",
        "find a way to /about",
        'check that the page shows "Team directory"',
      ],
    });
    expect(checkFinding(finding)).toEqual({ valid: true });
    const shot = finding.evidence[0]!;
    expect(shot.kind).toBe("screenshot");
    const name = shot.path.replace(/^artifact:\/\/[^/]+\//, "");
    expect(
      fs.existsSync(path.join(context.artifactsDir, name)) ||
        fs
          .readdirSync(context.artifactsDir, { recursive: true })
          .some((entry) => String(entry).endsWith(".png")),
    ).toBe(true);
    expect(verdictOf(ended)).toBe("failed");
  }, 90_000);

  it("fills and submits a form, and reports a page that fails with a server error", async () => {
    const created = await walk("open /notes/new and create a note");
    expect(created.ended.steps.map((step) => step.status)).toEqual(["passed", "passed", "passed"]);
    expect(created.ended.steps[2]!.detail).toMatch(/shows the new note/);
    const failing = await walk("go to /report");
    expect(failing.ended.steps[1]).toMatchObject({ status: "failed", code: "ASSERTION_FAILED" });
    expect(failing.ended.findings[0]).toMatchObject({
      kind: "issue",
      severity: 4,
      title: "/report answers 500",
    });
  }, 120_000);

  it("records a target that is down as blocked by the environment, stops as stuck, and never fails the run", async () => {
    const { ended } = await walk('find a way to Settings and check "A" and "B"', {
      baseUrl: "http://127.0.0.1:9",
    });
    expect(ended.steps.map((step) => step.code)).toEqual([
      "ENVIRONMENT_UNAVAILABLE",
      "ENVIRONMENT_UNAVAILABLE",
      "ENVIRONMENT_UNAVAILABLE",
    ]);
    expect(ended.ended?.reason).toBe("stuck");
    expect(ended.findings).toEqual([]);
    expect(verdictOf(ended)).toBe("blocked");
  }, 90_000);

  it("stops at the step limit and reports an unknown persona as missing credentials", async () => {
    const { ended } = await walk("find a way to Settings", { steps: 1, persona: "auditor" });
    expect(ended.steps).toHaveLength(1);
    expect(ended.steps[0]).toMatchObject({ status: "blocked", code: "CREDENTIAL_MISSING" });
    expect(ended.ended?.reason).toBe("step-limit");
  }, 60_000);
});
