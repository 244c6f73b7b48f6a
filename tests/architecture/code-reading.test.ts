import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { check } from "../../src/guardrails/check.ts";
import { codeTools } from "../../src/tools/servers/code-server.ts";
import type { ToolDefinition } from "../../src/tools/tool.ts";
import { callTool, fakeRunContext, testAgent } from "../support/fake-run-context.ts";
import { dataOf, loadedTarget, writeTree } from "./fixture-trees.ts";

const tool = (name: string): ToolDefinition => codeTools.find((candidate) => candidate.name === name)!;

// The answer key holds the secret word; nothing a code tool answers may ever contain it.
const SECRET = "PLANTED-ANSWER-KEY-LINE";

function targetWithAnswerKey() {
  const root = writeTree({
    "src/app.ts": `export const greeting = "hello";\n// mentions the key word: ANSWER\n`,
    "qa/answers.yaml": `defects:\n  - id: X-1\n    title: ${SECRET} ANSWER\n`,
    "defects.yaml": `defects:\n  - title: ${SECRET} ANSWER\n`,
    "docs/notes/defects.yml": `${SECRET} ANSWER\n`,
  });
  fs.symlinkSync(path.join(root, "qa/answers.yaml"), path.join(root, "src/linked.yaml"));
  const target = loadedTarget(root, { golden_ledger: "qa/answers.yaml" }, path.join(root, "qa/answers.yaml"));
  const agent = testAgent({ name: "ARCHITECT", tools: ["read_file", "search_code"] });
  return { root, context: fakeRunContext({ target, agent }), agent };
}

describe("read_file and search_code keep the answer key unreadable", () => {
  it("denies the golden ledger and any defects.yaml through the real guardrail, and reads ordinary files", async () => {
    const { context, agent } = targetWithAnswerKey();
    const readFile = tool("read_file");
    for (const denied of [
      "qa/answers.yaml",
      "defects.yaml",
      "docs/notes/defects.yml",
      "src/linked.yaml",
      "src/../qa/answers.yaml",
    ]) {
      const decision = check(agent, readFile, { path: denied }, context);
      expect(decision, denied).toMatchObject({ allowed: false, rule: "golden-ledger" });
    }
    expect(check(agent, readFile, { path: "src/app.ts" }, context)).toEqual({ allowed: true });
    const read = await callTool(readFile, { path: "src/app.ts" }, context);
    expect(read).toMatchObject({ ok: true, data: { path: "src/app.ts", start_line: 1, total_lines: 3 } });
    expect(dataOf<{ text: string }>(read).text).toContain('greeting = "hello"');
  });

  it("refuses the answer key and escapes even when called without the guardrail", async () => {
    const { context } = targetWithAnswerKey();
    for (const denied of [
      "qa/answers.yaml",
      "defects.yaml",
      "src/linked.yaml",
      "../outside.txt",
      "/etc/hostname",
    ]) {
      const result = await callTool(tool("read_file"), { path: denied }, context);
      expect(result.ok, denied).toBe(false);
      expect(JSON.stringify(result)).not.toContain(SECRET);
    }
  });

  it("never returns a line of the answer key from a search", async () => {
    const { context, agent } = targetWithAnswerKey();
    expect(check(agent, tool("search_code"), { query: "ANSWER" }, context)).toEqual({ allowed: true });
    const result = await callTool(tool("search_code"), { query: "answer" }, context);
    const data = dataOf<{ matches: Array<{ file: string; line: number }> }>(result);
    expect(data.matches).toEqual([{ file: "src/app.ts", line: 2, text: "// mentions the key word: ANSWER" }]);
    expect(JSON.stringify(await callTool(tool("search_code"), { query: SECRET }, context))).not.toContain(
      "answers",
    );
    const regex = await callTool(tool("search_code"), { query: "PLANTED.*LINE", regex: true }, context);
    expect(dataOf<{ matches: unknown[] }>(regex).matches).toEqual([]);
  });

  it("keeps the graph build away from the answer key", async () => {
    const { context } = targetWithAnswerKey();
    const result = await callTool(tool("import_graph"), {}, context);
    expect(result.ok).toBe(true);
    const artifact = fs.readFileSync(
      path.join(context.artifactsDir, "architecture/import-graph.json"),
      "utf8",
    );
    expect(artifact).not.toContain("answers.yaml");
    expect(artifact).not.toContain(SECRET);
  });

  it("bounds a search and reports a bad pattern as an error", async () => {
    const root = writeTree(
      Object.fromEntries(
        Array.from({ length: 30 }, (_, index) => [`src/m${index}.ts`, "export const todo = 1; // TODO\n"]),
      ),
    );
    const context = fakeRunContext({ target: loadedTarget(root) });
    const limited = await callTool(tool("search_code"), { query: "TODO", max_results: 5 }, context);
    expect(dataOf<{ truncated: boolean; matches: unknown[] }>(limited)).toMatchObject({ truncated: true });
    expect(dataOf<{ matches: unknown[] }>(limited).matches).toHaveLength(5);
    const scoped = await callTool(tool("search_code"), { query: "TODO", path: "src/m1*.ts" }, context);
    expect(dataOf<{ matches: unknown[] }>(scoped).matches).toHaveLength(11);
    const bad = await callTool(tool("search_code"), { query: "(", regex: true }, context);
    expect(bad).toMatchObject({ ok: false });
  });
});
