import { describe, expect, it } from "vitest";
import { invokeTool } from "../../src/tools/invoke-tool.ts";
import { loadedTarget, typescriptTree, writeTree } from "../architecture/fixture-trees.ts";
import { fakeRunContext, testAgent } from "../support/fake-run-context.ts";

describe("the ledger entry of a tool call", () => {
  it("keeps the probe's own counts beside the call, so a quiet probe can be explained afterwards", async () => {
    const context = fakeRunContext({
      target: loadedTarget(writeTree(typescriptTree())),
      agent: testAgent({ tools: ["find_god_modules", "get_system_map"] }),
    });
    const withStats = await invokeTool("find_god_modules", {}, context, "t-1");
    expect(withStats.ok).toBe(true);
    const withoutStats = await invokeTool("get_system_map", {}, context, "t-2");
    const calls = context.entries.filter((entry) => entry.kind === "tool_called");
    expect(calls.map((entry) => entry.data)).toEqual([
      expect.objectContaining({
        tool: "find_god_modules",
        ok: true,
        stats: expect.objectContaining({ god_modules: 1, considered: expect.any(Number) }),
      }),
      expect.not.objectContaining({ stats: expect.anything() }),
    ]);
    expect(withoutStats.ok).toBe(false);
  });
});
