import { DomUtils, parseDocument } from "htmlparser2";
import { beforeAll, describe, expect, it } from "vitest";
import { renderJunit } from "../../src/report/render-junit.ts";
import { MARKDOWN_LIMIT, renderMarkdown } from "../../src/report/render-markdown.ts";
import { loadReportModel, type ReportModel } from "../../src/report/report-model.ts";
import { sampleEnvelope } from "../store/sample-envelope.ts";
import { PAYLOAD, type TwoRuns, twoRuns } from "./report-fixtures.ts";

let runs: TwoRuns;
let model: ReportModel;
beforeAll(() => {
  runs = twoRuns();
  model = loadReportModel(runs.home, runs.secondRun, { evidence: false });
});

type Element = ReturnType<typeof DomUtils.getElementsByTagName>[number];
type Node = Parameters<typeof DomUtils.getElementsByTagName>[1];

function elements(nodes: Node, name: string): Element[] {
  return DomUtils.getElementsByTagName(name, nodes, true);
}

describe("JUnit XML", () => {
  it("parses back as one suite per agent, a case per outcome and a failing case per finding", () => {
    const document = parseDocument(renderJunit(model), { xmlMode: true });
    const root = elements(document.children, "testsuites")[0]!;
    expect(root.attribs).toMatchObject({ tests: "6", failures: "3", errors: "1", skipped: "1" });
    const suites = elements(document.children, "testsuite");
    expect(suites.map((suite) => [suite.attribs.name, suite.attribs.tests, suite.attribs.failures])).toEqual([
      ["API", "2", "1"],
      ["ARCHITECT", "1", "1"],
      ["AUDITOR", "2", "1"],
      ["SOCKET", "1", "0"],
    ]);
    const auditor = suites.find((suite) => suite.attribs.name === "AUDITOR")!;
    const cases = elements(auditor.children, "testcase");
    expect(elements(cases[0]!.children, "error")[0]!.attribs.message).toBe("probe crashed <b>hard</b>");
    const failure = elements(cases[1]!.children, "failure")[0]!;
    // The payload survives as text: escaped on the way out, read back exactly.
    expect(cases[1]!.attribs.name).toBe(`[high] Search reflects ${PAYLOAD} unescaped (env-xss)`);
    expect(failure.attribs).toMatchObject({ type: "xss", message: `Search reflects ${PAYLOAD} unescaped` });
    const socket = suites.find((suite) => suite.attribs.name === "SOCKET")!;
    expect(elements(socket.children, "skipped")[0]!.attribs.message).toBe(
      "the profile names no WebSocket path",
    );
  });
});

describe("Markdown summary", () => {
  it("leads with counts and changes, lists findings most severe first, escapes payloads, holds no link", () => {
    const text = renderMarkdown(model);
    expect(text.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(text).toContain("critical 0 · high 1 · medium 1 · low 1");
    expect(text).toContain("new 2 · recurring 1 · not found again 1");
    expect(text).not.toContain("<script>");
    expect(text).toContain("&lt;script&gt;");
    expect(text).not.toMatch(/\]\(|<a |href=/);
    const lines = text.split("\n").filter((line) => line.startsWith("- **"));
    expect(lines.map((line) => line.slice(4, line.indexOf("**", 4)))).toEqual(["high", "medium", "low"]);
  });

  it("stays under its bound with many long findings, saying how many it left out", () => {
    const many: ReportModel = {
      ...model,
      findings: Array.from({ length: 60 }, (_, index) => ({
        envelope: sampleEnvelope({
          id: `env-${index}`,
          title: `${"very long title ".repeat(12)}${index}`.slice(0, 200),
        }),
        change: "new" as const,
        evidence: [],
      })),
      blindSpots: Array.from({ length: 40 }, (_, index) => ({
        kind: "skipped-agent" as const,
        agent: `AGENT${index}`,
        detail: "x".repeat(300),
        count: 1,
      })),
    };
    for (const limit of [MARKDOWN_LIMIT, 1200]) {
      const text = renderMarkdown(many, limit);
      expect(text.length).toBeLessThanOrEqual(limit);
      expect(text).toMatch(/…and \d+ more finding\(s\) in the full report\./);
    }
  });
});
