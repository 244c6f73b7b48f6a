import type { Command } from "commander";

interface ValidateOptions {
  config?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command("validate")
    .description("Check config/system.yaml, every agent, prompt and allowlist for coherence (offline).")
    .option("--config <dir>", "configuration folder (default: the package's config/)")
    .option("--json", "print the problems as JSON")
    .action(async (options: ValidateOptions) => {
      process.exitCode = await runValidate(options);
    });
}

/** Prints every problem and answers the exit code: 1 on any error, 0 when only warnings (or nothing) remain. */
export async function runValidate(options: ValidateOptions): Promise<number> {
  const { formatProblem, hasErrors } = await import("../../config/config-errors.ts");
  const { DEFAULT_CONFIG_DIR } = await import("../../config/load-config.ts");
  const { validateConfig } = await import("../../config/validate-config.ts");
  const problems = validateConfig(options.config ?? DEFAULT_CONFIG_DIR, await implementedTools());
  const errors = problems.filter((problem) => problem.severity === "error").length;
  const warnings = problems.length - errors;
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ ok: errors === 0, errors, warnings, problems }, null, 2)}\n`);
  } else {
    for (const problem of problems) process.stdout.write(`${formatProblem(problem)}\n`);
    const summary = `${plural(errors, "error")}, ${plural(warnings, "warning")}`;
    process.stdout.write(
      errors === 0 ? `configuration is valid (${summary})\n` : `configuration is invalid: ${summary}\n`,
    );
  }
  return hasErrors(problems) ? 1 : 0;
}

/** Catalog tools not built yet are reported as "planned" warnings; if the registry cannot load, none are. */
async function implementedTools(): Promise<ReadonlySet<string> | undefined> {
  try {
    const { implementedToolNames } = await import("../../tools/tool-registry.ts");
    return implementedToolNames();
  } catch (error) {
    process.stderr.write(
      `qaas: tool registry unavailable, planned-tool warnings skipped (${String(error)})\n`,
    );
    return undefined;
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
