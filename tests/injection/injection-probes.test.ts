import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { injectionTools } from "../../src/tools/servers/injection-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { InjectionServer } from "./injection-fixture.ts";
import { startInjectionServer } from "./injection-fixture.ts";

let vulnerable: InjectionServer;
let safe: InjectionServer;

beforeAll(async () => {
  [vulnerable, safe] = await Promise.all([
    startInjectionServer({ vulnerable: true }),
    startInjectionServer({ vulnerable: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([vulnerable.close(), safe.close()]);
});

async function probe(
  tool: string,
  server: InjectionServer,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown>; artifactsDir: string }> {
  const profile = profileFor({
    name: "injection-fixture",
    source: {},
    environment: { mode: "managed", base_url: server.baseUrl, allow_writes: true },
  });
  const map = systemMapFor({
    target: "injection-fixture",
    baseUrl: server.baseUrl,
    document: server.document,
  });
  const context = probeContext({ profile, map, root: server.root, agent: "AUDITOR" });
  const definition = injectionTools.find((candidate) => candidate.name === tool);
  if (!definition) throw new Error(`no tool ${tool}`);
  const result = await callTool(definition, {}, context);
  if (!result.ok) throw new Error(result.error);
  const data = result.data as { candidates: EnvelopeDraft[]; stats: Record<string, unknown> };
  for (const candidate of data.candidates) EnvelopeDraftSchema.parse(candidate);
  return { ...data, artifactsDir: context.artifactsDir };
}

const execute = promisify(execFile);

/** Runs a finding's generated test against `server`: whether it failed, and what it printed. */
async function replay(
  draft: EnvelopeDraft,
  artifactsDir: string,
  server: InjectionServer,
): Promise<{ failed: boolean; output: string }> {
  const uri = draft.evidence.find((item) => item.kind === "failing_test")!.uri!;
  const file = path.join(artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
  try {
    const { stdout } = await execute(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: server.baseUrl },
      timeout: 20_000,
    });
    return { failed: false, output: stdout };
  } catch (error) {
    return { failed: true, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

function exchangeLabels(draft: EnvelopeDraft): string[] {
  return draft.evidence
    .filter((item) => item.kind === "exchange")
    .map((item) => item.description.split(":")[0]!);
}

describe("injection probes: the vulnerable build is found, the safe build is not", () => {
  it("probe_command_injection: a shell computed the echoed arithmetic", async () => {
    const { candidates } = await probe("probe_command_injection", vulnerable);
    expect(summarize(candidates)).toEqual(["injection GET /api/lookup [command:query:host]"]);
    expect(candidates[0]!.title).toMatch(/OS command injection/);
    expect(exchangeLabels(candidates[0]!)).toEqual([
      "shell-arithmetic",
      "shell-arithmetic-again",
      "baseline",
    ]);
    expect((await probe("probe_command_injection", safe)).candidates).toEqual([]);
  });

  it("probe_template_injection: the engine multiplied the operands", async () => {
    const { candidates } = await probe("probe_template_injection", vulnerable);
    expect(summarize(candidates)).toEqual(["injection GET /api/greeting [template:query:name]"]);
    expect(candidates[0]!.title).toMatch(/\{\{ \}\}/);
    expect((await probe("probe_template_injection", safe)).candidates).toEqual([]);
  });

  it("probe_path_traversal: ../ reaches the application's own source file, and an upload's name writes above its folder", async () => {
    const { candidates } = await probe("probe_path_traversal", vulnerable);
    expect(summarize(candidates)).toEqual([
      "injection GET /api/documents/read [path-traversal:query:file]",
      "injection POST /api/documents/upload [path-traversal-write:body:file]",
    ]);
    expect(exchangeLabels(candidates[0]!)).toEqual([
      "traversal",
      "traversal-again",
      "missing-file",
      "baseline",
    ]);
    expect(exchangeLabels(candidates[1]!)).toEqual(["plain-name", "traversal", "baseline"]);
    expect(candidates[1]!.summary).toMatch(
      /wrote docs\/qaas-[a-z0-9]+\.txt; set to \.\.\/ and another new name, it wrote qaas-[a-z0-9]+\.txt, one folder above/,
    );
    expect((await probe("probe_path_traversal", safe)).candidates).toEqual([]);
    // The upload's `file` names where it writes: the only names sent outside the folder are new ones of
    // qaas's own, never a file the application has, and none of the files the check wrote is left behind.
    expect(vulnerable.escapedWrites.length).toBeGreaterThan(0);
    for (const name of vulnerable.escapedWrites) expect(name).toMatch(/^\.\.\/qaas-[a-z0-9]+\.txt$/);
    const left = (folder: string): string[] =>
      fs
        .readdirSync(folder, { recursive: true, encoding: "utf8" })
        .filter((file) => /qaas-[a-z0-9]+\.txt$/.test(file));
    expect(left(vulnerable.root)).toEqual([]);
    expect(left(safe.root)).toEqual([]);
    expect(fs.readFileSync(path.join(vulnerable.root, "server.js"), "utf8")).toMatch(
      /the fixture application.s own entry point/,
    );
  });

  it("probe_log_injection: a line break in the sign-in name starts a log line of the client's own", async () => {
    const { candidates, stats } = await probe("probe_log_injection", vulnerable);
    expect(summarize(candidates)).toEqual(["injection POST /api/session [log:body:username]"]);
    expect(stats.log_files).toEqual(["logs/app.log"]);
    expect(candidates[0]!.evidence.map((item) => item.description).join("\n")).toMatch(
      /logs\/app\.log after the request: [\s\S]*sign-in attempt for/,
    );
    // The JSON logger escapes the break: the token stays inside the entry.
    const safeRun = await probe("probe_log_injection", safe);
    expect(safeRun.candidates).toEqual([]);
    expect(safeRun.stats.inputs_logged).toBeGreaterThan(0);
  });

  it("probe_ssrf: the loopback listener saw both tokens", async () => {
    const { candidates, stats } = await probe("probe_ssrf", vulnerable);
    // A whole URL, and a host whose scheme, port and path are inputs of their own.
    expect(summarize(candidates).sort()).toEqual([
      "ssrf POST /api/mirrors [ssrf:body:host]",
      "ssrf POST /api/previews [ssrf:body:url]",
    ]);
    expect(String(stats.listener)).toMatch(/^127\.0\.0\.1:\d+$/);
    expect((await probe("probe_ssrf", safe)).candidates).toEqual([]);
  });

  it("probe_xxe: an external entity read a shipped document", async () => {
    const { candidates } = await probe("probe_xxe", vulnerable);
    expect(summarize(candidates)).toEqual(["xxe POST /api/import [xxe:file]"]);
    expect((await probe("probe_xxe", safe)).candidates).toEqual([]);
  });

  it("probe_nosql_injection: an operator signs in without the secret", async () => {
    const { candidates } = await probe("probe_nosql_injection", vulnerable);
    expect(summarize(candidates)).toHaveLength(1);
    expect(candidates[0]!.title).toMatch(/NoSQL operator injection in body .*password/);
    expect((await probe("probe_nosql_injection", safe)).candidates).toEqual([]);
  });

  it("probe_open_redirect: the Location header names the client's host", async () => {
    const { candidates } = await probe("probe_open_redirect", vulnerable);
    expect(summarize(candidates)).toEqual(["open-redirect GET /auth/continue [open-redirect:query:next]"]);
    expect(candidates[0]!.title).toMatch(/absolute URL/);
    expect((await probe("probe_open_redirect", safe)).candidates).toEqual([]);
  });

  it("probe_insecure_deserialization: a revived function returned the product", async () => {
    const { candidates } = await probe("probe_insecure_deserialization", vulnerable);
    expect(summarize(candidates)).toEqual([
      "insecure-deserialization POST /api/drafts/restore [deserialization:body:state]",
    ]);
    expect(candidates[0]!.title).toMatch(/node-serialize/);
    expect((await probe("probe_insecure_deserialization", safe)).candidates).toEqual([]);
  });

  // The proof a person replays: each finding's generated test fails on the vulnerable build, on the
  // assertion that encodes the defect (a file's text found escaped inside a JSON string counts), and
  // passes on the safe build.
  for (const tool of [
    "probe_command_injection",
    "probe_template_injection",
    "probe_path_traversal",
    "probe_xxe",
    "probe_insecure_deserialization",
  ]) {
    it(`${tool}: the generated test fails on the vulnerable build and passes on the safe one`, async () => {
      const { candidates: found, artifactsDir } = await probe(tool, vulnerable);
      // A write traversal is proven on the target's disk and ships without a test: the others each have one.
      const candidates = found.filter((candidate) =>
        candidate.evidence.some((item) => item.kind === "failing_test"),
      );
      expect(candidates).toHaveLength(1);
      const onVulnerable = await replay(candidates[0]!, artifactsDir, vulnerable);
      expect(onVulnerable.failed).toBe(true);
      expect(onVulnerable.output).toMatch(/not ok 1 .*\n[\s\S]*ERR_ASSERTION/);
      expect(await replay(candidates[0]!, artifactsDir, safe)).toMatchObject({ failed: false });
    });
  }
});
