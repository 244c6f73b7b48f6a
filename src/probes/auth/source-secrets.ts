import path from "node:path";
import { listSourceFiles, readSource } from "../routes/source-tree.ts";

// Signing secrets written into an application's own source: string literals assigned to secret-like names
// (`SECRET_KEY = "…"`, `"secret": "…"`, `secret_key: '…'`) and the fallbacks of environment reads
// (`os.environ.get("SECRET_KEY", "…")`, `getenv("APP_SECRET", "…")`, `process.env.SESSION_SECRET || "…"`,
// `?? "…"`). A fallback runs whenever the deployment forgets the variable, so the literal is the key anyone
// with the source (or the public repository) can sign with. Only the application's own files are read.

export interface SourceSecret {
  value: string;
  /** Relative path and line where the literal is written. */
  file: string;
  line: number;
}

const EXTENSIONS = new Set([".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".php", ".go", ".java", ".kt"]);
const CONFIG_FILES =
  /^(\.env\.(example|sample|dist|template)|settings\.(ini|cfg|toml|ya?ml)|config\.(ini|cfg|toml|ya?ml|json))$/i;
const SECRET_NAME =
  /secret|signing|session_?key|cookie_?key|jwt_?key|app_?key|token_?key|^(api_?)?key$|_key$/i;
const LITERAL = String.raw`(?:"([^"\n\\]{4,200})"|'([^'\n\\]{4,200})'|\x60([^\x60\n\\$]{4,200})\x60)`;

/** `NAME = "value"`, `NAME: "value"`, `"NAME": "value"`, `NAME := "value"`. */
const ASSIGNED = new RegExp(String.raw`["']?([A-Za-z_][\w.-]*)["']?\s*(?::=|=>|=|:)\s*${LITERAL}`, "g");
/** `environ.get("NAME", "value")`, `getenv("NAME", "value")`, `env.get("NAME", "value")`, `ENV.fetch("NAME", "value")`. */
const ENV_FALLBACK = new RegExp(
  String.raw`(?:get|getenv|fetch|env)\s*\(\s*["']([A-Za-z_]\w*)["']\s*,\s*${LITERAL}`,
  "g",
);
/** `process.env.NAME || "value"`, `process.env["NAME"] ?? "value"`. */
const ENV_OR = new RegExp(
  String.raw`env(?:\.([A-Za-z_]\w*)|\[\s*["']([A-Za-z_]\w*)["']\s*\])\s*(?:\|\||\?\?)\s*${LITERAL}`,
  "g",
);

const MAX_FILES = 400;
const MAX_SECRETS = 200;

/** Placeholders that are not a key anyone signs with (an empty template, a variable reference). */
function plausible(value: string): boolean {
  return (
    !/^\s|\s$|^(true|false|none|null|undefined|utf-?8|sha\d+|hs\d+|rs\d+)$/i.test(value) &&
    !/[{}<>]/.test(value)
  );
}

/** The literals of one file's text that a secret-like name is given or falls back to. */
export function secretsInText(text: string, file: string): SourceSecret[] {
  const found: SourceSecret[] = [];
  const lineOf = (index: number) => text.slice(0, index).split("\n").length;
  const add = (name: string | undefined, literal: string | undefined, index: number) => {
    if (!name || literal === undefined || !SECRET_NAME.test(name) || !plausible(literal)) return;
    if (/^(public|publishable)/i.test(name)) return;
    found.push({ value: literal, file, line: lineOf(index) });
  };
  for (const match of text.matchAll(ASSIGNED))
    add(match[1], match[2] ?? match[3] ?? match[4], match.index ?? 0);
  for (const match of text.matchAll(ENV_FALLBACK))
    add(match[1], match[2] ?? match[3] ?? match[4], match.index ?? 0);
  for (const match of text.matchAll(ENV_OR))
    add(match[1] ?? match[2], match[3] ?? match[4] ?? match[5], match.index ?? 0);
  return found;
}

/** Secret-like literals of the application's own source tree, each value once (first place kept). */
export function secretsInSource(root: string | undefined, exclude: readonly string[] = []): SourceSecret[] {
  if (!root) return [];
  const listed = listSourceFiles(root, EXTENSIONS, { exclude: [...exclude], skipBrowserAssets: true });
  const configs = listSourceFiles(
    root,
    new Set([".example", ".sample", ".ini", ".cfg", ".toml", ".yaml", ".yml", ".json"]),
    {
      exclude: [...exclude],
      skipBrowserAssets: true,
    },
  ).files.filter((file) => CONFIG_FILES.test(path.basename(file)));
  const seen = new Map<string, SourceSecret>();
  for (const file of [...listed.files, ...configs].slice(0, MAX_FILES)) {
    const text = readSource(root, file);
    if (!text) continue;
    for (const secret of secretsInText(text, file))
      if (!seen.has(secret.value)) seen.set(secret.value, secret);
    if (seen.size >= MAX_SECRETS) break;
  }
  return [...seen.values()];
}
