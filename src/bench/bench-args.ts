import { type ParseArgsConfig, parseArgs } from "node:util";

// The benches' command lines: `--help` prints what each option does, and a wrong option is one line naming
// it (node's parser throws with a stack trace).

type Options = NonNullable<ParseArgsConfig["options"]>;

export function parseBenchArgs<T extends Options>(
  command: string,
  options: T,
  help: Record<keyof T, string>,
): ReturnType<typeof parseArgs<{ options: T }>>["values"] {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ options: { ...options, help: { type: "boolean" } } }).values;
  } catch (error) {
    process.stderr.write(
      `${command}: ${error instanceof Error ? error.message : String(error)} (see --help)\n`,
    );
    process.exit(2);
  }
  if (values.help) {
    const lines = Object.entries(options).map(([name, option]) => {
      const value = option.type === "string" ? ` <${name}>` : "";
      const fallback = option.default === undefined ? "" : ` (default ${String(option.default)})`;
      return `${`  --${name}${value}`.padEnd(28)}${help[name as keyof T]}${fallback}`;
    });
    process.stdout.write(`Usage: ${command} [options]\n\n${lines.join("\n")}\n`);
    process.exit(0);
  }
  const { help: _help, ...rest } = values;
  return rest as ReturnType<typeof parseArgs<{ options: T }>>["values"];
}
