import fs from "node:fs";
import path from "node:path";
import AjvModule from "ajv";
import addFormatsModule from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { renderSarif } from "../../src/report/render-sarif.ts";
import { loadReportModel } from "../../src/report/report-model.ts";
import { type TwoRuns, twoRuns } from "./report-fixtures.ts";

// SARIF checked against the official 2.1.0 schema (vendored, see tests/fixtures/sarif/README.md).

// ajv ships CommonJS; under NodeNext the default import is the module object on some paths.
const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

function sarifValidator() {
  const file = path.resolve(import.meta.dirname, "../fixtures/sarif/sarif-schema-2.1.0.json");
  const schema = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  // Draft-04 `id` is draft-07 `$id`; nothing else the schema uses differs between the two drafts.
  const { $schema: _draft, id, ...rest } = schema;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile({ ...rest, $id: String(id) });
}

interface SarifLocation {
  physicalLocation?: {
    artifactLocation: { uri: string; uriBaseId?: string };
    region?: { startLine: number };
  };
  logicalLocations?: Array<{ name: string; fullyQualifiedName: string; kind: string }>;
}

interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  locations: SarifLocation[];
  relatedLocations?: SarifLocation[];
  partialFingerprints: Record<string, string>;
}

let runs: TwoRuns;
beforeAll(() => {
  runs = twoRuns();
});

describe("SARIF", () => {
  it("validates against the SARIF 2.1.0 schema", () => {
    const validate = sarifValidator();
    const log = JSON.parse(renderSarif(loadReportModel(runs.home, runs.secondRun, { evidence: false })));
    const valid = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // The schema is not vacuous: a result without a message is refused.
    const broken = structuredClone(log);
    delete broken.runs[0].results[0].message;
    expect(validate(broken)).toBe(false);
  });

  it("has one rule per class with CWE tags and file/line or logical locations", () => {
    const log = JSON.parse(renderSarif(loadReportModel(runs.home, runs.secondRun, { evidence: false })));
    const run = log.runs[0];
    expect(log.version).toBe("2.1.0");
    expect(run.tool.driver.rules.map((rule: { id: string }) => rule.id)).toEqual([
      "circular-dependency",
      "unhandled-error",
      "xss",
    ]);
    const xssRule = run.tool.driver.rules[2];
    expect(xssRule.properties.tags).toEqual(["security", "external/cwe/cwe-79"]);
    const byId = new Map(
      run.results.map((result: { properties: { findingId: string } }) => [
        result.properties.findingId,
        result,
      ]),
    );
    const xss = byId.get("env-xss") as SarifResult;
    expect(xss).toMatchObject({ ruleId: "xss", ruleIndex: 2, level: "error" });
    expect(xss.locations[0]?.physicalLocation).toEqual({
      artifactLocation: { uri: "src/routes/search.js", uriBaseId: "SRCROOT" },
      region: { startLine: 42 },
    });
    expect(xss.locations[0]?.logicalLocations?.[0]).toMatchObject({
      fullyQualifiedName: "endpoint:GET /search",
    });
    expect(xss.partialFingerprints["qaasFingerprint/v1"]).toMatch(/^fp_/);
    const endpoint = byId.get("env-a") as SarifResult;
    expect(endpoint.locations[0]).toEqual({
      logicalLocations: [
        { name: "POST /api/items", fullyQualifiedName: "endpoint:POST /api/items", kind: "resource" },
      ],
    });
    const cycle = byId.get("env-cycle") as SarifResult;
    expect(cycle.locations[0]?.physicalLocation?.artifactLocation.uri).toBe("src/a.js");
    expect(cycle.relatedLocations?.[0]?.physicalLocation?.artifactLocation.uri).toBe("src/b.js");
    expect(run.invocations[0].toolExecutionNotifications.length).toBeGreaterThan(0);
  });
});
