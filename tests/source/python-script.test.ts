import { describe, expect, it } from "vitest";
import { runPythonScript } from "../../src/probes/source/python-script.ts";

// The source scans' Python child: its answer, each way it can fail said in words, and the run's event loop
// free while it works (a synchronous spawn held every agent's requests for the length of the parse).

const LIMITS = { timeoutMs: 20_000, maxOutputBytes: 1024 * 1024 };

describe("runPythonScript", () => {
  it("hands the input to the script as JSON and answers what it printed", async () => {
    const result = await runPythonScript(
      "import json, sys\nrequest = json.load(sys.stdin)\nprint(json.dumps({'files': len(request['files'])}))",
      { root: "/src", files: ["a.py", "b.py"] },
      LIMITS,
    );
    expect(result.ok && JSON.parse(result.stdout)).toEqual({ files: 2 });
  });

  it("runs a script longer than one command-line argument may be (128 KiB)", async () => {
    const padding = `# ${"x".repeat(100)}\n`.repeat(1500);
    const result = await runPythonScript(`${padding}print(len(open(__file__).read()))`, {}, LIMITS);
    expect(result.ok && Number(result.stdout)).toBeGreaterThan(128 * 1024);
  });

  it("says why a script failed: its last error line, an answer too long, or no answer in time", async () => {
    const raised = await runPythonScript("raise SystemExit('the tree did not parse')", {}, LIMITS);
    expect(raised).toEqual({ ok: false, reason: "the tree did not parse" });
    const long = await runPythonScript("print('x' * 5000)", {}, { ...LIMITS, maxOutputBytes: 1000 });
    expect(long).toEqual({ ok: false, reason: "output over 1000 bytes" });
    const slow = await runPythonScript("import time\ntime.sleep(5)", {}, { ...LIMITS, timeoutMs: 300 });
    expect(slow).toEqual({ ok: false, reason: "no answer within 300 ms" });
  });

  it("leaves the event loop free while the script works", async () => {
    let ticks = 0;
    const ticking = setInterval(() => {
      ticks += 1;
    }, 20);
    try {
      const result = await runPythonScript("import time\ntime.sleep(0.6)\nprint('done')", {}, LIMITS);
      expect(result).toEqual({ ok: true, stdout: "done\n" });
    } finally {
      clearInterval(ticking);
    }
    // Held, the interval would not have run once before the answer came.
    expect(ticks).toBeGreaterThan(5);
  });
});
