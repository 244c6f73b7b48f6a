import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import type { FakeRunContext } from "./fake-run-context.ts";
import { callTool } from "./fake-run-context.ts";

// What the fuzzing tests share: calling fuzz_operation without property runs, and running a draft's
// generated test against the target as a person would replay it.

const execute = promisify(execFile);

/** fuzz_operation's candidates on the context's map (no property-based runs: those are random). */
export async function fuzzCandidates(context: FakeRunContext): Promise<EnvelopeDraft[]> {
  const definition = contractTools.find((candidate) => candidate.name === "fuzz_operation")!;
  const result = await callTool(definition, { property_runs: 0 }, context);
  if (!result.ok) throw new Error(result.error);
  return (result.data as { candidates: EnvelopeDraft[] }).candidates;
}

/** Runs the draft's generated test against `baseUrl`: "passed", or "failed: " and what it printed. */
export async function runGeneratedTest(
  context: FakeRunContext,
  draft: EnvelopeDraft,
  baseUrl: string,
): Promise<string> {
  const uri = draft.evidence.find((item) => item.kind === "failing_test")?.uri;
  if (!uri) throw new Error(`"${draft.title}" has no generated test`);
  const file = path.join(context.artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
  return execute(process.execPath, ["--test", file], {
    timeout: 20_000,
    env: { ...process.env, QAAS_BASE_URL: baseUrl },
  }).then(
    () => "passed",
    (error: { stdout?: string }) => `failed: ${error.stdout ?? ""}`,
  );
}
