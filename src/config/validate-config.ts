import { checkCoherence } from "./coherence.ts";
import { type Problem, sortProblems } from "./config-errors.ts";
import { DEFAULT_CONFIG_DIR, readConfig } from "./load-config.ts";

/**
 * Every problem of a configuration folder, errors and warnings, sorted by file and line; never throws.
 * `implementedTools` (passed by the engine) turns catalog tools with no implementation yet into
 * "planned" warnings; without it no such warnings are given.
 */
export function validateConfig(
  configDir: string = DEFAULT_CONFIG_DIR,
  implementedTools?: ReadonlySet<string>,
): Problem[] {
  const reading = readConfig(configDir);
  const problems = [...reading.problems, ...checkCoherence(reading, implementedTools)];
  return sortProblems(problems);
}
