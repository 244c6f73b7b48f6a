import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const BENCH_CORPUS = fileURLToPath(new URL("../../bin/bench-corpus.js", import.meta.url));

async function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BENCH_CORPUS, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("bench command lines", () => {
  it("lists the options with --help and starts nothing", async () => {
    const { code, stdout } = await bench(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: npm run bench:corpus -- \[options\]/);
    expect(stdout).toMatch(/--class <class> +only these families, comma-separated/);
    expect(stdout).toMatch(/--parallel <parallel> +corpus servers scanned at once \(default 3\)/);
  }, 60_000);

  it("names an unknown option in one line instead of a stack trace", async () => {
    const { code, stderr } = await bench(["--bogus"]);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe("npm run bench:corpus --: Unknown option '--bogus' (see --help)");
  }, 60_000);
});
