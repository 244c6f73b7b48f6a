import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { behindGate } from "../../src/runner/run-agent.ts";
import { createWorkerSeat } from "../../src/seats/create-seat.ts";
import type { SeatRequest } from "../../src/seats/seat.ts";
import { decisionTools } from "../../src/tools/servers/decisions-server.ts";
import { reviewTools } from "../../src/tools/servers/review-server.ts";
import {
  type FakeModelServer,
  type ScriptedReply,
  startOpenAIFakeServer,
} from "../seats/fakes/openai-fake-server.ts";
import { callTool } from "../support/fake-run-context.ts";
import { tempProject } from "../support/temp-config.ts";
import { BRANCH, cleanFix, context, repository, type Script, scripted } from "./loop-fixtures.ts";

// REVIEWER on a model seat: the builtin gate (diff, guardrails, repro test, suite) decides first, and the
// model — a local fake OpenAI-compatible server with scripted answers — reads on only from an APPROVE.

const KEY = "QAAS_GATED_REVIEW_TEST_KEY";
let server: FakeModelServer | undefined;

beforeEach(() => {
  process.env[KEY] = "test-key";
});
afterEach(async () => {
  delete process.env[KEY];
  await server?.close();
  server = undefined;
});

async function review(root: string, script: Script, model: ScriptedReply[]) {
  server = await startOpenAIFakeServer(model);
  const reviewer = loadConfig().agents.get("REVIEWER")!;
  const { seat: modelSeat } = createWorkerSeat({
    backend: "openai-compatible",
    model: "fake-reviewer",
    base_url: `${server.url}/v1`,
    is_local: true,
    api_key_env: KEY,
  });
  const seat = behindGate(reviewer, modelSeat);
  const run = context(root);
  const tools = new Map(
    [...reviewTools, ...decisionTools, ...scripted(script)].map((tool) => [tool.name, tool]),
  );
  const called: string[] = [];
  const request: SeatRequest = {
    agent: "REVIEWER",
    system: "You are REVIEWER.",
    task: `ticket: QA-1\nbranch: ${BRANCH}`,
    taskData: { ticket: "QA-1", finding_id: "env-1", branch: BRANCH },
    tools: [...tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: { type: "object" },
    })),
    maxTurns: 10,
    ...(reviewer.playbookFile ? { playbook: reviewer.playbookFile } : {}),
    async callTool(name, input) {
      called.push(name);
      const tool = tools.get(name);
      return tool ? callTool(tool, input, run) : { ok: false, error: `unknown tool ${name}` };
    },
    checkStop: () => ({ allow: called.includes("record_review") }),
    log: () => {},
    signal: new AbortController().signal,
  };
  const result = await seat.run(request);
  const decisions = run.entries
    .filter((entry) => entry.kind === "review_recorded")
    .map((entry) => entry.data.decision);
  return { result, decisions, requests: server.requests, seat };
}

const modelSaid = (requests: FakeModelServer["requests"]) => JSON.stringify(requests.map((r) => r.body));

describe("REVIEWER with a model seat behind the builtin gate", () => {
  it("lets the model read a change the gate approved, and the model's stricter decision is recorded last", async () => {
    const { result, decisions, requests, seat } = await review(
      cleanFix(),
      { series: [{ failed: 1 }, { failed: 0 }] },
      [
        { tool: "read_file", input: { path: "src/records.js" } },
        {
          tool: "record_review",
          input: {
            ticket: "QA-1",
            decision: "REQUEST_CHANGES",
            branch: BRANCH,
            rationale: "src/records.js: the PUT route still lets another tenant write the record",
          },
        },
        { text: "Recorded." },
      ],
    );
    expect(seat.backend).toBe("openai-compatible");
    expect(decisions).toEqual(["APPROVE", "REQUEST_CHANGES"]);
    // The model was told what the gate decided and checked, and read on from there.
    const said = modelSaid(requests);
    expect(said).toContain("The deterministic gate has passed this");
    expect(said).toMatch(/repro test: passed/);
    expect(requests).toHaveLength(3);
    // The gate's tool calls and the model's both count as turns of the one invocation.
    expect(result.turns).toBeGreaterThan(2);
  });

  it("never asks the model about a change the gate sent back", async () => {
    const root = repository((top) => {
      fs.writeFileSync(path.join(top, "docs/notes.md"), "unrelated\n");
    });
    const { decisions, requests } = await review(root, { series: [] }, [{ text: "should not be asked" }]);
    expect(decisions).toEqual(["REQUEST_CHANGES"]);
    expect(requests).toHaveLength(0);
  });

  it("makes the model record a decision of its own: the gate's APPROVE does not let it finish silently", async () => {
    const { decisions, requests } = await review(cleanFix(), { series: [{ failed: 1 }, { failed: 0 }] }, [
      { text: "Looks fine to me." },
      {
        tool: "record_review",
        input: { ticket: "QA-1", decision: "APPROVE", branch: BRANCH, rationale: "read src/records.js" },
      },
      { text: "Recorded." },
    ]);
    expect(decisions).toEqual(["APPROVE", "APPROVE"]);
    expect(modelSaid(requests)).toContain("record your own decision with record_review");
  });
});

describe("the gate in agent configuration", () => {
  it("is refused on an agent without a playbook, naming the file and field", () => {
    const project = tempProject();
    const file = path.join(project.configDir, "agents/fixer.yaml");
    fs.appendFileSync(file, "gate: { tool: record_review, passes: APPROVE }\n");
    expect(() => loadConfig(project.configDir)).toThrow(/fixer\.yaml.*gate.*FIXER has none/s);
  });
});
