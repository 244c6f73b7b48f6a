import { describe, expect, it } from "vitest";
import { branchPatternProblem } from "../../src/config/coherence.ts";
import { checkSeat } from "../../src/config/system-coherence.ts";

describe("branch patterns", () => {
  it("refuses patterns that reach a protected branch or every branch", () => {
    for (const pattern of ["*", "**", "*/*", "ma*", "m?in", "mast*", "main"]) {
      expect(branchPatternProblem(pattern), pattern).toBeDefined();
    }
  });

  it("accepts prefixed patterns", () => {
    for (const pattern of ["fix/*", "qa/repro/*", "qa/**", "maintenance/*"]) {
      expect(branchPatternProblem(pattern), pattern).toBeUndefined();
    }
  });
});

describe("seats in configuration", () => {
  it("applies the seats' own safety rules and names the field", () => {
    const local = checkSeat(
      { backend: "openai-compatible", model: "m", base_url: "http://10.0.0.5:8000/v1", is_local: true },
      "worker",
    );
    expect(local).toEqual([expect.objectContaining({ segments: ["base_url"], severity: "error" })]);
    const metadata = checkSeat(
      { backend: "openai-compatible", model: "m", base_url: "http://[::ffff:169.254.169.254]/v1" },
      "worker",
    );
    expect(metadata).toEqual([
      expect.objectContaining({ segments: ["base_url"], message: expect.stringContaining("metadata") }),
    ]);
    expect(
      checkSeat({ backend: "anthropic", api_key_env: "GITHUB_TOKEN" }, "orchestrator").map(
        (problem) => problem.segments[0],
      ),
    ).toEqual(["model", "api_key_env"]);
    expect(
      checkSeat(
        { backend: "openai-compatible", model: "m", base_url: "http://127.0.0.1:11434/v1", is_local: true },
        "worker",
      ),
    ).toEqual([]);
  });
});
