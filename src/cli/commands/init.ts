import type { Command } from "commander";

// `qaas init [DIR]`: a starting target profile guessed from a repository.

interface InitCommandOptions {
  out?: string;
  name?: string;
  force?: boolean;
  config?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command("init")
    .description("Guess a target profile from a repository and write it (config/targets/<name>.yaml).")
    .argument("[dir]", "the repository to inspect", ".")
    .option("--out <path>", "where to write the profile (default: <config>/targets/<name>.yaml)")
    .option("--name <name>", "the profile's name (default: the package's or the folder's)")
    .option("--force", "overwrite an existing profile")
    .option(
      "--config <dir>",
      "configuration folder whose targets/ receives the profile (default: the package's config/)",
    )
    .option("--json", "print what was guessed as JSON")
    .action(async (dir: string, options: InitCommandOptions) => {
      process.exitCode = await runInit(dir, options);
    });
}

export async function runInit(dir: string, options: InitCommandOptions): Promise<number> {
  const { initTarget } = await import("../../init/init-target.ts");
  const { displayPath } = await import("../../config/config-errors.ts");
  const result = await initTarget({ dir, ...options });
  const { guess } = result;
  const config = options.config ? ` --config ${options.config}` : "";
  const target = result.targetArgument === guess.name ? guess.name : displayPath(result.file);
  const next = [
    `fill in users[].username in ${displayPath(result.file)} and set ${guess.secrets.join(", ")}`,
    `qaas doctor --target ${target}${config}`,
    `qaas run --mode nightly --target ${target}${config}`,
  ];
  if (options.json) {
    const output = {
      file: result.file,
      name: guess.name,
      guessed: guess.guessed,
      missing: guess.missing,
      secrets: guess.secrets,
      operations: guess.operations,
      warnings: result.warnings,
      next,
    };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    return 0;
  }
  const width = Math.max(...guess.guessed.map((entry) => entry.what.length));
  const lines = [
    `wrote ${displayPath(result.file)} (target ${guess.name})`,
    "",
    ...guess.guessed.map((entry) => `  ${entry.what.padEnd(width)}  ${entry.value}  (${entry.from})`),
    ...guess.missing.map((line) => `  not found: ${line}`),
    ...result.warnings.map((line) => `warning: ${line}`),
    "",
    "next:",
    ...next.map((step, index) => `  ${index + 1}. ${step}`),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
