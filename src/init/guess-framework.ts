import type { Route } from "../map/system-map.ts";
import type { Repository } from "./repository.ts";

// Which web framework serves the application: a declared dependency first, then an import in the code,
// then what the route scanner attributed routes to. The language decides how the app is started.

export interface FrameworkGuess {
  name: string;
  language: "javascript" | "python";
  from: string;
}

/** Dependency (npm or PyPI name) → framework, most specific first where one builds on another. */
const FRAMEWORK_PACKAGES: Array<[string, string, FrameworkGuess["language"]]> = [
  ["@nestjs/core", "nestjs", "javascript"],
  ["next", "nextjs", "javascript"],
  ["fastify", "fastify", "javascript"],
  ["hono", "hono", "javascript"],
  ["koa", "koa", "javascript"],
  ["@hapi/hapi", "hapi", "javascript"],
  ["restify", "restify", "javascript"],
  ["express", "express", "javascript"],
  ["connexion", "connexion", "python"],
  ["fastapi", "fastapi", "python"],
  ["django", "django", "python"],
  ["djangorestframework", "django", "python"],
  ["starlette", "starlette", "python"],
  ["sanic", "sanic", "python"],
  ["quart", "quart", "python"],
  ["aiohttp", "aiohttp", "python"],
  ["tornado", "tornado", "python"],
  ["falcon", "falcon", "python"],
  ["bottle", "bottle", "python"],
  ["pyramid", "pyramid", "python"],
  ["flask", "flask", "python"],
];

const PYTHON_IMPORT = /^\s*(?:from\s+([A-Za-z_][\w]*)|import\s+([A-Za-z_][\w]*))/gm;
const JAVASCRIPT_IMPORT = /(?:from\s+|require\(\s*)["']([@\w][\w./@-]*)["']/g;

export function guessFramework(repository: Repository, routes: readonly Route[]): FrameworkGuess | undefined {
  const javascript = new Set(repository.packageJson?.dependencies ?? []);
  for (const [dependency, name, language] of FRAMEWORK_PACKAGES) {
    if (language === "javascript" && javascript.has(dependency))
      return { name, language, from: "package.json dependencies" };
    const pythonFile = language === "python" ? repository.pythonDependencies.get(dependency) : undefined;
    if (pythonFile) return { name, language, from: `${pythonFile}` };
  }
  const imported = importedFramework(repository);
  if (imported) return imported;
  const counts = new Map<string, number>();
  for (const route of routes) counts.set(route.framework, (counts.get(route.framework) ?? 0) + 1);
  const [top] = [...counts].sort((left, right) => right[1] - left[1]);
  if (!top) return undefined;
  const known = FRAMEWORK_PACKAGES.find(([, name]) => name === top[0]);
  const routeFile = routes.find((route) => route.framework === top[0])?.file ?? "";
  return {
    name: top[0],
    language: known?.[2] ?? (routeFile.endsWith(".py") ? "python" : "javascript"),
    from: `routes in ${routeFile}`,
  };
}

/** The first framework a code file imports, shallowest files first. */
function importedFramework(repository: Repository): FrameworkGuess | undefined {
  for (const file of repository.codeFiles) {
    const text = repository.read(file);
    const modules = file.endsWith(".py")
      ? [...text.matchAll(PYTHON_IMPORT)].map((match) => match[1] ?? match[2] ?? "")
      : [...text.matchAll(JAVASCRIPT_IMPORT)].map((match) => match[1] ?? "");
    for (const [dependency, name, language] of FRAMEWORK_PACKAGES) {
      if ((language === "python") !== file.endsWith(".py")) continue;
      if (modules.some((module) => module === dependency || module.startsWith(`${dependency}/`)))
        return { name, language, from: `import in ${file}` };
    }
  }
  return undefined;
}
