import fs from "node:fs";
import path from "node:path";
import type { Route } from "../../map/system-map.ts";
import { joinPaths, normalizePathTemplate } from "./path-template.ts";
import { RouteInputsBuilder } from "./route-inputs.ts";
import { MaskedSource, type SourceSyntax, skipSpace, textRoute, uniqueRoutes } from "./source-text.ts";
import { readSource } from "./source-tree.ts";

// PHP routes two ways. Laravel declares them (`Route::get('/x/{id}', …)`, `Route::resource('photos', …)`,
// prefixes from `Route::prefix('api')->group(…)` and `Route::group(['prefix' => …], …)`, `/api` for
// routes/api.php). A plain PHP application has no router: every page under the web root is served as it
// is, so each such file is a route (`GET /path/file.php`, `POST` too when it reads `$_POST`), with the
// request superglobals it reads as parameters. Library files (classes, functions, configuration, includes)
// are not pages.

const PHP_SYNTAX: SourceSyntax = { lineComments: ["//", "#"], blockComments: true, quotes: "\"'" };

const VERBS = new Set(["get", "post", "put", "patch", "delete", "options", "any"]);

/** Laravel's `Route::resource` actions: method, path suffix, whether it takes the member's `{id}`. */
const RESOURCE_ACTIONS: Array<[string, string, string, boolean]> = [
  ["index", "GET", "", false],
  ["create", "GET", "/create", false],
  ["store", "POST", "", false],
  ["show", "GET", "", true],
  ["edit", "GET", "/edit", true],
  ["update", "PUT", "", true],
  ["update", "PATCH", "", true],
  ["destroy", "DELETE", "", true],
];

/** Folders whose files are included by pages, not requested by a browser. */
const LIBRARY_FOLDERS = new Set([
  "include",
  "includes",
  "inc",
  "lib",
  "libs",
  "library",
  "classes",
  "class",
  "config",
  "configs",
  "templates",
  "template",
  "views",
  "partials",
  "layouts",
  "src",
  "app",
  "database",
  "migrations",
  "bootstrap",
  "storage",
  "resources",
  "routes",
  "lang",
  "locale",
  "cache",
]);

const LIBRARY_FILE =
  /\.(?:inc|class|config|conf|tpl|tmpl)\.php$|^(?:config|configuration|settings|db|database|connect|connection|functions|helpers|common|init|bootstrap|autoload|header|footer|navbar|nav|sidebar|layout)\.php$/i;

const WEB_ROOTS = ["public", "public_html", "htdocs", "www", "web", "html"];

export function scanPhpRoutes(root: string, files: readonly string[]): Route[] {
  const sources = new Map<string, string>();
  for (const file of files) {
    const source = readSource(root, file);
    if (source !== undefined) sources.set(file, source);
  }
  const routes: Route[] = [];
  for (const [file, source] of sources) {
    if (/\bRoute::/.test(source)) routes.push(...laravelRoutes(file, new MaskedSource(source, PHP_SYNTAX)));
  }
  if (routes.length === 0 && !usesFrontController(root))
    routes.push(...pageRoutes([...sources.keys()], sources));
  return uniqueRoutes(routes);
}

// ---------------------------------------------------------------------------------------------------
// Laravel

interface Group {
  prefix: string;
  body: [number, number];
}

