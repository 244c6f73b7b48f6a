import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { DefectEnvelope } from "../../envelope/envelope.ts";
import { resolveArtifactUri } from "../../store/artifacts.ts";
import type { RunContext } from "../context.ts";

// A finding's generated failing test, as the run stored it: the artifact is the proof, so every run of it
// (reproduce, review, verify) reads that artifact, never a copy a fixer could have edited on its branch.

export interface FindingTest {
  /** The test's source, as stored. */
  source: string;
  /** Where it is recorded on the envelope, relative to the target root. */
  recordedPath: string;
  /** The stored artifact it was read from. */
  uri: string;
}

export function findingTestOf(envelope: DefectEnvelope, context: RunContext): FindingTest | string {
  const recorded = envelope.reproduction.test?.path;
  const item = envelope.evidence.find(
    (evidence) =>
      evidence.kind === "failing_test" &&
      evidence.uri !== undefined &&
      (recorded === undefined || evidence.test?.path === undefined || evidence.test.path === recorded),
  );
  if (!item?.uri) {
    return `finding ${envelope.id} has no generated failing test stored as an artifact (only findings about a request or a page carry one)`;
  }
  let file: string;
  try {
    file = resolveArtifactUri(context.home, item.uri);
  } catch (error) {
    return `the test artifact of ${envelope.id} cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (!fs.existsSync(file))
    return `the test artifact ${item.uri} of ${envelope.id} is missing from the store`;
  return {
    source: fs.readFileSync(file, "utf8"),
    recordedPath: recorded ?? item.test?.path ?? path.basename(file),
    uri: item.uri,
  };
}

/**
 * Writes the test into the run's scratch folder and answers the file to run. Each finding gets its own
 * folder, so two REPRODUCER invocations at once never run each other's file.
 */
export function materialiseTest(test: FindingTest, findingId: string, context: RunContext): string {
  const folder = path.join(
    context.home,
    "runs",
    context.runId,
    "test-work",
    findingId.replace(/[^\w.-]+/g, "_"),
  );
  fs.mkdirSync(folder, { recursive: true });
  linkBrowserDriver(path.dirname(folder), test.source);
  const file = path.join(folder, path.basename(test.recordedPath));
  fs.writeFileSync(file, test.source);
  return file;
}

/** Whether a generated test drives a browser: it imports playwright-core. */
export function drivesBrowser(source: string): boolean {
  return /from "playwright-core"/.test(source);
}

/**
 * A generated browser test imports playwright-core, which resolves from the test's folder upwards: a run
 * store outside qaas's own tree (a temp or shared home) would not find it. The scratch folder then gets a
 * link to the node_modules qaas itself uses, so the test runs with the same driver the run browsed with.
 */
function linkBrowserDriver(workFolder: string, source: string): void {
  if (!drivesBrowser(source)) return;
  const link = path.join(workFolder, "node_modules");
  if (fs.existsSync(link)) return;
  let modules: string;
  try {
    const manifest = createRequire(import.meta.url).resolve("playwright-core/package.json");
    modules = path.dirname(path.dirname(manifest));
  } catch {
    return;
  }
  // Already reachable (the store sits inside qaas's own tree): nothing to link.
  if (path.relative(path.dirname(modules), workFolder).split(path.sep)[0] !== "..") return;
  try {
    fs.symlinkSync(modules, link, "dir");
  } catch {
    // Another invocation linked it first, or links are not allowed here: the test says what it misses.
  }
}

/**
 * A harness that imports the test `times` times in one process, each import a fresh module (its own
 * sign-ins and data), so node:test runs the test's cases once per import, in order. One process instead of
 * one per run keeps a three-run reproduction of a finding well under a second.
 */
const REPEAT_HARNESS = `// Written by qaas: runs a generated test several times in one process.
const file = new URL(process.argv[2], "file://" + process.cwd() + "/").href;
const times = Number(process.argv[3] ?? 1);
for (let run = 1; run <= times; run += 1) await import(file + "?run=" + run);
`;

/** Writes the repeat harness beside a materialised test and answers the command that runs it `times` times. */
export function repeatCommand(testFile: string, times: number): string {
  const harness = path.join(path.dirname(testFile), "qaas-repeat.mjs");
  if (!fs.existsSync(harness)) fs.writeFileSync(harness, REPEAT_HARNESS);
  // Absolute paths: the test runs from the target root, where a test that reads the target's files expects to be.
  return `node --test-reporter=tap ${JSON.stringify(harness)} ${JSON.stringify(testFile)} ${times}`;
}

/** Whether a failure message comes from an assertion the test itself states (not from its set-up). */
export function isOwnAssertion(message: string | undefined, source: string): boolean {
  if (!message) return false;
  // The first line, without a `(got …)` tail, and at most its first 40 characters: assertion messages are
  // often built from a literal plus what was observed, and only the literal is in the source.
  const stem = message
    .split("\n")[0]!
    .replace(/\s*\((?:got|took)\b[^)]*\)\s*$/i, "")
    .trim()
    .slice(0, 40);
  return stem.length > 0 && source.includes(JSON.stringify(stem).slice(1, -1));
}
