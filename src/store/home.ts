import path from "node:path";

/**
 * Where runs, system maps and defect memory live: `--home DIR`, else `$QAAS_HOME`, else `<cwd>/.qaas`.
 * Always absolute, so a path recorded in a ledger means the same thing from any working directory.
 */
export function resolveHome(option?: string, environment: NodeJS.ProcessEnv = process.env): string {
  const chosen = nonEmpty(option) ?? nonEmpty(environment.QAAS_HOME) ?? ".qaas";
  return path.resolve(process.cwd(), chosen);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value : undefined;
}
