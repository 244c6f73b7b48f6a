import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { PlaybookSession } from "../../src/agents/playbook.ts";
import triage from "../../src/agents/playbooks/triage.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import type { SystemConfig } from "../../src/config/system-schema.ts";
import { type DefectEnvelope, ENVELOPE_VERSION, fingerprint } from "../../src/envelope/envelope.ts";
import { DefectMemory } from "../../src/memory/defect-memory.ts";
import { createRunContext } from "../../src/run/run-context.ts";
import type { LedgerEntry } from "../../src/store/ledger-kinds.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { SystemMapStore } from "../../src/store/system-map-store.ts";
import type { ToolContext } from "../../src/tools/context.ts";
import { invokeTool } from "../../src/tools/invoke-tool.ts";
import type { ToolResult } from "../../src/tools/result.ts";
import { rememberEnvelope } from "../../src/tools/servers/envelope-server.ts";

// One run of the real TRIAGE playbook on a real run store, defect memory and local tracker, with every
// call going through invokeTool (allowlist from config/agents/triage.yaml, guardrails, ledger).

const config = loadConfig();

export function newHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "qaas-triage-"));
}

export interface TriageRun {
  context: ToolContext;
  store: RunStore;
  memory: DefectMemory;
  add(finding: Partial<DefectEnvelope> & Pick<DefectEnvelope, "id">): DefectEnvelope;
  /** Records a reproduction; `outcome` as REPRODUCER writes it (without it, the record of older runs). */
  reproduced(findingId: string, reproduced: boolean, outcome?: { status: string; fileable: boolean }): void;
  run(): Promise<{ logs: string[]; calls: Array<{ tool: string; result: ToolResult }> }>;
  ledger(kind?: string): LedgerEntry[];
  close(): void;
}

export function startRun(home: string, runId: string, system: Partial<SystemConfig> = {}): TriageRun {
  const store = RunStore.create(home, { runId, mode: "nightly", target: "synthetic" });
  const memory = DefectMemory.open(home);
  const controller = new AbortController();
  const run = createRunContext({
    store,
    system: { ...config.system, tracker: { kind: "local" }, ...system },
    target: undefined,
    memory,
    maps: new SystemMapStore(home),
    signal: controller.signal,
  });
  const context: ToolContext = {
    ...run,
    agent: config.agents.get("TRIAGE")!.config,
    guard: { ticketsFiled: 0, filesChanged: new Map() },
  };
  return {
    context,
    store,
    memory,
    add(partial) {
      const base: DefectEnvelope = {
        envelope_version: ENVELOPE_VERSION,
        run_id: runId,
        discovered_by: "API",
        discovered_at: "2026-01-01T00:00:00.000Z",
        domain: "api",
        defect_class: "unhandled-error",
        title: "A finding",
        summary: "What happens.",
        location: { kind: "endpoint", value: "GET /things" },
        evidence: [{ kind: "artifact", description: "the exchange", uri: `artifact://${runId}/x.txt` }],
        reproduction: { steps: ["send it"] },
        impact: "Users see errors.",
        severity: "medium",
        confidence: 0.9,
        suggested_owner: null,
        suggested_fix_area: null,
        autonomy_eligible: false,
        dedupe: { fingerprint: "" },
        tracker: { state: "unfiled", key: null, url: null },
        ...partial,
      };
      const envelope = { ...base, dedupe: { ...base.dedupe, fingerprint: fingerprint(base) } };
      if (envelope.confidence < 0.7) envelope.tracker = { state: "held", key: null, url: null };
      context.writeEnvelope(envelope);
      rememberEnvelope(context, envelope);
      return envelope;
    },
    reproduced(findingId, reproduced, outcome) {
      store.append(
        "finding_reproduced",
        { finding_id: findingId, reproduced, flake_rate: 0, ...outcome },
        "REPRODUCER",
      );
    },
    async run() {
      const logs: string[] = [];
      const calls: Array<{ tool: string; result: ToolResult }> = [];
      const session: PlaybookSession = {
        agent: "TRIAGE",
        task: { run_id: runId },
        async call<Data>(tool: string, input: unknown) {
          const result = await invokeTool(tool, input, context, `${runId}-triage`);
          calls.push({ tool, result });
          return result as ToolResult<Data>;
        },
        log: (message) => logs.push(message),
        signal: controller.signal,
      };
      await triage(session);
      return { logs, calls };
    },
    ledger: (kind) => store.readLedger().entries.filter((entry) => kind === undefined || entry.kind === kind),
    close: () => memory.close(),
  };
}
