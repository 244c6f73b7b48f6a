import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";

const execute = promisify(execFile);

/** Runs the candidates' generated tests against `baseUrl` in one `node --test`: test title → passed. */
export async function generatedTests(
  context: FakeRunContext,
  drafts: EnvelopeDraft[],
  baseUrl: string,
): Promise<Record<string, boolean>> {
  const files = drafts.map((draft) => {
    const item = draft.evidence.find((evidence) => evidence.kind === "failing_test")!;
    return path.join(context.artifactsDir, item.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
  });
  let output: string;
  try {
    output = (
      await execute(process.execPath, ["--test", "--test-reporter=tap", ...files], {
        env: { ...process.env, QAAS_BASE_URL: baseUrl },
        timeout: 150_000,
      })
    ).stdout;
  } catch (error) {
    output = (error as { stdout?: string }).stdout ?? "";
  }
  const results: Record<string, boolean> = {};
  for (const match of output.matchAll(/^(not ok|ok) \d+ - (.+)$/gm)) results[match[2]!] = match[1] === "ok";
  return results;
}
