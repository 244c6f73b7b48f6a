import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type DefectEnvelope, fingerprint } from "../../src/envelope/envelope.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { sampleEnvelope } from "../store/sample-envelope.ts";

// Two runs of one target in a temp store, written through the real RunStore: the second run finds one
// defect again, finds two new ones (one carrying a script payload, with a screenshot, an exchange and a
// generated test as artifacts) and no longer finds one of the first run's.

export const PAYLOAD = `<script>alert("qaas")</script>`;
// A 1×1 PNG.
const PIXEL = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

function finding(
  runId: string,
  overrides: Partial<DefectEnvelope> & Pick<DefectEnvelope, "id">,
): DefectEnvelope {
  const base = sampleEnvelope({ run_id: runId, ...overrides });
  return { ...base, dedupe: { fingerprint: fingerprint(base) } };
}

export interface TwoRuns {
  home: string;
  firstRun: string;
  secondRun: string;
}

export function twoRuns(): TwoRuns {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-report-"));
  const first = RunStore.create(home, { runId: "20261201-100000-aaaa", mode: "nightly", target: "shop" });
  first.append("run_started", { run_id: first.runId, mode: "nightly", target: "shop" });
  first.append("agent_started", { agent: "API", invocation: "api-1" }, "API");
  first.append(
    "agent_finished",
    { agent: "API", invocation: "api-1", outcome: "completed", turns: 3, cost_usd: 0, tokens: 0 },
    "API",
  );
  first.append("run_finished", { status: "completed", findings: 2, cost_usd: 0, tokens: 0 });
  first.writeEnvelope(finding(first.runId, { id: "env-a", severity: "medium" }));
  first.writeEnvelope(
    finding(first.runId, {
      id: "env-gone",
      title: "Listing orders answers 500",
      location: { kind: "endpoint", value: "GET /api/orders" },
      severity: "high",
    }),
  );
  backdate(first, "2026-12-01T10:00:00.000Z");

  const second = RunStore.create(home, { runId: "20261202-100000-bbbb", mode: "nightly", target: "shop" });
  const runId = second.runId;
  second.append("run_started", {
    run_id: runId,
    mode: "nightly",
    target: "shop",
    target_commit: "0123456789abcdef0123",
    target_branch: "main",
    target_dirty: false,
    budget: { usd: 2 },
  });
  second.append(
    "agent_started",
    { agent: "API", invocation: "api-1", unavailable_tools: ["run_single"] },
    "API",
  );
  second.append("tool_called", { tool: "http_request", ok: false, error: "connection refused" }, "API");
  second.append(
    "agent_finished",
    { agent: "API", invocation: "api-1", outcome: "completed", turns: 5, cost_usd: 0.01, tokens: 1200 },
    "API",
  );
  second.append("agent_started", { agent: "AUDITOR", invocation: "auditor-1" }, "AUDITOR");
  second.append(
    "agent_failed",
    { agent: "AUDITOR", invocation: "auditor-1", error: "probe crashed <b>hard</b>" },
    "AUDITOR",
  );
  second.append("agent_skipped", {
    agent: "SOCKET",
    invocation: "socket-1",
    reason: "the profile names no WebSocket path",
  });
  const screenshot = second.putArtifact("browser/home.png", PIXEL);
  const exchange = second.putArtifact(
    "security/xss/01-reflected.json",
    JSON.stringify({
      request: { method: "GET", url: `http://localhost:3000/search?q=${PAYLOAD}`, headers: {} },
      response: { status: 200, headers: { "content-type": "text/html" }, body: `<p>${PAYLOAD}</p>` },
    }),
  );
  const test = second.putArtifact("security/xss/search.test.mjs", `test("escapes ${PAYLOAD}", () => {});\n`);
  second.writeEnvelope(
    finding(runId, { id: "env-a", severity: "medium", discovered_at: "2026-12-02T10:00:01.000Z" }),
  );
  second.writeEnvelope(
    finding(runId, {
      id: "env-xss",
      discovered_by: "AUDITOR",
      discovered_at: "2026-12-02T10:00:02.000Z",
      domain: "security",
      defect_class: "xss",
      severity: "high",
      title: `Search reflects ${PAYLOAD} unescaped`,
      summary: `The q parameter comes back in the page as markup: ${PAYLOAD}`,
      location: {
        kind: "endpoint",
        value: "GET /search",
        source: { file: "src/routes/search.js", line: 42 },
      },
      evidence: [
        { kind: "exchange", description: "reflected payload", uri: exchange },
        { kind: "artifact", description: "screenshot of the page", uri: screenshot },
        {
          kind: "failing_test",
          description: "generated test",
          uri: test,
          test: { path: "tests/qaas/search.test.mjs", command: "node --test tests/qaas/search.test.mjs" },
        },
      ],
      reproduction: {
        steps: [`GET /search?q=${PAYLOAD}`],
        curl: `curl 'http://localhost:3000/search?q=${PAYLOAD}'`,
        test: { path: "tests/qaas/search.test.mjs", command: "node --test tests/qaas/search.test.mjs" },
      },
    }),
  );
  second.writeEnvelope(
    finding(runId, {
      id: "env-cycle",
      discovered_by: "ARCHITECT",
      discovered_at: "2026-12-02T10:00:03.000Z",
      domain: "architecture",
      defect_class: "circular-dependency",
      severity: "low",
      title: "Import cycle between two modules",
      location: { kind: "file", value: "src/a.js", related: [{ kind: "file", value: "src/b.js" }] },
    }),
  );
  second.append("run_finished", { status: "completed", findings: 3, cost_usd: 0.01, tokens: 1200 });
  return { home, firstRun: first.runId, secondRun: runId };
}

function backdate(store: RunStore, at: string): void {
  const text = fs.readFileSync(store.ledgerPath, "utf8").replaceAll(/"at":"[^"]+"/g, `"at":"${at}"`);
  fs.writeFileSync(store.ledgerPath, text);
}
