import path from "node:path";
import { describe, expect, it } from "vitest";
import { check } from "../../src/guardrails/check.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { TOOL_CATALOG } from "../../src/tools/catalog.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { loadTools } from "../../src/tools/servers/load-server.ts";
import { fakeRunContext, testAgent } from "../support/fake-run-context.ts";

// The db and load servers: names from the catalog, and calls the guardrails can judge before they run.

function externalContext() {
  const profile = TargetProfileSchema.parse({
    name: "external",
    source: { path: "." },
    environment: { mode: "external", base_url: "http://127.0.0.1:9/", allow_writes: false },
    database: { kind: "sqlite", path: "data/app.db" },
  });
  const root = path.join(path.sep, "nonexistent", "target");
  const agent = testAgent({ name: "PROBER", tools: [...TOOL_CATALOG.db, ...TOOL_CATALOG.load] });
  return fakeRunContext({
    target: { profile, file: path.join(root, "t.yaml"), root, goldenLedger: undefined },
    agent,
  });
}

describe("db and load tool servers", () => {
  it("implement exactly the catalog's db and load tools, each on its server", () => {
    expect(dbTools.map((tool) => tool.name).sort()).toEqual([...TOOL_CATALOG.db].sort());
    expect(loadTools.map((tool) => tool.name).sort()).toEqual([...TOOL_CATALOG.load].sort());
    expect(new Set(dbTools.map((tool) => tool.server))).toEqual(new Set(["db"]));
    expect(new Set(loadTools.map((tool) => tool.server))).toEqual(new Set(["load"]));
  });

  it("composite probes declare a read of the target, so an external target without writes may run them", () => {
    const context = externalContext();
    for (const tool of [
      ...loadTools,
      ...dbTools.filter((entry) => ["confirm_constraint", "probe_race"].includes(entry.name)),
    ]) {
      expect(tool.actions?.(tool.input.parse({}), context)).toEqual([
        { kind: "http_request", method: "GET", url: "http://127.0.0.1:9/" },
      ]);
      expect(check(context.agent, tool, tool.input.parse({}), context)).toEqual({ allowed: true });
    }
  });

  it("a file named by an input is declared as a read, so the answer key stays out of reach", () => {
    const context = externalContext();
    const schema = dbTools.find((tool) => tool.name === "db_schema")!;
    const explain = dbTools.find((tool) => tool.name === "explain_query")!;
    expect(schema.actions?.({ path: "data/other.db" }, context)).toEqual([
      { kind: "read_file", path: "data/other.db" },
    ]);
    expect(schema.actions?.({}, context)).toEqual([]);
    const refused = check(context.agent, explain, { sql: "SELECT 1", path: "defects.yaml" }, context);
    expect(refused).toMatchObject({ allowed: false, rule: "golden-ledger" });
  });
});
