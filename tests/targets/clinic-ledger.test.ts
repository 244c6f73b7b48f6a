import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { loadGoldenLedger } from "../../src/score/golden-ledger.ts";
import { loadTarget } from "../../src/targets/load-target.ts";

// The clinic demo (target-flask/, Python and Flask) proves its golden ledger with its own unittest suite:
// one test per ledger entry, named after the entry's id (CLIN-07 → test_CLIN_07_…). This wrapper runs that
// suite with Debian's Python and holds the ledger and the tests together.

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = "/usr/bin/python3";

interface SuiteRun {
  code: number | null;
  output: string;
}

function runSuite(): Promise<SuiteRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ["-m", "unittest", "discover", "-s", "target-flask/tests", "-v"], {
      cwd: REPO,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** unittest -v prints `test_name (module.Class.test_name) ... ok` for each test. */
function testResults(output: string): Map<string, string> {
  const results = new Map<string, string>();
  for (const match of output.matchAll(/^(test_\w+) \([\w.]+\) \.\.\. (\w+)/gm)) {
    results.set(match[1]!, match[2]!);
  }
  return results;
}

/** `test_CLIN_N3_anything` → `CLIN-N3`. */
function ledgerIdOf(testName: string): string | undefined {
  const match = testName.match(/^test_([A-Z]+)_(N?\d+)_/);
  return match ? `${match[1]}-${match[2]}` : undefined;
}

describe("the clinic demo target (target-flask)", () => {
  const target = loadTarget("clinic");
  const ledger = loadGoldenLedger(target.goldenLedger ?? "");
  const ids = [...ledger.defects, ...ledger.not_defects].map((entry) => entry.id);
  let suite: SuiteRun = { code: null, output: "" };

  beforeAll(async () => {
    suite = await runSuite();
  }, 180_000);

  it("has a form sign-in profile without an API document, and a ledger named after it", () => {
    expect(ledger.target).toBe(target.profile.name);
    expect(target.profile.api?.openapi).toBeUndefined();
    expect(target.profile.auth?.login.kind).toBe("form");
    expect(target.profile.environment.mode).toBe("managed");
    expect(target.profile.api?.exclude).toContain("POST /__test/reset");
  });

  it("seeds at least twenty defects over six domains and lists correct code that looks wrong", () => {
    expect(ledger.defects.length).toBeGreaterThanOrEqual(20);
    expect(new Set(ledger.defects.map((defect) => defect.domain)).size).toBeGreaterThanOrEqual(6);
    expect(ledger.not_defects.length).toBeGreaterThanOrEqual(5);
  });

  it("passes the app's own test suite", () => {
    expect(suite.code, suite.output.slice(-4000)).toBe(0);
  });

  it("proves every ledger entry with a passing test named after its id", () => {
    const results = testResults(suite.output);
    const passed = new Set(
      [...results].filter(([, outcome]) => outcome === "ok").map(([name]) => ledgerIdOf(name)),
    );
    expect(ids.filter((id) => !passed.has(id))).toEqual([]);
  });

  it("has no test named after an id the ledger does not hold", () => {
    const known = new Set(ids);
    const named = [...testResults(suite.output).keys()].filter((name) => ledgerIdOf(name) !== undefined);
    expect(named.length).toBeGreaterThanOrEqual(ids.length);
    expect(named.filter((name) => !known.has(ledgerIdOf(name) ?? ""))).toEqual([]);
  });
});
