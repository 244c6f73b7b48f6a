import fs from "node:fs";
import type { Command } from "commander";

// `qaas doctor --target T`: which agents can usefully run, what each will work from (the latest system
// map, else a static read of the source), and what the profile lacks for the others. Offline unless
// `--live` allows GETs of the OpenAPI document on a live target.

interface DoctorOptions {
  target: string;
  config?: string;
  json?: boolean;
  live?: boolean;
  home?: string;
}

export function register(program: Command): void {
  program
    .command("doctor")
    .description(
      "Show which agents can usefully run against a target, what each will work from, and what the profile lacks for the others.",
    )
    .requiredOption("--target <name-or-path>", "a profile name in config/targets/ or a path to a profile")
    .option("--config <dir>", "configuration folder (default: the package's config/)")
    .option("--live", "allow GET requests for the OpenAPI document when the target is live")
    .option("--json", "print the capabilities as JSON")
    .action(async (_options: DoctorOptions, command: Command) => {
      process.exitCode = await runDoctor(command.optsWithGlobals<DoctorOptions>());
    });
}

export async function runDoctor(options: DoctorOptions): Promise<number> {
  const { DEFAULT_CONFIG_DIR, loadConfig } = await import("../../config/load-config.ts");
  const { loadTarget } = await import("../../targets/load-target.ts");
  const { capabilities } = await import("../../targets/capabilities.ts");
  const { displayPath } = await import("../../config/config-errors.ts");
  const { resolveHome } = await import("../../store/home.ts");
  const configDir = options.config ?? DEFAULT_CONFIG_DIR;
  const config = loadConfig(configDir);
  const target = loadTarget(options.target, { configDir });
  // The source readers (a TypeScript parser among them) load only once the profile is known to be valid.
  const { gatherEvidence } = await import("./doctor-evidence.ts");
  const { findDatabaseInSource } = await import("../../init/guess-database.ts");
  const evidence = await gatherEvidence(target, {
    home: resolveHome(options.home),
    live: options.live,
    findDatabase: findDatabaseInSource,
  });
  const rows = capabilities(target, [...config.agents.values()], evidence);
  // Variables the profile's secrets file would provide at run time count as set; the real environment is untouched.
  const { loadSecretsFile, secretsFileOf } = await import("../../targets/secrets.ts");
  const environment: Record<string, string | undefined> = { ...process.env };
  const secretsFile = secretsFileOf(target);
  if (secretsFile !== undefined && fs.existsSync(secretsFile)) loadSecretsFile(secretsFile, environment);
  const missingSecrets = missingSecretVariables(target.profile.users, environment);
  const usersWithoutName = target.profile.users
    .filter((user) => user.password !== undefined && !user.username?.trim())
    .map((user) => user.name);
  if (options.json) {
    const output = {
      target: target.profile.name,
      profile: target.file,
      root: target.root ?? null,
      evidence,
      agents: rows,
      missing_secrets: missingSecrets,
      users_without_username: usersWithoutName,
    };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    return 0;
  }
  const lines = [
    `target ${target.profile.name} (${displayPath(target.file)})`,
    `source ${target.root === undefined ? "none" : displayPath(target.root)}; environment ${target.profile.environment.mode}${
      target.profile.environment.base_url ? ` at ${target.profile.environment.base_url}` : ""
    }`,
    `working from ${evidence.basis}`,
    "",
    ...table([
      ["agent", "can run", "works from / why not"],
      ...rows.map((row) => [
        row.agent,
        row.canRun ? "yes" : "no",
        row.canRun ? (row.works_from ?? "") : row.reasons.join("; "),
      ]),
    ]),
  ];
  const runnable = rows.filter((row) => row.canRun).length;
  lines.push("", `${runnable} of ${rows.length} agents can run against ${target.profile.name}`);
  for (const missing of missingSecrets) {
    lines.push(
      `note: ${missing.variable} is not set (user "${missing.user}" ${missing.field}); sign-in will fail until it is`,
    );
  }
  for (const user of usersWithoutName)
    lines.push(`note: user "${user}" has no username; sign-in will fail until it has one`);
  for (const note of evidence.notes) lines.push(`note: ${note}`);
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Which users' secret variables are not set right now (names only; values are never read into output). */
function missingSecretVariables(
  users: Array<{ name: string; password?: string; token?: string }>,
  environment: Record<string, string | undefined>,
): Array<{ user: string; field: string; variable: string }> {
  const missing: Array<{ user: string; field: string; variable: string }> = [];
  for (const user of users) {
    for (const field of ["password", "token"] as const) {
      const ref = user[field];
      if (ref === undefined) continue;
      const variable = ref.slice("secret_ref:".length);
      if (!environment[variable]) missing.push({ user: user.name, field, variable });
    }
  }
  return missing;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd(),
  );
}
