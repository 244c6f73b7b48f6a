import fs from "node:fs";

// The corpus servers' fake credentials as an environment, read from the generated secrets file.

export function readSecrets(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, "utf8").split(/\r?\n/)) {
    const match = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}
