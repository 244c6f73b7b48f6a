import type { Command } from "commander";

// `qaas map --target T [--json]`: the latest saved system map of a target, summarised.

export interface MapCommandOptions {
  target: string;
  json?: boolean;
  home?: string;
}

export function register(program: Command): void {
  program
    .command("map")
    .description("summarise the latest system map MAPPER saved for a target")
    .requiredOption("--target <name>", "the target profile's name")
    .option("--json", "print the summary as JSON")
    .action(async (_options: MapCommandOptions, command: Command) => {
      await doMap(command.optsWithGlobals<MapCommandOptions>());
    });
}

export async function doMap(options: MapCommandOptions): Promise<void> {
  const { QaasError } = await import("../../errors.ts");
  const summary = await import("../../map/map-summary.ts");
  const { resolveHome } = await import("../../store/home.ts");
  const home = resolveHome(options.home);
  const saved = summary.loadLatestSystemMap(home, options.target);
  if (!saved) throw new QaasError("MAP_NOT_FOUND", summary.missingMapMessage(options.target));
  const result = summary.summarizeSystemMap(saved);
  process.stdout.write(
    options.json ? `${JSON.stringify(result, null, 2)}\n` : summary.formatMapSummary(result),
  );
}
