import path from "node:path";
import { pathToFileURL } from "node:url";
import type { DefectEnvelope } from "../envelope/envelope.ts";
import { CLASS_CWE, classWords, domainOf, ruleName } from "./defect-rules.ts";
import type { ReportFinding, ReportModel } from "./report-model.ts";

// SARIF 2.1.0 for code-scanning tools: one rule per defect class (CWE tags where known), one result per
// finding. A finding with a source pointer gets a file/line physical location relative to the target's
// source root (%SRCROOT%); an endpoint, page, table or channel has no file, so it is a logical location.
// The qaas fingerprint goes in partialFingerprints so a code-scanning service tracks a finding across runs
// the way qaas does.

const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";
const TOOL_VERSION = "0.1.0";

/** Severity → SARIF level, and the 0-10 `security-severity` code-scanning services sort by. */
const LEVELS: Record<string, { level: "error" | "warning" | "note"; score: string }> = {
  critical: { level: "error", score: "9.5" },
  high: { level: "error", score: "8.0" },
  medium: { level: "warning", score: "5.5" },
  low: { level: "note", score: "2.0" },
};

export function renderSarif(model: ReportModel): string {
  const classes = [...new Set(model.findings.map((finding) => finding.envelope.defect_class))].sort();
  const ruleIndex = new Map(classes.map((defectClass, index) => [defectClass, index]));
  const log = {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "qaas",
            version: TOOL_VERSION,
            semanticVersion: TOOL_VERSION,
            rules: classes.map(rule),
          },
        },
        automationDetails: { id: `qaas/${model.target}/${model.runId}` },
        originalUriBaseIds: {
          SRCROOT: { description: { text: `the source root of target ${model.target}` } },
        },
        invocations: [
          {
            executionSuccessful: model.status !== "failed" && model.status !== "corrupt",
            ...(model.started ? { startTimeUtc: model.started } : {}),
            ...(model.finished ? { endTimeUtc: model.finished } : {}),
            toolExecutionNotifications: model.blindSpots.map((spot) => ({
              level: "warning" as const,
              message: {
                text: `${spot.agent ? `${spot.agent}: ` : ""}${spot.detail}${spot.count > 1 ? ` (${spot.count} times)` : ""}`,
              },
              descriptor: { id: spot.kind },
            })),
          },
        ],
        results: model.findings.map((finding) =>
          result(finding, ruleIndex.get(finding.envelope.defect_class) ?? 0),
        ),
        properties: {
          mode: model.mode,
          ...(model.commit ? { commit: model.commit } : {}),
          ...(model.branch ? { branch: model.branch } : {}),
          ...(model.previousRunId ? { previousRun: model.previousRunId } : {}),
        },
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

function rule(defectClass: string) {
  const cwe = CLASS_CWE[defectClass];
  const domain = domainOf(defectClass);
  const tags = [...(domain ? [domain] : []), ...(cwe !== undefined ? [`external/cwe/cwe-${cwe}`] : [])];
  return {
    id: defectClass,
    name: ruleName(defectClass),
    shortDescription: { text: `${classWords(defectClass)}${cwe !== undefined ? ` (CWE-${cwe})` : ""}` },
    ...(cwe !== undefined
      ? {
          relationships: [
            {
              target: { id: String(cwe), toolComponent: { name: "CWE" } },
              kinds: ["relevant"],
            },
          ],
        }
      : {}),
    properties: { tags },
  };
}

function result(finding: ReportFinding, index: number) {
  const { envelope } = finding;
  const level = LEVELS[envelope.severity] ?? { level: "warning", score: "5.0" };
  return {
    ruleId: envelope.defect_class,
    ruleIndex: index,
    level: level.level,
    message: { text: `${envelope.title}\n\n${envelope.summary}` },
    locations: [location(envelope)],
    ...(envelope.location.related?.length
      ? {
          relatedLocations: envelope.location.related.map((related, relatedIndex) => ({
            id: relatedIndex + 1,
            ...locationOf(related.kind, related.value),
          })),
        }
      : {}),
    partialFingerprints: { "qaasFingerprint/v1": envelope.dedupe.fingerprint },
    properties: {
      "security-severity": level.score,
      severity: envelope.severity,
      domain: envelope.domain,
      confidence: envelope.confidence,
      state: envelope.tracker.state,
      change: finding.change,
      discoveredBy: envelope.discovered_by,
      findingId: envelope.id,
      ...(envelope.reproduction.curl ? { curl: envelope.reproduction.curl } : {}),
      ...(envelope.reproduction.test ? { test: envelope.reproduction.test.command } : {}),
    },
  };
}

function location(envelope: DefectEnvelope) {
  const { kind, value, source } = envelope.location;
  const logical = locationOf(kind, value);
  if (!source) return logical;
  return {
    physicalLocation: {
      artifactLocation: artifactLocation(source.file),
      ...(source.line !== undefined ? { region: { startLine: source.line } } : {}),
    },
    ...("logicalLocations" in logical ? { logicalLocations: logical.logicalLocations } : {}),
  };
}

function locationOf(kind: string, value: string) {
  if (kind === "file") {
    return { physicalLocation: { artifactLocation: artifactLocation(value) } };
  }
  return {
    logicalLocations: [{ name: value, fullyQualifiedName: `${kind}:${value}`, kind: logicalKind(kind) }],
  };
}

/** SARIF's logical kinds are open strings; these read well in viewers that show them. */
function logicalKind(kind: string): string {
  return kind === "endpoint" || kind === "page" || kind === "channel"
    ? "resource"
    : kind === "table"
      ? "table"
      : "module";
}

/** A path inside the source root as a relative URI reference; an absolute path as a file: URI. */
function artifactLocation(file: string): { uri: string; uriBaseId?: string } {
  const slashed = file.replaceAll("\\", "/");
  if (path.isAbsolute(file) || /^[A-Za-z]:\//.test(slashed)) return { uri: pathToFileURL(file).href };
  return { uri: encodeURI(slashed.replace(/^\.\//, "")), uriBaseId: "SRCROOT" };
}
