import { shapedSecretsIn } from "./exposure-secrets.ts";

// What a served file is, by its content alone: VCS metadata, an environment file, a database dump or a
// database file, a source or configuration backup, a dependency manifest. A status code proves nothing
// (many applications answer 200 with their index page for any path); the shape of the content does.

export type FileKind =
  | "vcs metadata"
  | "environment file"
  | "sql dump"
  | "database file"
  | "source backup"
  | "credentials file"
  | "dependency manifest";

export interface FileVerdict {
  kind: FileKind;
  /** `the repository's .git/config`, `an environment file with DATABASE_URL, SESSION_SECRET`. */
  what: string;
  /** Secrets the content carries (masked in evidence); they make the exposure a secret exposure. */
  secrets: string[];
}

const BACKUP_SUFFIX =
  /(?:~|\.(?:bak|backup|old|orig|original|save|saved|swp|swo|tmp|temp|copy|dist|prev|\d))$/i;
const SOURCE_EXTENSION =
  /\.(?:php\d?|py|rb|java|go|cs|pl|cgi|jsp|aspx?|ini|conf|cfg|config|env|ya?ml|toml|properties|json|js|ts|mjs|cjs|xml|sh)(?:~|\.[a-z0-9]+)?$/i;

/** A path that names a backup or editor copy of a file (`app.py.bak`, `config.js~`, `.settings.py.swp`). */
export function isBackupPath(path: string): boolean {
  const name = path.split("/").pop() ?? "";
  return BACKUP_SUFFIX.test(name) && SOURCE_EXTENSION.test(name.replace(BACKUP_SUFFIX, "") || name);
}

const ENV_LINE = /^\s*(?:export\s+)?[A-Z][A-Z0-9_]*\s*=\s*\S.*$/;
const SENSITIVE_NAME =
  /SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|PRIVATE|CREDENTIAL|DATABASE_URL|_DSN|ACCESS_KEY/i;
const SOURCE_LINE =
  /^\s*(?:<\?php|import\s+[\w.{}*, ]+|from\s+[\w.]+\s+import\s|def\s+\w+\(|class\s+\w+[(:{ ]|(?:const|let|var)\s+\w+\s*=|module\.exports|require\(['"]|package\s+[\w.]+;|using\s+[\w.]+;|#include\s|function\s+\w*\s*\(|define\(\s*['"]|\$\w+\s*=|[A-Za-z_][\w.]*\s*=\s*(?:['"[{(\d-]|True\b|False\b|None\b|true\b|false\b|null\b)|[A-Z_]+\s*:\s*\S)/;
const SECRET_ASSIGNMENT =
  /(?:secret|password|passwd|pwd|token|api_?key|private_?key|credential)\w*['"]?\s*(?:=>|=|:|,)\s*['"]([^'"\s]{4,})['"]/gi;

function lines(body: string): string[] {
  return body
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(
      (line) => line !== "" && !line.startsWith("#") && !line.startsWith("//") && !line.startsWith(";"),
    );
}

/** What a file served at `path` is, judged by its content; undefined for anything served on purpose. */
export function judgeFileContent(path: string, body: string, contentType: string): FileVerdict | undefined {
  const head = body.slice(0, 64 * 1024);
  const name = path.split("/").pop() ?? "";
  const html = /html/i.test(contentType) || /^\s*(?:<!doctype html|<html)/i.test(head);
  if (head.startsWith("SQLite format 3\u0000"))
    return { kind: "database file", what: "an SQLite database file", secrets: [] };
  if (html) return undefined;
  const content = lines(head);
  if (/^\[core\]/m.test(head) && /repositoryformatversion/.test(head))
    return { kind: "vcs metadata", what: "the repository's .git/config", secrets: secretsOf(head) };
  if (/^ref: refs\/heads\/\S+\s*$/.test(head.trim()))
    return { kind: "vcs metadata", what: "the repository's .git/HEAD", secrets: [] };
  if (/^\[paths\]/m.test(head) && /^default\s*=/m.test(head))
    return { kind: "vcs metadata", what: "the repository's .hg/hgrc", secrets: secretsOf(head) };
  if (/^(?:\d+\s*\n)?dir\s*\n\d+\s*\n/m.test(head) && /svn:/.test(head))
    return { kind: "vcs metadata", what: "Subversion metadata", secrets: [] };
  if (/^\s*[\w.@-]+:(?:\$apr1\$|\$2[aby]\$|\{SHA\}|\$[156]\$)/m.test(head))
    return { kind: "credentials file", what: "an htpasswd file", secrets: [] };
  const envLines = content.filter((line) => ENV_LINE.test(line));
  if (envLines.length >= 2 && envLines.length >= content.length * 0.7) {
    const sensitive = envLines
      .filter(
        (line) =>
          SENSITIVE_NAME.test(line.split("=")[0]!) && line.split("=").slice(1).join("=").trim().length > 2,
      )
      .map((line) =>
        line
          .split("=")[0]!
          .replace(/^export\s+/, "")
          .trim(),
      );
    return {
      kind: "environment file",
      what:
        sensitive.length > 0
          ? `an environment file with ${sensitive.slice(0, 5).join(", ")}`
          : "an environment file",
      secrets: envLines
        .filter((line) => SENSITIVE_NAME.test(line.split("=")[0]!))
        .map((line) =>
          line
            .split("=")
            .slice(1)
            .join("=")
            .trim()
            .replace(/^['"]|['"]$/g, ""),
        )
        .filter((value) => value.length >= 4),
    };
  }
  if (
    /^--\s*(?:MySQL|MariaDB|PostgreSQL) (?:database )?dump/im.test(head) ||
    (/\bCREATE TABLE\b/i.test(head) && /\bINSERT INTO\b|\bCOPY\b.*\bFROM stdin\b/i.test(head)) ||
    content.filter((line) => /^(?:INSERT INTO|CREATE TABLE|DROP TABLE|BEGIN TRANSACTION|COPY )\b/i.test(line))
      .length >= 2
  )
    return { kind: "sql dump", what: "a database dump", secrets: secretsOf(head) };
  if (isBackupPath(name) || /\.(?:php\d?|py|rb|pl|cgi|jsp|aspx?|cs|java|go)$/i.test(name)) {
    const source = content.filter((line) => SOURCE_LINE.test(line));
    if (source.length >= 2 && source.length >= content.length * 0.5) {
      const secrets = [...head.matchAll(SECRET_ASSIGNMENT)].map((match) => match[1]!);
      return {
        kind: "source backup",
        what: secrets.length > 0 ? `source code with secrets (${name})` : `source code (${name})`,
        secrets: [...secrets, ...secretsOf(head)],
      };
    }
  }
  if (
    /^(?:package|composer)\.json$/i.test(name) &&
    /"(?:dependencies|devDependencies|require)"\s*:/.test(head)
  )
    return { kind: "dependency manifest", what: `the dependency manifest ${name}`, secrets: [] };
  if (/^requirements[\w-]*\.txt$|^Gemfile(?:\.lock)?$|^Pipfile(?:\.lock)?$/i.test(name)) {
    const pinned = content.filter((line) =>
      /^[A-Za-z0-9_.[\]-]+\s*(?:[=<>!~]=?\s*[\w.*]+)?(?:\s*;.*)?$|^gem\s+['"]/.test(line),
    );
    if (pinned.length >= 2 && pinned.length >= content.length * 0.7)
      return { kind: "dependency manifest", what: `the dependency list ${name}`, secrets: [] };
  }
  return undefined;
}

function secretsOf(text: string): string[] {
  return shapedSecretsIn(text).map((secret) => secret.value);
}