function laravelRoutes(file: string, masked: MaskedSource): Route[] {
  const code = masked.code;
  const groups: Group[] = [];
  const routes: Route[] = [];
  const filePrefix = /(?:^|\/)routes\/api\.php$/.test(file) ? "/api" : "";
  const prefixAt = (at: number): string =>
    groups
      .filter((group) => group.body[0] < at && at < group.body[1])
      .sort((left, right) => left.body[0] - right.body[0])
      .reduce((prefix, group) => joinPaths(prefix, group.prefix), filePrefix);
  for (const start of code.matchAll(/\bRoute::/g)) {
    let position = start.index + start[0].length;
    let prefix = "";
    for (;;) {
      const call = /^\s*([A-Za-z_]\w*)\s*\(/.exec(code.slice(position, position + 80));
      if (!call) break;
      const name = (call[1] ?? "").toLowerCase();
      const open = position + call[0].length - 1;
      const close = masked.closing(open);
      if (close < 0) break;
      const args = masked.split(open + 1, close);
      const firstString = (): string | undefined => {
        const first = args[0];
        if (!first) return undefined;
        const literal = masked.stringAt(first[0]);
        return literal && skipSpace(code, literal.end) === first[1] ? literal.value : undefined;
      };
      const line = masked.lineAt(start.index);
      const here = (): string => joinPaths(prefixAt(start.index), prefix);
      if (name === "prefix") prefix = firstString() ?? prefix;
      else if (name === "group") {
        const options = args.length > 1 ? args[0] : undefined;
        const arrayPrefix = options ? arrayOption(masked, options, "prefix") : undefined;
        groups.push({ prefix: joinPaths(prefix, arrayPrefix ?? ""), body: [open, close] });
      } else if (VERBS.has(name) || name === "match") {
        const pathArgument = name === "match" ? 1 : 0;
        const target = args[pathArgument];
        const literal = target ? masked.stringAt(target[0]) : undefined;
        if (literal && args.length > pathArgument + 1 && skipSpace(code, literal.end) === target?.[1]) {
          const methods =
            name === "match"
              ? masked.stringsIn(args[0]?.[0] ?? 0, args[0]?.[1] ?? 0).map((method) => method.toUpperCase())
              : [name === "any" ? "ALL" : name.toUpperCase()];
          const template = laravelTemplate(joinPaths(here(), literal.value));
          for (const method of methods) routes.push(textRoute(method, template, file, line, "laravel"));
        }
      } else if (name === "resource" || name === "apiresource") {
        const resource = firstString();
        if (resource) routes.push(...resourceRoutes(resource, here(), name === "apiresource", file, line));
      }
      position = close + 1;
      const arrow = /^\s*->/.exec(code.slice(position, position + 20));
      if (!arrow) break;
      position += arrow[0].length;
    }
  }
  return routes;
}

/** `'prefix' => 'admin'` in a group's options array. */
function arrayOption(masked: MaskedSource, [start, end]: [number, number], key: string): string | undefined {
  const pattern = new RegExp(`^\\s*['"]${key}['"]\\s*=>\\s*`);
  const open = skipSpace(masked.code, start);
  if (masked.code[open] !== "[") return undefined;
  for (const [pieceStart, pieceEnd] of masked.split(open + 1, Math.min(end, masked.closing(open)))) {
    const text = masked.text.slice(pieceStart, pieceEnd);
    const match = pattern.exec(text);
    if (match) return masked.stringAt(pieceStart + match[0].length)?.value;
  }
  return undefined;
}

function resourceRoutes(resource: string, prefix: string, api: boolean, file: string, line: number): Route[] {
  // `photos.comments` nests: /photos/{photo}/comments/{comment}.
  const segments = resource.split(".");
  let base = prefix;
  for (const segment of segments.slice(0, -1)) base = joinPaths(base, `${segment}/{${singular(segment)}}`);
  const last = segments[segments.length - 1] ?? resource;
  const collection = joinPaths(base, last);
  const member = `${collection}/{${singular(last.split("/").pop() ?? last)}}`;
  return RESOURCE_ACTIONS.filter(([action]) => !(api && (action === "create" || action === "edit"))).map(
    ([, method, suffix, onMember]) =>
      textRoute(method, laravelTemplate(`${onMember ? member : collection}${suffix}`), file, line, "laravel"),
  );
}

function singular(word: string): string {
  const clean = word.replace(/-/g, "_");
  if (clean.endsWith("ies")) return `${clean.slice(0, -3)}y`;
  if (/(?:ss|us)$/.test(clean)) return clean;
  return clean.endsWith("s") ? clean.slice(0, -1) : clean;
}

function laravelTemplate(raw: string): string {
  return normalizePathTemplate(raw.replace(/\{([A-Za-z_]\w*)\?\}/g, "{$1}"), "brace");
}

// ---------------------------------------------------------------------------------------------------
// Plain PHP pages

/** A framework that routes every request through one script (Laravel, Symfony, Slim…). */
function usesFrontController(root: string): boolean {
  if (fs.existsSync(path.join(root, "artisan"))) return true;
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "composer.json"), "utf8")) as {
      require?: Record<string, string>;
    };
    return Object.keys(manifest.require ?? {}).some((name) =>
      /^(?:laravel\/(?:framework|lumen-framework)|symfony\/framework-bundle|slim\/slim|cakephp\/cakephp|yiisoft\/yii2|codeigniter4\/framework|laminas\/laminas-mvc)$/.test(
        name,
      ),
    );
  } catch {
    return false;
  }
}

function webRoot(files: readonly string[]): string {
  if (files.includes("index.php")) return "";
  for (const folder of WEB_ROOTS)
    if (files.some((file) => file.startsWith(`${folder}/`))) return `${folder}/`;
  return "";
}

function pageRoutes(files: readonly string[], sources: ReadonlyMap<string, string>): Route[] {
  const base = webRoot(files);
  const masked = new Map([...sources].map(([file, source]) => [file, new MaskedSource(source, PHP_SYNTAX)]));
  const includes = new Map([...masked].map(([file, view]) => [file, includedFiles(view, files, file)]));
  const included = new Set([...includes.values()].flat());
  const routes: Route[] = [];
  for (const file of files) {
    if (!file.startsWith(base) || included.has(file)) continue;
    const served = file.slice(base.length);
    if (isLibrary(served)) continue;
    const view = masked.get(file);
    if (!view || !isPage(view)) continue;
    // A page split into includes reads the request in them: their reads are the page's. A shared library
    // (`includes/`, `*.inc.php`) reads for every page alike, so it says nothing about this one.
    const own = (includes.get(file) ?? []).filter((other) => !isLibrary(other));
    const views = [view, ...own.flatMap((other) => masked.get(other) ?? [])];
    routes.push(...pageRoutesOf(file, `/${served}`, views));
  }
  return routes;
}

