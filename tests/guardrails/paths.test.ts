import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { physicalPath, resolveTargetPath } from "../../src/guardrails/paths.ts";
import { createFixture } from "./fixture.ts";

const fixture = createFixture();
afterAll(() => fixture.cleanup());
const realBase = fs.realpathSync(fixture.base);
const realRoot = path.join(realBase, "target");

describe("resolveTargetPath", () => {
  it("resolves an ordinary path, existing or not, relative to the root", () => {
    expect(resolveTargetPath(fixture.root, "./src//app.ts")).toEqual({
      ok: true,
      absolute: path.join(realRoot, "src", "app.ts"),
      relative: "src/app.ts",
      requested: "src/app.ts",
    });
    expect(resolveTargetPath(fixture.root, "new/dir/file.ts")).toMatchObject({
      ok: true,
      relative: "new/dir/file.ts",
    });
  });

  it("judges a link inside the tree by where it lands", () => {
    expect(resolveTargetPath(fixture.root, "tests/qaas/to-src/app.ts")).toMatchObject({
      ok: true,
      relative: "src/app.ts",
      requested: "tests/qaas/to-src/app.ts",
    });
  });

  it.each([
    ["", /empty/],
    ["../outside/x.ts", /climb out/],
    ["/etc/passwd", /absolute path outside/],
    ["tests/qaas/escape/x.ts", /symbolic link to .*outside/],
    ["tests/qaas/leak.ts", /symbolic link to .*secret\.ts/],
    ["tests/qaas/dangling.ts", /created-through-link\.ts, outside/],
    ["tests/qaas/escape/../answers/seeded.yaml", /outside the target root/],
    [".", /root itself/],
  ])("refuses %j", (candidate, problem) => {
    const resolved = resolveTargetPath(fixture.root, candidate);
    expect(resolved.ok).toBe(false);
    expect(!resolved.ok && resolved.problem).toMatch(problem);
  });

  it("refuses a loop of links", () => {
    const loop = path.join(fixture.root, "loop");
    fs.symlinkSync("loop", loop);
    try {
      expect(resolveTargetPath(fixture.root, "loop/x.ts")).toMatchObject({
        ok: false,
        problem: expect.stringMatching(/loop/),
      });
    } finally {
      fs.unlinkSync(loop);
    }
  });

  it("reports a missing root", () => {
    expect(resolveTargetPath(path.join(fixture.base, "missing"), "a.ts")).toMatchObject({ ok: false });
  });
});

describe("physicalPath", () => {
  it("applies `..` to the real parent of a link, as the operating system does", () => {
    expect(physicalPath("tests/qaas/escape/../answers", realRoot)).toBe(path.join(realBase, "answers"));
  });

  it("follows a link to the golden ledger", () => {
    expect(physicalPath("notes.yaml", fixture.root)).toBe(fs.realpathSync(fixture.goldenLedger));
  });
});
