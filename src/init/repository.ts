import fs from "node:fs";
import path from "node:path";
import { isSkippedFolder } from "../probes/routes/source-tree.ts";
import { readTreeFile, walkFiles } from "../probes/source/walk-files.ts";

// What `qaas init` reads of a repository before guessing anything: its manifests (package.json, the
// Python dependency files, Procfile, .env examples) and its code and template files, each read once.

export interface PackageManifest {
  name?: string;
  description?: string;
  main?: string;
  scripts: Record<string, string>;
  dependencies: string[];
}

export interface Repository {
  root: string;
  /** The root package.json, when there is one. */
  packageJson: PackageManifest | undefined;
  /** The project's declared name: package.json, else pyproject.toml (PEP 621 or Poetry) or setup.py. */
  projectName: { name: string; from: string } | undefined;
  /** Lower-case Python distribution names, each with the file that lists it. */
  pythonDependencies: Map<string, string>;
  /** `web:` and other Procfile process types. */
  procfile: Map<string, string>;
  /** NAME=value lines of `.env`-style files at the root (examples included), each with its file. */
  dotenv: Map<string, { value: string; file: string }>;
  /** JavaScript, TypeScript and Python files (tests and vendored folders skipped), relative, `/`-separated. */
  codeFiles: string[];
  /** Server-side templates and static HTML. */
  templateFiles: string[];
  read(relative: string): string;
}

const CODE_FILE = /\.(?:py|[cm]?[jt]sx?)$/;
const TEMPLATE_FILE = /\.(?:html?|ejs|hbs|handlebars|pug|jade|njk|jinja2?|j2|twig|mustache|erb|vue|svelte)$/;
const TEST_FILE =
  /(\.|_)(test|spec)\.[cm]?[jt]sx?$|^test_.*\.py$|_test\.py$|^conftest\.py$|\.d\.ts$|\.min\.js$/;
const FORBIDDEN_FILE = /^defects\.ya?ml$/i;
const PYTHON_MANIFESTS = [
  "requirements.txt",
  "requirements/base.txt",
  "requirements/prod.txt",
  "pyproject.toml",
  "Pipfile",
  "setup.py",
  "setup.cfg",
];
const DOTENV_FILES = [".env.example", ".env.sample", ".env.template", ".env.dist", ".flaskenv", ".env"];

export function readRepository(root: string, options: { exclude?: string[] } = {}): Repository {
  const excluded = new Set((options.exclude ?? []).map((file) => path.resolve(file)));
  const cache = new Map<string, string>();
  const walked = walkFiles(root, {
    skipFolder: isSkippedFolder,
    keep: (relative, name) =>
      (CODE_FILE.test(name) || TEMPLATE_FILE.test(name)) &&
      !TEST_FILE.test(name) &&
      !FORBIDDEN_FILE.test(name) &&
      !excluded.has(path.join(root, relative)),
    maxFiles: 5000,
    maxFileBytes: 512 * 1024,
  }).files;
  const packageJson = readPackageJson(root);
  return {
    root,
    packageJson,
    projectName: packageJson?.name
      ? { name: packageJson.name, from: "package.json name" }
      : pythonProjectName(root),
    pythonDependencies: readPythonDependencies(root),
    procfile: readProcfile(root),
    dotenv: readDotenv(root),
    codeFiles: walked.filter((file) => CODE_FILE.test(file)),
    templateFiles: walked.filter((file) => TEMPLATE_FILE.test(file)),
    read(relative) {
      let text = cache.get(relative);
      if (text === undefined) {
        text = readTreeFile(root, relative) ?? "";
        cache.set(relative, text);
      }
      return text;
    },
  };
}

/** Every dependency name the repository declares, JavaScript and Python alike (Python lower-cased). */
export function dependencyNames(repository: Repository): Set<string> {
  return new Set([...(repository.packageJson?.dependencies ?? []), ...repository.pythonDependencies.keys()]);
}