function isLibrary(file: string): boolean {
  const parts = file.split("/");
  const name = parts.pop() ?? "";
  return parts.some((part) => LIBRARY_FOLDERS.has(part.toLowerCase())) || LIBRARY_FILE.test(name);
}

/**
 * Files `file` includes: each `include`/`require` expression's literal parts, interpolations read as any
 * name (`"source/{$level}.php"` matches every file in `source/`), matched against the end of each path. A
 * `.php` file read as text (`eval('?>' . file_get_contents("help/{$id}.php"))`) is a template too.
 */
function includedFiles(masked: MaskedSource, files: readonly string[], file: string): string[] {
  const found = new Set<string>();
  for (const statement of masked.code.matchAll(
    /\b(?:include|require)(?:_once)?\b[^;]*;|\bfile_get_contents\s*\(/g,
  )) {
    const read = statement[0].startsWith("file_get_contents");
    const open = statement.index + statement[0].length - 1;
    const literals = read
      ? masked.stringsIn(open + 1, Math.max(open + 1, masked.closing(open)))
      : masked.stringsIn(statement.index, statement.index + statement[0].length);
    const text = literals.join("");
    if (read && !/\.php$/.test(text)) continue;
    if (!/\.php|\/|\$/.test(text) || text.replace(/\{?\$[^}/]*\}?/g, "").length < 4) continue;
    const pattern = new RegExp(
      `(?:^|/)${literals
        .map((literal) =>
          literal
            .split(/\{\$[^}]*\}|\$[A-Za-z_]\w*/)
            // Only a literal's own start is relative (`./`, `../`, `/`): after an interpolation, `/` separates.
            .map((piece, index) =>
              (index === 0 ? piece.replace(/^(?:\.{0,2}\/)+/, "") : piece).replace(
                /[.*+?^${}()|[\]\\]/g,
                "\\$&",
              ),
            )
            .join("[^/]*"),
        )
        .join(".*")}${/\.php$/.test(text) ? "" : "[^/]*\\.php"}$`,
    );
    for (const candidate of files) if (candidate !== file && pattern.test(candidate)) found.add(candidate);
  }
  return [...found];
}

/** A page reads the request or writes a response; a library only declares classes, functions, settings. */
function isPage(masked: MaskedSource): boolean {
  const code = masked.code;
  if (/^\s*namespace\s+[\w\\]+\s*;/m.test(code)) return false;
  if (/\$_(?:GET|POST|REQUEST|FILES|COOKIE)\b|\bfilter_input\s*\(/.test(code)) return true;
  if (/^\s*(?:abstract\s+|final\s+)?(?:class|interface|trait)\s+\w+/m.test(code)) return false;
  const html = code.replace(/<\?(?:php|=)?[\s\S]*?(?:\?>|$)/g, "").trim();
  if (html !== "") return true;
  // A page that builds its output through the application's helpers still starts from an include.
  return /\b(?:echo|print|printf|header|readfile|json_encode|require|require_once|include|include_once)\b/.test(
    code,
  );
}

function pageRoutesOf(file: string, served: string, views: readonly MaskedSource[]): Route[] {
  const reads = {
    GET: new Set<string>(),
    POST: new Set<string>(),
    REQUEST: new Set<string>(),
    COOKIE: new Set<string>(),
  };
  let files = false;
  let takesPost = false;
  for (const masked of views) {
    for (const match of masked.code.matchAll(/\$_(GET|POST|REQUEST|COOKIE|FILES)\s*\[\s*(?=['"])/g)) {
      const name = masked.stringAt(match.index + match[0].length)?.value;
      if (!name) continue;
      if (match[1] === "FILES") files = true;
      else reads[match[1] as keyof typeof reads].add(name);
    }
    for (const match of masked.code.matchAll(
      /\bfilter_input\s*\(\s*INPUT_(GET|POST|COOKIE)\s*,\s*(?=['"])/g,
    )) {
      const name = masked.stringAt(match.index + match[0].length)?.value;
      if (name) reads[match[1] as keyof typeof reads].add(name);
    }
    files ||= /\$_FILES\b/.test(masked.code);
    takesPost ||=
      /\$_POST\b/.test(masked.code) || /REQUEST_METHOD['"]\s*\]\s*[!=]==?\s*['"]POST/i.test(masked.text);
  }
  takesPost ||= reads.POST.size > 0 || files;
  const line = 1;
  const get = new RouteInputsBuilder();
  for (const name of [...reads.GET, ...reads.REQUEST]) get.parameter("query", name);
  for (const name of reads.COOKIE) get.parameter("cookie", name);
  const routes = [textRoute("GET", served, file, line, "php", get.build())];
  if (takesPost) {
    const post = new RouteInputsBuilder();
    for (const name of reads.GET) post.parameter("query", name);
    for (const name of reads.COOKIE) post.parameter("cookie", name);
    for (const name of [...reads.POST, ...reads.REQUEST]) post.bodyField([name]);
    post.encoding(files ? "multipart" : "form");
    if (reads.POST.size + reads.REQUEST.size === 0) post.readsBody();
    routes.push(textRoute("POST", served, file, line, "php", post.build()));
  }
  return routes;
}
