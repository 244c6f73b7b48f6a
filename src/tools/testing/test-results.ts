// A test run's outcome per test case, read from what the runner printed: node:test TAP, or a vitest JSON
// report. When neither can be read, the exit code alone says passed or failed (`cases` stays empty).

export interface TestCase {
  name: string;
  passed: boolean;
  /** The failing assertion's message, as the runner reported it. */
  message?: string;
  /** The error code (`ERR_ASSERTION` for an assertion; anything else failed before asserting). */
  code?: string;
}

export interface TestOutcome {
  passed: boolean;
  cases: TestCase[];
  /** How the cases were read: tap, vitest-json, or exit-code. */
  format: "tap" | "vitest-json" | "exit-code";
}

/** Reads node:test TAP (`ok N - name` / `not ok N - name` with a YAML block holding `error:` and `code:`). */
export function parseTap(output: string): TestCase[] {
  const cases: TestCase[] = [];
  const lines = output.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    // Top-level points only: a subtest's point is indented, and its parent reports it too.
    const point = /^(not ok|ok) \d+ - (.*?)(?: # (?:SKIP|TODO).*)?$/.exec(line);
    if (!point) continue;
    const entry: TestCase = { name: point[2]!.trim(), passed: point[1] === "ok" };
    if (!entry.passed) {
      for (let inner = index + 1; inner < lines.length && lines[inner]!.startsWith("  "); inner += 1) {
        const field = /^ {2}(error|code): (.*)$/.exec(lines[inner]!);
        if (!field) continue;
        const value = unquoteYaml(field[2]!);
        if (field[1] === "error") entry.message = value === "|-" ? blockAfter(lines, inner) : value;
        else entry.code = value;
      }
    }
    cases.push(entry);
  }
  return cases;
}

/** Reads a vitest `--reporter=json` report: one case per assertion result. */
export function parseVitestJson(text: string): TestCase[] | undefined {
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch {
    return undefined;
  }
  const files = (report as { testResults?: unknown }).testResults;
  if (!Array.isArray(files)) return undefined;
  const cases: TestCase[] = [];
  for (const file of files as Array<{ name?: string; assertionResults?: unknown }>) {
    if (!Array.isArray(file.assertionResults)) continue;
    for (const result of file.assertionResults as Array<Record<string, unknown>>) {
      if (result.status === "skipped" || result.status === "pending" || result.status === "todo") continue;
      const failures = Array.isArray(result.failureMessages) ? (result.failureMessages as string[]) : [];
      cases.push({
        name: String(result.fullName ?? result.title ?? "(unnamed)"),
        passed: result.status === "passed",
        ...(failures[0] ? { message: failures[0].split("\n")[0]! } : {}),
      });
    }
  }
  return cases;
}

/** The outcome of one run: the parsed cases when there are any, else the exit code. */
export function outcomeOf(
  exitCode: number | null,
  timedOut: boolean,
  cases: TestCase[] | undefined,
  format: "tap" | "vitest-json",
): TestOutcome {
  if (cases && cases.length > 0) {
    return { passed: !timedOut && exitCode === 0 && cases.every((entry) => entry.passed), cases, format };
  }
  return { passed: !timedOut && exitCode === 0, cases: [], format: "exit-code" };
}

/**
 * The part of a failure message that names the reason, without what varies between runs: `(got 500)`,
 * `(took 812 ms)`, ids and numbers, and the actual/expected diff Node appends below the message (a fresh
 * token or record differs every run). Two runs failed "for the same reason" when these agree.
 */
export function reasonOf(message: string | undefined): string {
  return (message ?? "")
    .split(/\r?\n/)[0]!
    .replace(/\s*\((?:got|took)\b[^)]*\)\s*$/i, "")
    .replace(/\d+/g, "#")
    .trim();
}

function unquoteYaml(value: string): string {
  const trimmed = value.trim();
  if (trimmed.startsWith("'") && trimmed.endsWith("'")) return trimmed.slice(1, -1).replace(/''/g, "'");
  if (trimmed.startsWith('"') && trimmed.endsWith('"')) {
    try {
      return JSON.parse(trimmed) as string;
    } catch {
      return trimmed.slice(1, -1);
    }
  }
  return trimmed;
}

function blockAfter(lines: string[], index: number): string {
  const block: string[] = [];
  for (let inner = index + 1; inner < lines.length && lines[inner]!.startsWith("    "); inner += 1) {
    block.push(lines[inner]!.trim());
  }
  return block.join("\n");
}
