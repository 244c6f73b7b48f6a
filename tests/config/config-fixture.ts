import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_CONFIG_DIR } from "../../src/config/load-config.ts";

/** A temp copy of the shipped configuration folder, to break one thing in. */
export function copyShippedConfig(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-config-"));
  const dir = path.join(root, "config");
  fs.cpSync(DEFAULT_CONFIG_DIR, dir, { recursive: true });
  return dir;
}

/** Replaces one exact piece of text in a file of the copy; fails loudly if the text is not there. */
export function editConfigFile(dir: string, relative: string, from: string, to: string): string {
  const file = path.join(dir, relative);
  const text = fs.readFileSync(file, "utf8");
  if (!text.includes(from)) throw new Error(`fixture: "${from}" not found in ${relative}`);
  fs.writeFileSync(file, text.replace(from, to));
  return file;
}

/** The 1-based line of the first occurrence of `text` in a file. */
export function lineOf(file: string, text: string): number {
  const index = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .findIndex((line) => line.includes(text));
  if (index < 0) throw new Error(`fixture: "${text}" not found in ${file}`);
  return index + 1;
}
