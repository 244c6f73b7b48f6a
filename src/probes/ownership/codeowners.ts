import fs from "node:fs";
import path from "node:path";
import picomatch from "picomatch";

// CODEOWNERS as GitHub reads it: the first file found of .github/, the root, docs/; gitignore-style
// patterns; the last matching rule wins; a rule with no owners un-assigns.

export interface CodeownersRule {
  pattern: string;
  owners: string[];
  matches(file: string): boolean;
}

export const CODEOWNERS_LOCATIONS = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"];

/** The rules of the target's CODEOWNERS file and where it is, or undefined when there is none. */
export function readCodeowners(root: string): { file: string; rules: CodeownersRule[] } | undefined {
  for (const location of CODEOWNERS_LOCATIONS) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(root, location), "utf8");
    } catch {
      continue;
    }
    return { file: location, rules: parseCodeowners(text) };
  }
  return undefined;
}

export function parseCodeowners(text: string): CodeownersRule[] {
  const rules: CodeownersRule[] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") continue;
    const [pattern, ...owners] = line.split(/\s+/);
    if (!pattern) continue;
    rules.push({ pattern, owners, matches: patternMatcher(pattern) });
  }
  return rules;
}

/** Owners of one file (relative, `/`-separated): the last matching rule's, or undefined. */
export function codeownersOf(file: string, rules: readonly CodeownersRule[]): string[] | undefined {
  for (let index = rules.length - 1; index >= 0; index -= 1) {
    const rule = rules[index] as CodeownersRule;
    if (rule.matches(file)) return rule.owners.length > 0 ? rule.owners : undefined;
  }
  return undefined;
}

/**
 * gitignore semantics: a slash at the start or in the middle anchors the pattern at the root; a
 * trailing slash matches directories only; a match on a directory covers everything inside it.
 */
function patternMatcher(pattern: string): (file: string) => boolean {
  const directoryOnly = pattern.endsWith("/");
  const body = pattern.replace(/^\/+/, "").replace(/\/+$/, "");
  const anchored = pattern.startsWith("/") || body.includes("/");
  const glob = anchored ? body : `**/${body}`;
  const options = { dot: true };
  const inside = picomatch(`${glob}/**`, options);
  if (directoryOnly) return (file) => inside(file);
  const itself = picomatch(glob, options);
  return (file) => itself(file) || inside(file);
}
