import path from "node:path";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import { buildFinding } from "../evidence/finding.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { isVendoredFolder, walkFiles } from "../source/walk-files.ts";
import { isBackupPath, judgeFileContent } from "./misconfig-file-content.ts";
import type { MappedPath } from "./misconfig-support.ts";
import { get, locationOf, looksLikeControl, MissingControl, mappedGetPaths } from "./misconfig-support.ts";

// Files a web server should never hand out: VCS metadata, environment files, database dumps and files,
// backup and editor copies of source, dependency manifests. Candidates come from a short list of
// well-known names, the map (paths the source or a crawl saw), backup names of the source's own files and
// of mapped server-side files, and sensitive-looking files in the source's static folders. Each is judged
// by content against what the application answers for a path that cannot exist.

const WELL_KNOWN_FILES = [
  "/.env",
  "/.env.local",
  "/.env.production",
  "/.env.backup",
  "/.git/config",
  "/.git/HEAD",
  "/.svn/entries",
  "/.hg/hgrc",
  "/.htpasswd",
  "/backup.sql",
  "/dump.sql",
  "/database.sql",
  "/db.sql",
  "/db.sqlite",
  "/database.sqlite",
  "/app.db",
  "/config.php.bak",
  "/wp-config.php.bak",
  "/package.json",
  "/composer.json",
  "/requirements.txt",
];

const BACKUP_NAMES = (name: string) => [`${name}.bak`, `${name}~`, `${name}.old`, `.${name}.swp`];
const SERVER_SIDE =
  /\.(?:php\d?|py|rb|pl|jsp|aspx?|config|ini|conf|env|ya?ml|properties|toml|js|mjs|cjs|ts)$/i;
const ASSET = /\.(?:css|png|jpe?g|gif|svg|ico|webp|woff2?|ttf|eot|map|html?|mp4|mp3|pdf)$/i;
const STATIC_FOLDER = /^(?:public|static|www|htdocs|wwwroot|web|webroot|assets|site)$/i;
const SENSITIVE_NAME =
  /(?:~|\.(?:bak|backup|old|orig|save|swp|tmp|sql|dump|db|sqlite3?|env|pem|key)|^\.env.*|^\.git|^\.htpasswd|^id_rsa)$/i;
const MAX_SOURCE_FILES = 6;
const MAX_STATIC_FILES = 20;

export interface FileCandidate extends MappedPath {
  /** How the candidate was chosen: `well-known`, `map`, `backup of app.py`, `static folder`. */
  origin: string;
}

export function fileCandidates(run: ProbeRun): FileCandidate[] {
  const candidates = new Map<string, FileCandidate>();
  const add = (candidate: FileCandidate) => {
    if (!candidates.has(candidate.path)) candidates.set(candidate.path, candidate);
  };
  for (const mapped of mappedGetPaths(run)) {
    const name = mapped.path.split("/").pop() ?? "";
    if (!isFileLike(name) || ASSET.test(name)) continue;
    add({ ...mapped, origin: "map" });
    if (SERVER_SIDE.test(name) && !isBackupPath(name)) {
      const folder = mapped.path.slice(0, mapped.path.length - name.length);
      for (const backup of BACKUP_NAMES(name))
        add({ path: `${folder}${backup}`, origin: `backup of ${mapped.path}` });
    }
  }
  for (const file of WELL_KNOWN_FILES) add({ path: file, origin: "well-known" });
  const root = run.context.target?.root;
  if (root) for (const candidate of sourceCandidates(root)) add(candidate);
  return [...candidates.values()];
}

function isFileLike(name: string): boolean {
  return name.startsWith(".") || /\.[A-Za-z0-9]{1,8}$|~$/.test(name);
}

/** Backup names of the source's top-level server files, and sensitive files in its static folders. */
function sourceCandidates(root: string): FileCandidate[] {
  const result: FileCandidate[] = [];
  const walked = walkFiles(root, {
    skipFolder: (name) => isVendoredFolder(name) && !/^\.well-known$/.test(name),
    keep: () => true,
    maxFiles: 400,
    maxFileBytes: Number.POSITIVE_INFINITY,
  });
  const topLevel = walked.files.filter(
    (file) => !file.includes("/") && SERVER_SIDE.test(file) && !/\.(?:ya?ml|json)$/i.test(file),
  );
  for (const file of topLevel.slice(0, MAX_SOURCE_FILES))
    for (const backup of BACKUP_NAMES(file)) result.push({ path: `/${backup}`, origin: `backup of ${file}` });
  let statics = 0;
  for (const file of walked.files) {
    const parts = file.split("/");
    const staticIndex = parts.findIndex((part) => STATIC_FOLDER.test(part));
    const name = parts[parts.length - 1]!;
    if (staticIndex < 0 || staticIndex === parts.length - 1 || !SENSITIVE_NAME.test(name)) continue;
    const inside = parts.slice(staticIndex + 1).join("/");
    for (const served of [`/${inside}`, `/${parts[staticIndex]}/${inside}`]) {
      result.push({ path: served, origin: `static file ${path.posix.join(...parts)}` });
    }
    statics += 1;
    if (statics >= MAX_STATIC_FILES) break;
  }
  return result;
}

export async function checkExposedFiles(
  run: ProbeRun,
  stats: { files_checked: number },
): Promise<EnvelopeDraft[]> {
  const controls = new MissingControl(run);
  const findings: EnvelopeDraft[] = [];
  await mapConcurrent(fileCandidates(run), 6, async (candidate) => {
    stats.files_checked += 1;
    const exchange = await get(run, undefined, candidate.path, { accept: "*/*" });
    if (!exchange?.response || !isSuccess(exchange)) return;
    const folder = candidate.path.slice(0, candidate.path.lastIndexOf("/") + 1) || "/";
    const extension = path.posix.extname(candidate.path) || ".txt";
    if (looksLikeControl(exchange, await controls.for(folder, extension))) return;
    const verdict = judgeFileContent(candidate.path, exchange.response.body, exchange.response.contentType);
    if (!verdict) return;
    for (const secret of verdict.secrets) run.masker.addSecret(secret);
    const withSecrets = verdict.secrets.length > 0;
    const severity: Severity =
      verdict.kind === "dependency manifest"
        ? "low"
        : verdict.kind === "environment file" && !withSecrets
          ? "medium"
          : "high";
    findings.push(
      buildFinding(run, {
        domain: "security",
        defectClass: withSecrets ? "secret-exposure" : "misconfiguration",
        title: `${candidate.path} serves ${verdict.what} to anyone`,
        summary: `GET ${candidate.path} answered ${exchange.response.status} without credentials with ${verdict.what}${withSecrets ? `, carrying ${verdict.secrets.length} secret value(s)` : ""}; a path that cannot exist answers differently, so the file is really there (candidate from ${candidate.origin}). Values are masked in the evidence.`,
        impact: withSecrets
          ? "Secrets of the deployment (database passwords, keys, tokens) are readable by anyone."
          : "Internals of the application (its history, its data, its code or its dependencies) are readable by anyone.",
        location: locationOf(candidate),
        severity,
        confidence: 0.9,
        discriminator: "exposed-file",
        exchanges: [{ label: "file", exchange }],
        repro: {
          title: `${candidate.path} is not served`,
          steps: [{ name: "file", method: "GET", path: candidate.path }],
          assertions: [
            {
              kind: "status_in",
              step: "file",
              values: [401, 403, 404, 410],
              message: `${candidate.path} must not be served`,
            },
          ],
        },
      }),
    );
  });
  return findings;
}
