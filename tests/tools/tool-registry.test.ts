import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CATALOG_TOOL_NAMES, serverOfTool } from "../../src/tools/catalog.ts";
import { IMPLEMENTED_TOOLS } from "../../src/tools/tool-registry.ts";

describe("the tool registry", () => {
  it("implements only catalog names, each once, on the catalog's server", () => {
    const names = IMPLEMENTED_TOOLS.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    for (const tool of IMPLEMENTED_TOOLS) {
      expect(CATALOG_TOOL_NAMES.has(tool.name), tool.name).toBe(true);
      expect(serverOfTool(tool.name), tool.name).toBe(tool.server);
    }
  });

  it("gives every tool an object input schema a model can be shown", () => {
    for (const tool of IMPLEMENTED_TOOLS) {
      const schema = z.toJSONSchema(tool.input, { unrepresentable: "any", io: "input" }) as { type?: string };
      expect(schema.type, tool.name).toBe("object");
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
    }
  });

  it("has the envelope, defect memory and decision servers complete", () => {
    const implemented = new Set(IMPLEMENTED_TOOLS.map((tool) => tool.name));
    for (const name of [
      "emit_envelope",
      "get_system_map",
      "put_artifact",
      "fingerprint_envelope",
      "search_similar",
      "record_occurrence",
      "get_occurrences",
      "record_verdict",
      "record_review",
      "record_reproduction",
    ]) {
      expect(implemented.has(name), name).toBe(true);
    }
  });
});
