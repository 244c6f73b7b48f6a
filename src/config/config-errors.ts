import path from "node:path";
import { QaasError } from "../errors.ts";

/** One thing wrong with a configuration or profile file, precise enough to fix without reading code. */
export interface Problem {
  /** The file as shown to a person (relative to the working folder when inside it). */
  file: string;
  line?: number;
  /** The field path, e.g. `tools[3]` or `run_modes.nightly.roster[2]`; empty for the whole file. */
  path: string;
  message: string;
  severity: "error" | "warning";
}

/** Every problem found while loading, thrown at once so a person fixes them in one pass. */
export class ConfigError extends QaasError {
  readonly problems: Problem[];

  constructor(problems: Problem[], code = "CONFIG_INVALID", subject = "configuration") {
    const errors = problems.filter((problem) => problem.severity === "error");
    const shown = errors.length > 0 ? errors : problems;
    const header = `${subject} is invalid (${countLabel(errors.length, "error")}):`;
    super(code, [header, ...shown.map((problem) => `  ${formatProblem(problem)}`)].join("\n"));
    this.problems = problems;
  }
}

/** By file, then line, then field: the order a person fixes them in. */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort(
    (left, right) =>
      left.file.localeCompare(right.file) ||
      (left.line ?? 0) - (right.line ?? 0) ||
      left.path.localeCompare(right.path),
  );
}

export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((problem) => problem.severity === "error");
}

/** `config/agents/api.yaml:12 tools[3]: "htp_request" is not a tool` (warnings say so before the message). */
export function formatProblem(problem: Problem): string {
  const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`;
  const field = problem.path === "" ? "" : ` ${problem.path}`;
  const message = problem.severity === "warning" ? `warning: ${problem.message}` : problem.message;
  return `${where}${field}: ${message}`;
}

/** Files inside the working folder are shown relative to it, the way a person would type them. */
export function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
}

/** `tools[3]`, `policy.write_paths[0]`, `run_modes.nightly.roster`. */
export function formatFieldPath(segments: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of segments) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

/** ` (did you mean "x"?)` when one candidate is close enough to be a likely typo, else "". */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const best = closest(word, candidates);
  return best === undefined ? "" : ` (did you mean "${best}"?)`;
}

export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const lowered = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(lowered, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // A third of the word's length catches transpositions and dropped letters without suggesting noise.
  const tolerance = Math.max(2, Math.floor(word.length / 3));
  return best !== undefined && bestDistance <= tolerance && bestDistance > 0 ? best : undefined;
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const substitution = previous[column - 1]! + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column]! + 1, current[column - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length]!;
}

function countLabel(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
