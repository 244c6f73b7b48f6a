import ts from "typescript";

// The scripts a frontend ships, as one TypeScript program held in memory: the compiler parses JavaScript
// (minified or not) and TypeScript alike, and its checker resolves a name to its declaration through
// scopes and imports, which is what turns `this.base + "/users/" + id` into a path.

export interface ScriptSource {
  /** A stable name: the script's path, or `map:<source>` for a file recovered from a source map. */
  name: string;
  text: string;
  /** The page path that loads it: relative URLs in it resolve against this. */
  page: string;
}

export interface ScriptProgram {
  checker: ts.TypeChecker;
  files: ts.SourceFile[];
  /** The page each file was loaded from. */
  pageOf(file: ts.SourceFile): string;
}

const EXTENSIONS = /\.(?:[cm]?[jt]sx?)$/i;

export function scriptProgram(sources: readonly ScriptSource[]): ScriptProgram {
  const texts = new Map<string, string>();
  const pages = new Map<string, string>();
  for (const source of sources) {
    const fileName = virtualName(source.name, texts);
    texts.set(fileName, source.text);
    pages.set(fileName, source.page);
  }
  const options: ts.CompilerOptions = {
    allowJs: true,
    checkJs: false,
    noLib: true,
    noEmit: true,
    types: [],
    target: ts.ScriptTarget.ESNext,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    jsx: ts.JsxEmit.Preserve,
    allowArbitraryExtensions: true,
  };
  const host: ts.CompilerHost = {
    getSourceFile: (fileName, languageVersion) => {
      const text = texts.get(fileName);
      return text === undefined ? undefined : ts.createSourceFile(fileName, text, languageVersion, true);
    },
    getDefaultLibFileName: () => "/lib.d.ts",
    writeFile: () => {},
    getCurrentDirectory: () => "/",
    getCanonicalFileName: (fileName) => fileName,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => "\n",
    fileExists: (fileName) => texts.has(fileName),
    readFile: (fileName) => texts.get(fileName),
    directoryExists: (directory) =>
      [...texts.keys()].some((fileName) =>
        fileName.startsWith(directory.endsWith("/") ? directory : `${directory}/`),
      ),
    getDirectories: () => [],
  };
  const program = ts.createProgram({ rootNames: [...texts.keys()], options, host });
  const files = program.getSourceFiles().filter((file) => texts.has(file.fileName));
  return {
    checker: program.getTypeChecker(),
    files,
    pageOf: (file) => pages.get(file.fileName) ?? "/",
  };
}

/**
 * An absolute file name the compiler accepts: the source's own path when it has a script extension (so a
 * source map's relative imports resolve between its files), else the name with `.js` added.
 */
function virtualName(name: string, taken: ReadonlyMap<string, string>): string {
  const clean = name
    .replace(/^[a-z]+:\/\/+/i, "/")
    .replace(/^map:/, "/map/")
    .replace(/[?#].*$/, "")
    .replace(/\/\.\//g, "/")
    .replace(/\/{2,}/g, "/");
  let path = clean.startsWith("/") ? clean : `/${clean}`;
  path = normalizeDots(path);
  if (!EXTENSIONS.test(path)) path = `${path}.js`;
  if (!taken.has(path)) return path;
  let counter = 2;
  while (taken.has(path.replace(EXTENSIONS, (extension) => `.${counter}${extension}`))) counter += 1;
  return path.replace(EXTENSIONS, (extension) => `.${counter}${extension}`);
}

function normalizeDots(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "..") segments.pop();
    else if (segment !== ".") segments.push(segment);
  }
  return segments.join("/") || "/";
}
