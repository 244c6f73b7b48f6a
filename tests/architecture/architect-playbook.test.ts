import { describe, expect, it } from "vitest";
import architect from "../../src/agents/playbooks/architect.ts";
import { codeTools } from "../../src/tools/servers/code-server.ts";
import { envelopeTools } from "../../src/tools/servers/envelope-server.ts";
import { fakeRunContext, runPlaybookDirectly, testAgent } from "../support/fake-run-context.ts";
import { loadedTarget, typescriptTree, writeTree } from "./fixture-trees.ts";

describe("the ARCHITECT playbook", () => {
  it("runs every check once over one graph and emits each candidate as an envelope", async () => {
    const context = fakeRunContext({
      target: loadedTarget(writeTree(typescriptTree())),
      agent: testAgent({ name: "ARCHITECT" }),
    });
    const calls = await runPlaybookDirectly(architect, [...codeTools, ...envelopeTools], context);
    expect(calls.map((call) => call.tool).filter((name) => name !== "emit_envelope")).toEqual([
      "get_system_map",
      "import_graph",
      "find_cycles",
      "check_layering",
      "find_god_modules",
      "find_dead_code",
    ]);
    const envelopes = context.readEnvelopes();
    const filed = envelopes
      .filter((envelope) => envelope.tracker.state !== "held")
      .map((envelope) => `${envelope.defect_class} ${envelope.location.value}`)
      .sort();
    expect(filed).toEqual([
      "circular-dependency src/services/billing.ts",
      "dead-code src/lib/legacy-report.ts",
      "dead-code src/lib/old-export.ts",
      "god-module src/services/everything.ts",
      "layering-violation src/db/audit-log.ts",
      "layering-violation src/routes/reports.ts",
    ]);
    const held = envelopes.filter((envelope) => envelope.tracker.state === "held");
    expect(held.map((envelope) => envelope.location.value)).toEqual(["src/db/connection.ts"]);
    expect(
      envelopes.every(
        (envelope) => envelope.discovered_by === "ARCHITECT" && envelope.domain === "architecture",
      ),
    ).toBe(true);
  });

  it("stops quietly when the target has no source", async () => {
    const context = fakeRunContext({ agent: testAgent({ name: "ARCHITECT" }) });
    const calls = await runPlaybookDirectly(architect, [...codeTools, ...envelopeTools], context);
    expect(calls.map((call) => call.tool)).toEqual(["get_system_map", "import_graph"]);
    expect(context.readEnvelopes()).toEqual([]);
  });
});
