import { execFile } from "node:child_process";
import { promisify } from "node:util";

const execute = promisify(execFile);

/**
 * Runs a generated test as REPRODUCER would: plain `node --test`, the base URL (and any other variables)
 * in the environment. Answers its exit code and everything it printed.
 */
export async function runNodeTest(
  file: string,
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await execute(process.execPath, ["--test", file], {
      env: { ...process.env, ...env },
      timeout: 20_000,
    });
    return { code: 0, output: stdout };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? 1, output: `${failure.stdout ?? ""}${failure.stderr ?? ""}` };
  }
}