/** The 1-based line of a character offset. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let position = 0; position < index && position < text.length; position += 1)
    if (text.charCodeAt(position) === 10) line += 1;
  return line;
}

function readPackageJson(root: string): PackageManifest | undefined {
  const text = readTreeFile(root, "package.json");
  if (text === undefined) return undefined;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const record = (field: unknown): Record<string, string> =>
    typeof field === "object" && field !== null
      ? Object.fromEntries(
          Object.entries(field).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
        )
      : {};
  return {
    ...(typeof value.name === "string" ? { name: value.name } : {}),
    ...(typeof value.description === "string" ? { description: value.description } : {}),
    ...(typeof value.main === "string" ? { main: value.main } : {}),
    scripts: record(value.scripts),
    dependencies: [...Object.keys(record(value.dependencies)), ...Object.keys(record(value.devDependencies))],
  };
}

/** Names from requirements files, pyproject (PEP 621 and Poetry), Pipfile and setup.py/cfg. */
function readPythonDependencies(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const add = (name: string, file: string) => {
    const normalised = name.toLowerCase().replace(/_/g, "-");
    if (normalised && !found.has(normalised)) found.set(normalised, file);
  };
  for (const file of PYTHON_MANIFESTS) {
    const text = readTreeFile(root, file);
    if (text === undefined) continue;
    if (file.endsWith(".txt")) {
      for (const line of text.split("\n")) {
        const name = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(line.replace(/#.*/, ""))?.[1];
        if (name && !line.trim().startsWith("-") && !line.includes("://")) add(name, file);
      }
    } else if (file === "Pipfile" || file === "pyproject.toml") {
      // Names quoted in dependency arrays, or `name = …` keys under a dependencies table.
      let inDependencies = false;
      for (const line of text.split("\n")) {
        const section = /^\s*\[([^\]]+)\]/.exec(line)?.[1];
        if (section !== undefined) inDependencies = /packages|dependencies/i.test(section);
        for (const quoted of line.matchAll(/["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:[<>=!~;[\s][^"']*)?["']/g))
          if (/dependencies|requires|^\s*["']/.test(line) || inDependencies) add(quoted[1] ?? "", file);
        const key = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=/.exec(line)?.[1];
        if (inDependencies && key && key !== "python") add(key, file);
      }
    } else {
      for (const quoted of text.matchAll(/["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:[<>=!~][^"']*)?["']/g))
        add(quoted[1] ?? "", file);
    }
  }
  return found;
}

function pythonProjectName(root: string): Repository["projectName"] {
  const pyproject = readTreeFile(root, "pyproject.toml");
  const declared = pyproject
    ? /^\[(?:project|tool\.poetry)\][^[]*?^\s*name\s*=\s*["']([^"']+)["']/m.exec(pyproject)?.[1]
    : undefined;
  if (declared) return { name: declared, from: "pyproject.toml name" };
  const setup = readTreeFile(root, "setup.py");
  const named = setup ? /\bname\s*=\s*["']([^"']+)["']/.exec(setup)?.[1] : undefined;
  return named ? { name: named, from: "setup.py name" } : undefined;
}

function readProcfile(root: string): Map<string, string> {
  const processes = new Map<string, string>();
  const text = readTreeFile(root, "Procfile");
  for (const line of text?.split("\n") ?? []) {
    const match = /^([A-Za-z0-9_-]+)\s*:\s*(.+)$/.exec(line.trim());
    if (match) processes.set(match[1]!, match[2]!.trim());
  }
  return processes;
}

function readDotenv(root: string): Repository["dotenv"] {
  const values: Repository["dotenv"] = new Map();
  for (const file of DOTENV_FILES) {
    const text = readTreeFile(root, file);
    for (const line of text?.split("\n") ?? []) {
      const match = /^\s*(?:export\s+)?([A-Z_][A-Z0-9_]*)\s*=\s*["']?([^"'#\s]*)["']?/.exec(line);
      if (match && !values.has(match[1]!)) values.set(match[1]!, { value: match[2] ?? "", file });
    }
  }
  return values;
}

export function isDirectory(folder: string): boolean {
  try {
    return fs.statSync(folder).isDirectory();
  } catch {
    return false;
  }
}
