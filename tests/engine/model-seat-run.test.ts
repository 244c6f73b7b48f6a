import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../../src/run/start-run.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { startAnthropicFakeServer } from "../seats/fakes/anthropic-fake-server.ts";
import type { FakeModelServer, ScriptedReply } from "../seats/fakes/fake-model-server.ts";
import { startOpenAIFakeServer } from "../seats/fakes/openai-fake-server.ts";
import { wrongStatusDraft } from "../support/sample-draft.ts";
import { tempProject } from "../support/temp-config.ts";

// A model in a seat, end to end through the router, runner, registry, guardrails and ledger: a local fake
// server speaks the real wire protocol and plays a model that emits an envelope, tries a tool it is not
// allowed, and tries to finish before calling its must_call tool.

const KEY = "QAAS_ENGINE_TEST_LLM_KEY";

const draft = wrongStatusDraft(0.85);

const script: ScriptedReply[] = [
  { tool: "emit_envelope", input: draft, usage: { input: 1000, output: 100 } },
  // A write to an external target whose profile does not allow writes: the guardrail must refuse it.
  {
    tool: "http_request",
    input: { method: "POST", path: "/items", body: { name: "x" } },
    usage: { input: 1200, output: 50 },
  },
  { text: "I am done.", usage: { input: 1300, output: 10 } },
  { text: "Still done.", usage: { input: 1400, output: 10 } },
];

const backends: Array<{
  name: string;
  start: (s: ScriptedReply[]) => Promise<FakeModelServer>;
  seat: (url: string) => object;
}> = [
  {
    name: "openai-compatible",
    start: startOpenAIFakeServer,
    seat: (url) => ({
      backend: "openai-compatible",
      model: "fake-model",
      base_url: `${url}/v1`,
      is_local: true,
      api_key_env: KEY,
    }),
  },
  {
    name: "anthropic",
    start: startAnthropicFakeServer,
    seat: (url) => ({
      backend: "anthropic",
      model: "fake-claude",
      base_url: url,
      is_local: true,
      api_key_env: KEY,
    }),
  },
];

let app: http.Server;
let appUrl = "";
const appRequests: string[] = [];
beforeAll(async () => {
  process.env[KEY] = "test-key-not-secret";
  app = http.createServer((request, response) => {
    appRequests.push(`${request.method} ${request.url}`);
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});
afterAll(() => {
  delete process.env[KEY];
  app.close();
});

describe.each(backends)("a $name seat driven through the engine", (backend) => {
  it("lands the envelope, returns the denial as a reason, and fires the stop hook once", async () => {
    const server = await backend.start(script);
    try {
      const project = tempProject();
      project.addAgent({
        name: "MODELLED",
        yaml: {
          description: "An agent on a model seat.",
          layer: "discover",
          phase: "discover",
          max_turns: 10,
          seat: backend.seat(server.url),
          tools: ["emit_envelope", "search_similar", "http_request"],
          must_call: ["search_similar"],
        },
      });
      project.addMode("model", { roster: ["MODELLED"], budget: { usd: 1 } });
      const target = project.addTarget("live", {
        source: { path: "../.." },
        environment: { mode: "external", base_url: appUrl, allow_writes: false },
      });

      const { runId, report } = await startRun({
        home: project.home,
        configDir: project.configDir,
        mode: "model",
        target,
        json: true,
      });

      const store = RunStore.open(project.home, runId);
      const entries = store.readLedger().entries;
      // The envelope landed.
      expect(store.readEnvelopes()).toEqual([
        expect.objectContaining({
          discovered_by: "MODELLED",
          defect_class: "wrong-status",
          location: draft.location,
        }),
      ]);
      // The forbidden call was denied, logged, and its reason went back to the model in the next request.
      const denial = entries.find((entry) => entry.kind === "tool_denied");
      expect(denial?.data).toMatchObject({ tool: "http_request", rule: "external-writes" });
      expect(JSON.stringify(server.requests[2]!.body)).toContain("denied by guardrail external-writes");
      expect(appRequests.filter((line) => line.startsWith("POST"))).toEqual([]);
      // The stop hook refused once, with the reason sent to the model, then let the stuck agent go.
      const hooks = entries.filter((entry) => entry.kind === "hook_fired").map((entry) => entry.data.action);
      expect(hooks).toEqual(["refused_stop", "let_go"]);
      expect(JSON.stringify(server.requests[3]!.body)).toContain("You may not finish yet");
      expect(server.requests).toHaveLength(4);
      const finished = entries.find((entry) => entry.kind === "agent_finished");
      expect(finished?.data).toMatchObject({
        outcome: "stopped",
        tokens: 1000 + 100 + 1200 + 50 + 1300 + 10 + 1400 + 10,
      });
      expect(report.status).toBe("completed");
      // The key is read from the environment at call time and never written anywhere.
      expect(JSON.stringify(entries)).not.toContain("test-key-not-secret");
    } finally {
      await server.close();
    }
  });
});
