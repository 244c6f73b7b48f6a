// What the benches print: figures to the hundredth, and one line for a command line they cannot use.

export function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** A wrong option value: one line naming it, exit code 2 (as parseBenchArgs does for a wrong option). */
export function failBench(command: string, message: string): never {
  process.stderr.write(`${command}: ${message}\n`);
  process.exit(2);
}
