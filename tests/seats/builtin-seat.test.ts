import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BuiltinSeat } from "../../src/seats/builtin-seat.ts";
import { err } from "../../src/tools/result.ts";
import { recordingSeatRequest } from "./fakes/seat-request.ts";

const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-builtin-seat-"));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

function writePlaybook(name: string, source: string): string {
  const file = path.join(folder, name);
  fs.writeFileSync(file, source);
  return file;
}

const probingPlaybook = writePlaybook(
  "probe.mjs",
  `export default async function (session) {
     const first = await session.call("http_get", { path: "/" + session.task.route });
     session.log("first answered " + JSON.stringify(first));
     const second = await session.call("write_file", { path: "x" });
     if (!second.ok) session.log("denied: " + second.error);
   }`,
);

describe("BuiltinSeat", () => {
  it("runs the playbook's default export with the guarded callTool; no cost, turns = tool calls", async () => {
    const request = recordingSeatRequest({
      playbook: probingPlaybook,
      taskData: { route: "items" },
      answers: { write_file: err("denied by write-scope") },
    });

    const result = await new BuiltinSeat().run(request);

    expect(result).toEqual({
      outcome: "completed",
      turns: 2,
      usage: { inputTokens: 0, outputTokens: 0 },
      costUsd: 0,
      warnings: [],
    });
    expect(request.toolCalls).toEqual([
      { name: "http_get", input: { path: "/items" } },
      { name: "write_file", input: { path: "x" } },
    ]);
    expect(request.logs).toContain("denied: denied by write-scope");
    expect(request.stopChecks).toEqual([{ allow: true }]);
  });

  it("lets a refused playbook go at once: outcome stopped, reason logged, checkStop asked once", async () => {
    const request = recordingSeatRequest({
      playbook: probingPlaybook,
      taskData: { route: "" },
      mustCall: ["emit_envelope"],
    });

    const result = await new BuiltinSeat().run(request);

    expect(result.outcome).toBe("stopped");
    expect(request.stopChecks).toHaveLength(1);
    expect(request.logs.at(-1)).toMatch(
      /You must call emit_envelope before finishing.*cannot be talked round/,
    );
  });

  it("loads a TypeScript playbook written with definePlaybook", async () => {
    const playbookModule = path.resolve("src/agents/playbook.ts");
    const file = writePlaybook(
      "typed.ts",
      `import { definePlaybook } from ${JSON.stringify(playbookModule)};
       export default definePlaybook(async (session) => { await session.call("noop", { agent: session.agent }); });`,
    );
    const request = recordingSeatRequest({ playbook: file });
    await expect(new BuiltinSeat().run(request)).resolves.toMatchObject({ outcome: "completed", turns: 1 });
    expect(request.toolCalls).toEqual([{ name: "noop", input: { agent: "TESTER" } }]);
  });

  it("throws a clear error when the agent has no playbook", async () => {
    await expect(new BuiltinSeat().run(recordingSeatRequest({ agent: "MAPPER" }))).rejects.toMatchObject({
      code: "PLAYBOOK_MISSING",
      message: expect.stringContaining("agent MAPPER runs on the builtin seat but has no playbook"),
    });
  });

  it("throws a clear error for a module without a default function", async () => {
    const file = writePlaybook("bad.mjs", "export const notDefault = 1;\n");
    await expect(new BuiltinSeat().run(recordingSeatRequest({ playbook: file }))).rejects.toMatchObject({
      code: "PLAYBOOK_INVALID",
    });
  });

  it("passes a playbook's own failure through to the router", async () => {
    const file = writePlaybook(
      "throws.mjs",
      "export default async () => { throw new Error('probe exploded'); };\n",
    );
    await expect(new BuiltinSeat().run(recordingSeatRequest({ playbook: file }))).rejects.toThrow(
      "probe exploded",
    );
  });
});
