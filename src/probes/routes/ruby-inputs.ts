import type { RouteInputs } from "./route-inputs.ts";
import { RouteInputsBuilder } from "./route-inputs.ts";
import type { SourceSyntax } from "./source-text.ts";

// What a Ruby handler reads, from its text: `params[:q]` (the query of a GET, the form of a write: Sinatra
// and Rails merge both into `params`), a JSON body parsed from `request.body.read` — in the block or in a
// helper the block calls — and the keys read off it, request headers through `request.env['HTTP_…']`
// and cookies through `request.cookies`.

export const RUBY_SYNTAX: SourceSyntax = { lineComments: ["#"], blockComments: false, quotes: "\"'" };

/** `[:name]` or `['name']` right after an expression. */
const KEY = String.raw`\s*\[\s*(?::(\w+)|(['"])([^'"\]]+)\2)\s*\]`;
const FETCHED = String.raw`\s*\.\s*(?:fetch|dig|delete)\s*\(\s*(?::(\w+)|(['"])([^'"]+)\2)`;

/**
 * Helpers of the file that answer the parsed JSON body (`def json_body; JSON.parse(request.body.read); end`):
 * a handler that calls one reads a JSON body.
 */
export function jsonBodyHelpers(text: string): Set<string> {
  const helpers = new Set<string>();
  for (const match of text.matchAll(/^\s*def\s+(\w+[?!]?)\s*(?:\(\s*\))?\s*(?:=\s*([^\n]+))?$/gm)) {
    const name = match[1] ?? "";
    const body = match[2] ?? text.slice((match.index ?? 0) + match[0].length).split(/^\s*end\b/m)[0];
    if (body && /JSON\.parse\s*\(\s*request\.(?:body\.read|raw_post)/.test(body)) helpers.add(name);
  }
  return helpers;
}

const DIRECT_PARSE = String.raw`JSON\.parse\s*\(\s*request\.body\.read[^)\n]*\)`;

function escaped(name: string): string {
  return name.replace(/[$?!]/g, "\\$&");
}

/** The keys read off `receiver` (a regular expression source): `x[:k]`, `x['k']`, `x.fetch(:k)`. */
function keysRead(block: string, receiver: string): string[] {
  return [
    ...block.matchAll(new RegExp(`${receiver}${KEY}`, "g")),
    ...block.matchAll(new RegExp(`${receiver}${FETCHED}`, "g")),
  ].flatMap((match) => {
    const name = match[1] ?? match[3];
    return name ? [name] : [];
  });
}

/** The inputs of one handler's block; `pathParameters` are the route's own, no query fields. */
export function rubyHandlerInputs(
  method: string,
  block: string,
  pathParameters: readonly string[],
  helpers: ReadonlySet<string>,
  /** A Rails action: `params` carries the body too, in the encoding its controller takes. */
  options: { rails?: "json" | "form" } = {},
): RouteInputs {
  const inputs = new RouteInputsBuilder();
  const write = !["GET", "HEAD", "DELETE", "OPTIONS"].includes(method.toUpperCase());
  if (options.rails) return railsInputs(inputs, block, write, pathParameters, options.rails);
  const helperCalls = [...helpers].map((name) => `(?<![\\w.])${escaped(name)}(?![\\w?!])`);
  const parsers = [DIRECT_PARSE, ...helperCalls];
  // `body = JSON.parse(request.body.read)`, `@data ||= json_body`: the names the parsed body goes by.
  const bound = [
    ...block.matchAll(new RegExp(`(@?\\w+)\\s*(?:\\|\\|)?=\\s*(?:${parsers.join("|")})`, "g")),
  ].map((match) => `(?<![\\w.@])${escaped(match[1] ?? "")}(?![\\w?!])`);
  const json = write && parsers.some((parser) => new RegExp(parser).test(block));
  for (const name of [...keysRead(block, String.raw`(?<![\w.@])params`), ...namesPicked(block)]) {
    if (pathParameters.includes(name) || name === "splat" || name === "captures") continue;
    if (write && !json) inputs.bodyField([name]);
    else inputs.parameter("query", name);
  }
  if (json) {
    for (const receiver of [...bound, ...parsers])
      for (const name of keysRead(block, receiver)) inputs.bodyField([name]);
    inputs.readsBody().encoding("json");
  } else if (write) inputs.encoding("form");
  for (const match of block.matchAll(/\b(?:request\.)?env\s*\[\s*['"]HTTP_([A-Z0-9_]+)['"]\s*\]/g))
    inputs.parameter("header", headerName(match[1] ?? ""));
  for (const name of keysRead(block, String.raw`\brequest\.cookies`)) inputs.parameter("cookie", name);
  return inputs.build();
}

/**
 * A Rails action's reads: `params[:q]` (the query of a read, the body of a write) and strong parameters,
 * `params.require(:article).permit(:title, tags: [])` or `params.expect(article: [:title])`, fields under
 * their wrapper (`article[title]` in a form, `{"article": {"title": …}}` in JSON).
 */
function railsInputs(
  inputs: RouteInputsBuilder,
  block: string,
  write: boolean,
  pathParameters: readonly string[],
  encoding: "json" | "form",
): RouteInputs {
  const wrapped = [
    ...block.matchAll(/\bparams\s*\.\s*(?:require|fetch)\s*\(\s*:(\w+)[^)]*\)\s*\.\s*permit\s*\(([^)]*)\)/g),
    ...block.matchAll(/\bparams\s*\.\s*expect\s*\(\s*(\w+):\s*\[([^\]]*)\]/g),
  ];
  const wrappers = new Set(wrapped.map((match) => match[1] ?? ""));
  for (const name of [...keysRead(block, String.raw`(?<![\w.@])params`), ...namesPicked(block)]) {
    if (pathParameters.includes(name) || wrappers.has(name) || /^(controller|action|format)$/.test(name))
      continue;
    if (write) inputs.bodyField([name]);
    else inputs.parameter("query", name);
  }
  if (!write) return inputs.build();
  for (const [, wrapper = "", list = ""] of wrapped)
    for (const match of list.matchAll(/:(\w+)|(\w+):/g)) {
      const field = match[1] ?? match[2];
      if (field) inputs.bodyField(encoding === "json" ? [wrapper, field] : [`${wrapper}[${field}]`]);
    }
  return inputs.encoding(encoding).build();
}

/**
 * Names taken from `params` as a list: `params.slice(:a, :b)`, `params.permit('a')`, or a list literal
 * (`allowed = %w[email name]`) on a line that picks from `params` (`params.select { |k, _| allowed.include?(k) }`).
 */
function namesPicked(block: string): string[] {
  const names: string[] = [];
  const items = (list: string) => [...list.matchAll(/:?['"]?(\w+)['"]?/g)].map((match) => match[1] ?? "");
  for (const match of block.matchAll(/\bparams\s*\.\s*(?:slice|permit|values_at)\s*\(([^)*]*)\)/g))
    names.push(...items(match[1] ?? ""));
  const lists = new Map<string, string[]>();
  for (const match of block.matchAll(/\b(\w+)\s*=\s*(?:%[wi][[(]([^\])]*)[\])]|\[([^\]]*)\])/g))
    lists.set(
      match[1] ?? "",
      match[2] !== undefined ? match[2].split(/\s+/).filter(Boolean) : items(match[3] ?? ""),
    );
  for (const line of block.split("\n")) {
    if (!/\bparams\s*\./.test(line)) continue;
    for (const [name, values] of lists) if (new RegExp(`\\b${name}\\b`).test(line)) names.push(...values);
  }
  return names.filter((name) => /^[A-Za-z_]\w*$/.test(name));
}

/** `X_API_KEY` (Rack's env key) as the header a client sends: `X-Api-Key`. */
function headerName(envName: string): string {
  return envName
    .toLowerCase()
    .split("_")
    .map((part) => (part ? part[0]!.toUpperCase() + part.slice(1) : part))
    .join("-");
}
