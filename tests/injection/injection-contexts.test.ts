import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { injectionTools } from "../../src/tools/servers/injection-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { ContextServer } from "./context-fixture.ts";
import { startContextServer } from "./context-fixture.ts";

let vulnerable: ContextServer;
let safe: ContextServer;

beforeAll(async () => {
  [vulnerable, safe] = await Promise.all([
    startContextServer({ vulnerable: true }),
    startContextServer({ vulnerable: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([vulnerable.close(), safe.close()]);
});

async function probe(tool: string, server: ContextServer): Promise<EnvelopeDraft[]> {
  const profile = profileFor({
    name: "context-fixture",
    source: {},
    entry_points: ["index.php", "server.js"],
    environment: { mode: "managed", base_url: server.baseUrl, allow_writes: true },
  });
  const map = systemMapFor({ target: "context-fixture", baseUrl: server.baseUrl, document: server.document });
  const context = probeContext({ profile, map, root: server.root, agent: "AUDITOR" });
  const definition = injectionTools.find((candidate) => candidate.name === tool)!;
  const result = await callTool(definition, {}, context);
  if (!result.ok) throw new Error(result.error);
  const data = result.data as { candidates: EnvelopeDraft[] };
  for (const candidate of data.candidates) EnvelopeDraftSchema.parse(candidate);
  return data.candidates;
}

describe("injection probes in harder contexts: vulnerable found, safe not", () => {
  it("probe_path_traversal climbs from the folder a prefix check wants, and into a PHP-style include", async () => {
    const candidates = await probe("probe_path_traversal", vulnerable);
    expect(summarize(candidates).sort()).toEqual([
      "injection GET /api/downloads [path-traversal:query:file]",
      "injection GET /index.php [path-traversal:query:page]",
    ]);
    const downloads = candidates.find((candidate) => candidate.location.value === "GET /api/downloads");
    expect(downloads!.title).toMatch(/after the accepted folder docs\//);
    expect(await probe("probe_path_traversal", safe)).toEqual([]);
  }, 120_000);

  it("probe_command_injection proves a blind shell by time on a slow-answering target", async () => {
    const candidates = await probe("probe_command_injection", vulnerable);
    expect(summarize(candidates)).toEqual(["injection GET /api/labels [command:query:title]"]);
    expect(candidates[0]!.title).toMatch(/time-based/);
    expect(await probe("probe_command_injection", safe)).toEqual([]);
  }, 120_000);
});
