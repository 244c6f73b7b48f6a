import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sampleDescendants } from "../../src/bench/process-sampler.ts";

// The bench's memory figure for the browser must be the browser's: a generated test or script that qaas
// runs as a child process is counted apart.

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

function child(command: string, args: string[]): Promise<ChildProcess> {
  const process = spawn(command, args, { stdio: "ignore" });
  started.push(process);
  return new Promise((resolve) => process.once("spawn", () => resolve(process)));
}

describe("sampleDescendants", () => {
  it("counts a child that is not a browser as other, not as browser", async () => {
    const before = sampleDescendants(process.pid);
    await child(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const during = sampleDescendants(process.pid);
    expect(during.other).toBeGreaterThan(before.other + 10);
    expect(during.browser).toBe(before.browser);
  });

  it("counts a process named like Chromium, and what it starts, as the browser", async () => {
    const before = sampleDescendants(process.pid);
    const fake = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "qaas-sampler-")), "chromium");
    fs.copyFileSync("/bin/sh", fake);
    fs.chmodSync(fake, 0o755);
    // The fake browser starts a helper with another name, as Chromium starts its renderers.
    const browser = await child(fake, ["-c", "sleep 30 & wait"]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const during = sampleDescendants(process.pid);
    expect(during.browser).toBeGreaterThan(before.browser);
    // Counted as a browser of its own (the totals of "other" may move: test files share this process).
    expect([...during.browserCpu.keys()]).toContain(browser.pid);
  });

  it("keeps the CPU time of a browser's helpers that ended in that browser's figure", async () => {
    const fake = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "qaas-sampler-")), "chromium");
    fs.copyFileSync("/bin/sh", fake);
    fs.chmodSync(fake, 0o755);
    // A helper that computes for a second and ends, as a renderer does when its tab closes.
    const browser = await child(fake, ["-c", "timeout 1 sh -c 'while :; do :; done'; sleep 30"]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const seconds = sampleDescendants(process.pid).browserCpu.get(browser.pid as number) ?? 0;
    expect(seconds).toBeGreaterThan(0.5);
  });
});
