import type { InvocationOutcome, ReportFinding, ReportModel } from "./report-model.ts";

// JUnit XML for CI dashboards: one <testsuite> per agent, a <testcase> per invocation outcome (failed
// → <error>, skipped → <skipped>) and a failing <testcase> per finding the agent reported, so a CI run
// shows each defect as a red test with its evidence in the failure text.

export function renderJunit(model: ReportModel): string {
  const agents = new Set<string>([
    ...model.invocations.map((outcome) => outcome.agent),
    ...model.findings.map((finding) => finding.envelope.discovered_by),
  ]);
  const suites = [...agents].sort().map((agent) =>
    suite(
      agent,
      model.invocations.filter((outcome) => outcome.agent === agent),
      model.findings.filter((finding) => finding.envelope.discovered_by === agent),
      model.started,
    ),
  );
  const totals = suites.reduce(
    (sum, entry) => ({
      tests: sum.tests + entry.tests,
      failures: sum.failures + entry.failures,
      errors: sum.errors + entry.errors,
      skipped: sum.skipped + entry.skipped,
    }),
    { tests: 0, failures: 0, errors: 0, skipped: 0 },
  );
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${attribute(`qaas ${model.mode} run ${model.runId} on ${model.target}`)}" tests="${totals.tests}" failures="${totals.failures}" errors="${totals.errors}" skipped="${totals.skipped}">`,
    ...suites.map((entry) => entry.xml),
    `</testsuites>`,
    "",
  ].join("\n");
}

interface SuiteXml {
  xml: string;
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

function suite(
  agent: string,
  outcomes: readonly InvocationOutcome[],
  findings: readonly ReportFinding[],
  started: string,
): SuiteXml {
  const cases: string[] = [];
  let errors = 0;
  let skipped = 0;
  for (const outcome of outcomes) {
    const name = attribute(`${agent} invocation ${outcome.invocation}: ${outcome.outcome}`);
    const open = `    <testcase classname="qaas.${attribute(agent)}" name="${name}" time="0">`;
    if (outcome.outcome === "failed" || outcome.outcome === "dead_lettered") {
      errors += 1;
      cases.push(
        `${open}\n      <error message="${attribute(outcome.detail ?? outcome.outcome)}" type="${attribute(outcome.outcome)}">${text(outcome.detail ?? "")}</error>\n    </testcase>`,
      );
    } else if (outcome.outcome === "skipped") {
      skipped += 1;
      cases.push(
        `${open}\n      <skipped message="${attribute(outcome.detail ?? "skipped")}"/>\n    </testcase>`,
      );
    } else cases.push(`${open}</testcase>`);
  }
  for (const finding of findings) {
    const { envelope } = finding;
    const body = [
      envelope.summary,
      "",
      `severity: ${envelope.severity}   confidence: ${envelope.confidence}   state: ${envelope.tracker.state}   ${finding.change}`,
      `location: ${envelope.location.kind} ${envelope.location.value}${envelope.location.source ? ` (${envelope.location.source.file}${envelope.location.source.line ? `:${envelope.location.source.line}` : ""})` : ""}`,
      `impact: ${envelope.impact}`,
      ...(envelope.reproduction.curl ? [`curl: ${envelope.reproduction.curl}`] : []),
      ...(envelope.reproduction.test ? [`test: ${envelope.reproduction.test.command}`] : []),
      ...envelope.reproduction.steps.map((step, index) => `step ${index + 1}: ${step}`),
      `fingerprint: ${envelope.dedupe.fingerprint}`,
    ].join("\n");
    cases.push(
      `    <testcase classname="qaas.${attribute(agent)}.${attribute(envelope.defect_class)}" name="${attribute(`[${envelope.severity}] ${envelope.title} (${envelope.id})`)}" time="0">\n` +
        `      <failure message="${attribute(envelope.title)}" type="${attribute(envelope.defect_class)}">${text(body)}</failure>\n` +
        `    </testcase>`,
    );
  }
  const tests = outcomes.length + findings.length;
  const header = `  <testsuite name="${attribute(agent)}" tests="${tests}" failures="${findings.length}" errors="${errors}" skipped="${skipped}" time="0"${started ? ` timestamp="${attribute(started.slice(0, 19))}"` : ""}>`;
  return {
    xml: [header, ...cases, "  </testsuite>"].join("\n"),
    tests,
    failures: findings.length,
    errors,
    skipped,
  };
}

/** XML 1.0 cannot carry most control characters at all, even escaped: they are dropped. */
function clean(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing exactly these characters is the point.
  return value.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "");
}

function text(value: string): string {
  return clean(value).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

function attribute(value: string): string {
  return text(value)
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&apos;")
    .replaceAll("\n", "&#10;")
    .replaceAll("\r", "&#13;")
    .replaceAll("\t", "&#9;");
}
