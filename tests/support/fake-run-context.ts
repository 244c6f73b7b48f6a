import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Playbook, PlaybookSession } from "../../src/agents/playbook.ts";
import type { AgentConfig } from "../../src/config/agent-schema.ts";
import { AgentConfigSchema } from "../../src/config/agent-schema.ts";
import type { SystemConfig } from "../../src/config/system-schema.ts";
import { SystemConfigSchema } from "../../src/config/system-schema.ts";
import type { DefectEnvelope } from "../../src/envelope/envelope.ts";
import type { SystemMap } from "../../src/map/system-map.ts";
import type { LedgerEntry, LedgerKind } from "../../src/store/ledger-kinds.ts";
import type { LoadedTarget, ToolContext } from "../../src/tools/context.ts";
import type { ToolResult } from "../../src/tools/result.ts";
import { err } from "../../src/tools/result.ts";
import type { ToolDefinition } from "../../src/tools/tool.ts";

// A tool context for unit tests of tools and playbooks: a real temp folder for artifacts, an in-memory
// ledger, no guardrails. Engine tests use the real runner instead.

export const testSystemConfig = (): SystemConfig =>
  SystemConfigSchema.parse({
    version: 1,
    run_modes: { nightly: { roster: ["MAPPER"] } },
    thresholds: {},
    loop: {},
    seats: { worker: { backend: "builtin" }, orchestrator: { backend: "rules" } },
    forbidden_paths: { migrations: ["**/migrations/**"] },
  });

export const testAgent = (overrides: Partial<AgentConfig> = {}): AgentConfig =>
  AgentConfigSchema.parse({
    name: "TESTER",
    description: "test agent",
    layer: "discover",
    phase: "discover",
    ...overrides,
  });

export interface FakeRunContext extends ToolContext {
  entries: LedgerEntry[];
  artifactsDir: string;
  setSystemMap(map: SystemMap | undefined): void;
}

export function fakeRunContext(
  options: { target?: LoadedTarget; agent?: AgentConfig; systemMap?: SystemMap } = {},
): FakeRunContext {
  const artifactsDir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-artifacts-"));
  const runId = "run-test";
  const entries: LedgerEntry[] = [];
  const envelopes: DefectEnvelope[] = [];
  const remembered = new Map<string, Array<{ runId: string; envelopeId: string; at: string }>>();
  let systemMap = options.systemMap;
  const controller = new AbortController();
  return {
    runId,
    home: artifactsDir,
    system: testSystemConfig(),
    target: options.target,
    systemMap: () => systemMap,
    setSystemMap: (map) => {
      systemMap = map;
    },
    saveSystemMap: (map) => {
      systemMap = map;
      return { version: 1 };
    },
    record(kind: LedgerKind, data: Record<string, unknown>, agent?: string) {
      const entry: LedgerEntry = { seq: entries.length + 1, at: new Date().toISOString(), kind, agent, data };
      entries.push(entry);
      return entry;
    },
    putArtifact(name: string, content: string | Uint8Array) {
      const file = path.join(artifactsDir, name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
      return `artifact://${runId}/${name}`;
    },
    writeEnvelope: (envelope) => {
      envelopes.push(envelope);
    },
    readEnvelopes: () => [...envelopes],
    memory: {
      record(entry) {
        const seen = remembered.get(entry.fingerprint) ?? [];
        seen.push({ runId: entry.runId, envelopeId: entry.envelopeId, at: new Date().toISOString() });
        remembered.set(entry.fingerprint, seen);
        return { firstSeen: seen.length === 1, occurrences: seen.length };
      },
      searchSimilar: () => [],
      occurrences: (fingerprint) => remembered.get(fingerprint) ?? [],
    },
    shared: new Map(),
    signal: controller.signal,
    agent: options.agent ?? testAgent(),
    guard: { ticketsFiled: 0, filesChanged: new Map() },
    entries,
    artifactsDir,
  };
}

/** Calls a tool the way the runner does (input parsed by its schema), minus the guardrails. */
export async function callTool(
  tool: ToolDefinition,
  input: unknown,
  context: ToolContext,
): Promise<ToolResult> {
  const parsed = tool.input.safeParse(input);
  if (!parsed.success) return err(`invalid input for ${tool.name}: ${parsed.error.message}`);
  return tool.run(parsed.data, context);
}

/** Runs a playbook against a set of tools directly, recording every call. */
export async function runPlaybookDirectly(
  playbook: Playbook,
  tools: ToolDefinition[],
  context: ToolContext,
  task: Record<string, unknown> = {},
): Promise<Array<{ tool: string; input: unknown; result: ToolResult }>> {
  const calls: Array<{ tool: string; input: unknown; result: ToolResult }> = [];
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const session: PlaybookSession = {
    agent: context.agent.name,
    task,
    async call<Data>(name: string, input: unknown) {
      const tool = byName.get(name);
      const result = tool ? await callTool(tool, input, context) : err(`unknown tool ${name}`);
      calls.push({ tool: name, input, result });
      return result as ToolResult<Data>;
    },
    log: () => {},
    signal: context.signal,
  };
  await playbook(session);
  return calls;
}
