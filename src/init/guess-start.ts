import type { FrameworkGuess } from "./guess-framework.ts";
import { lineAt, type Repository } from "./repository.ts";

// How the application is started and on which port: what the repository itself says (Procfile, package
// scripts, a `__main__` block that runs a server, manage.py), else the framework's own command. The port
// comes from the start command, then a PORT-like variable's default in code, a literal `listen`/`run`,
// an .env example, and last the framework's default.

export interface StartGuess {
  command: string;
  from: string;
  /** Variables to set so the app listens where the profile's base_url says. */
  env?: Record<string, string>;
}

export interface PortGuess {
  port: number;
  from: string;
  /** The environment variable the app reads its port from, when the code says. */
  variable?: string;
}

const DEFAULT_PORTS: Record<string, number> = {
  express: 3000,
  fastify: 3000,
  koa: 3000,
  hono: 3000,
  nestjs: 3000,
  nextjs: 3000,
  hapi: 3000,
  restify: 8080,
  flask: 5000,
  connexion: 5000,
  quart: 5000,
  fastapi: 8000,
  starlette: 8000,
  django: 8000,
  sanic: 8000,
  aiohttp: 8080,
  tornado: 8888,
  bottle: 8080,
  falcon: 8000,
  pyramid: 6543,
};

const PORT_IN_COMMAND = /(?:--port[= ]|-p\s+|\bPORT=|(?:\d{1,3}\.){3}\d{1,3}:|localhost:)(\d{2,5})\b/;
/** `process.env.PORT || 3000`, `env.PORT ?? "3000"`, `intFrom(env.PORT, 4010)`. */
const JAVASCRIPT_ENV_PORT = /\benv\.([A-Z0-9_]*PORT)\b\s*(?:\|\||\?\?|,)\s*["'`]?(\d{2,5})\b/;
/** `os.environ.get("PORT", 5000)`, `os.getenv('WEB_PORT', '8000')`, `environ.get("PORT") or 5000`. */
const PYTHON_ENV_PORT =
  /(?:environ\.get|getenv)\(\s*["']([A-Z0-9_]*PORT)["']\s*(?:,\s*|\)\s*or\s*)["']?(\d{2,5})\b/;
const LISTEN_PORT = /\.listen\(\s*(?:\{[^}]*?\bport\s*:\s*)?(\d{2,5})\b/;
const RUN_PORT = /\.run(?:_app)?\([^)]*?\bport\s*=\s*(\d{2,5})\b/;
const MAIN_BLOCK = /^if\s+__name__\s*==\s*["']__main__["']\s*:/m;
const SERVES = /\.run\(|serve_forever\(|uvicorn\.run\(|web\.run_app\(|\.listen\(|serve\(/;
const ENTRY_NAMES = ["app.py", "main.py", "run.py", "server.py", "wsgi.py", "asgi.py", "application.py"];

export function guessPort(repository: Repository, framework: FrameworkGuess | undefined): PortGuess {
  const scripted = scriptedStart(repository);
  const inCommand = scripted ? PORT_IN_COMMAND.exec(scripted.text)?.[1] : undefined;
  if (scripted && inCommand) return { port: Number(inCommand), from: scripted.from };
  const python = framework?.language === "python";
  const entry = scripted ? scriptEntryFile(scripted.text) : undefined;
  const ordered = [
    ...(entry ? [entry] : []),
    ...[...repository.codeFiles]
      .filter((file) => file !== entry)
      .sort(
        (left, right) => Number(left.endsWith(".py") !== python) - Number(right.endsWith(".py") !== python),
      ),
  ];
  const inCode = (javascript: RegExp, pythonPattern: RegExp) => {
    for (const file of ordered) {
      const text = repository.read(file);
      const match = (file.endsWith(".py") ? pythonPattern : javascript).exec(text);
      if (match) return { file, text, match };
    }
    return undefined;
  };
  const fromEnv = inCode(JAVASCRIPT_ENV_PORT, PYTHON_ENV_PORT);
  if (fromEnv) {
    const { file, text, match } = fromEnv;
    return {
      port: Number(match[2]),
      variable: match[1],
      from: `${file}:${lineAt(text, match.index)} (default of ${match[1]})`,
    };
  }
  const literal = inCode(LISTEN_PORT, RUN_PORT);
  if (literal) {
    const { file, text, match } = literal;
    return { port: Number(match[1]), from: `${file}:${lineAt(text, match.index)}` };
  }
  for (const [name, { value, file }] of repository.dotenv) {
    if (/PORT$/.test(name) && /^\d{2,5}$/.test(value))
      return { port: Number(value), variable: name, from: file };
  }
  const fallback = framework ? DEFAULT_PORTS[framework.name] : undefined;
  return fallback
    ? { port: fallback, from: `${framework!.name}'s default port` }
    : { port: 8080, from: "no port found; a common default" };
}

export function guessStart(
  repository: Repository,
  framework: FrameworkGuess | undefined,
  port: PortGuess,
): StartGuess | undefined {
  const env = port.variable ? { [port.variable]: String(port.port) } : undefined;
  const scripted = scriptedStart(repository);
  if (scripted) {
    const needsPort = /\$\{?PORT\b/.test(scripted.text);
    return {
      command: scripted.command,
      from: scripted.from,
      ...(env ? { env } : needsPort ? { env: { PORT: String(port.port) } } : {}),
    };
  }
  if (framework?.language === "python" || (!framework && !repository.packageJson))
    return pythonStart(repository, framework, port, env);
  return nodeStart(repository, env);
}

/** What the repository says starts it: Procfile `web:`, else package.json `start`, else `dev`. */
function scriptedStart(repository: Repository): { command: string; text: string; from: string } | undefined {
  const web = repository.procfile.get("web");
  if (web) return { command: web, text: web, from: "Procfile web:" };
  const scripts = repository.packageJson?.scripts ?? {};
  if (scripts.start) return { command: "npm start", text: scripts.start, from: "package.json scripts.start" };
  if (scripts.dev) return { command: "npm run dev", text: scripts.dev, from: "package.json scripts.dev" };
  return undefined;
}

function pythonStart(
  repository: Repository,
  framework: FrameworkGuess | undefined,
  port: PortGuess,
  env: Record<string, string> | undefined,
): StartGuess | undefined {
  const withEnv = (guess: StartGuess): StartGuess => (env ? { ...guess, env } : guess);
  if (repository.codeFiles.includes("manage.py")) {
    return withEnv({
      command: `python3 manage.py runserver 127.0.0.1:${port.port} --noreload`,
      from: "manage.py",
    });
  }
  const python = repository.codeFiles.filter((file) => file.endsWith(".py"));
  const runnable = python
    .filter((file) => {
      const text = repository.read(file);
      const main = MAIN_BLOCK.exec(text);
      return main !== null && SERVES.test(text.slice(main.index));
    })
    .sort((left, right) => entryRank(left) - entryRank(right));
  if (runnable[0])
    return withEnv({
      command: `python3 ${runnable[0]}`,
      from: `${runnable[0]} runs a server under __main__`,
    });
  for (const [factory, command] of [
    ["FastAPI", (module: string) => `python3 -m uvicorn ${module} --host 127.0.0.1 --port ${port.port}`],
    ["Starlette", (module: string) => `python3 -m uvicorn ${module} --host 127.0.0.1 --port ${port.port}`],
    ["Flask", (module: string) => `python3 -m flask --app ${module} run --port ${port.port}`],
  ] as const) {
    if (framework && !["fastapi", "starlette", "flask", "connexion"].includes(framework.name)) break;
    for (const file of [...python].sort((left, right) => entryRank(left) - entryRank(right))) {
      const text = repository.read(file);
      const match = new RegExp(`^(\\w+)\\s*=\\s*(?:\\w+\\.)?${factory}\\(`, "m").exec(text);
      if (!match) continue;
      const module = `${file.replace(/\.py$/, "").split("/").join(".")}:${match[1]}`;
      return withEnv({
        command: command(module),
        from: `${file}:${lineAt(text, match.index)} (${factory} app)`,
      });
    }
  }
  return undefined;
}

function nodeStart(repository: Repository, env: Record<string, string> | undefined): StartGuess | undefined {
  const main = repository.packageJson?.main;
  const candidates = [
    ...(main ? [main.replace(/^\.\//, "")] : []),
    "server.js",
    "app.js",
    "index.js",
    "src/server.js",
    "src/index.js",
    "src/app.js",
    "server.ts",
    "src/server.ts",
    "src/index.ts",
    "src/main.ts",
  ];
  for (const file of candidates) {
    if (!repository.codeFiles.includes(file) || !/\.listen\(/.test(repository.read(file))) continue;
    const command = file.endsWith(".ts") ? `node --import tsx ${file}` : `node ${file}`;
    return { command, from: `${file} calls listen()`, ...(env ? { env } : {}) };
  }
  return undefined;
}

/** The file a `node [flags] file` script runs (often extension-less, like `bin/www`). */
function scriptEntryFile(script: string): string | undefined {
  const match = /\bnode\s+(?:-{1,2}[\w-]+(?:[= ](?!\.?\/)\S+)?\s+)*(\.{0,2}\/?[\w./-]+)/.exec(script);
  return match?.[1]?.replace(/^\.\//, "");
}

/** Root-level files with the usual entry names first, then shallower files. */
function entryRank(file: string): number {
  const depth = file.split("/").length;
  const named = ENTRY_NAMES.indexOf(file.split("/").pop() ?? "");
  return depth * 100 + (named === -1 ? 50 : named);
}
