import type { Route } from "../../map/system-map.ts";
import { joinPaths, normalizePathTemplate } from "./path-template.ts";
import { RouteInputsBuilder } from "./route-inputs.ts";
import { C_SYNTAX, MaskedSource, textRoute, uniqueRoutes } from "./source-text.ts";
import { readSource } from "./source-tree.ts";

// ASP.NET Core routes in C#: attribute-routed controllers (`[Route("api/[controller]")]` on the class,
// `[HttpGet("{id}")]` or `[Route]` + `[HttpPost]` on actions; `[FromQuery]`/`[FromHeader]` parameters) and
// minimal APIs (`app.MapGet("/x", …)`, `var g = app.MapGroup("/api"); g.MapPost(…)`).

const HTTP_ATTRIBUTE = /^Http(Get|Post|Put|Delete|Patch|Head|Options)(?:Attribute)?$/;
const MAP_CALL = /\b([A-Za-z_]\w*)\s*\.\s*Map(Get|Post|Put|Delete|Patch|Methods)\s*\(/g;
const GROUP = /\b([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\s*\.\s*MapGroup\s*\(/g;

interface Attribute {
  name: string;
  template?: string;
}

export function scanDotnetRoutes(root: string, files: readonly string[]): Route[] {
  const routes: Route[] = [];
  for (const file of files) {
    // Test projects (`Shop.Tests/`) are not the application.
    if (/(?:^|\/)[^/]*\.(?:Tests?|UnitTests|IntegrationTests)\//.test(file)) continue;
    const source = readSource(root, file);
    if (
      source === undefined ||
      !/\[(?:Http|Route)|\.Map(?:Get|Post|Put|Delete|Patch|Methods|Group)\s*\(/.test(source)
    )
      continue;
    const masked = new MaskedSource(source, C_SYNTAX);
    routes.push(...controllerRoutes(file, masked), ...minimalRoutes(file, masked));
  }
  return uniqueRoutes(routes);
}

function controllerRoutes(file: string, masked: MaskedSource): Route[] {
  const code = masked.code;
  const routes: Route[] = [];
  for (const declaration of code.matchAll(/\bclass\s+([A-Za-z_]\w*)[^{;]*\{/g)) {
    const header = code.slice(declaration.index, declaration.index + declaration[0].length);
    const classAttributes = attributesBefore(masked, declaration.index);
    const isController =
      classAttributes.some((attribute) => /^(?:ApiController|Controller)$/.test(attribute.name)) ||
      /:\s*(?:[\w.]+\.)?(?:Controller|ControllerBase)\b/.test(header);
    if (!isController) continue;
    const controller = (declaration[1] ?? "").replace(/Controller$/, "");
    const prefixes = classAttributes
      .filter((attribute) => attribute.name === "Route")
      .map((a) => a.template ?? "");
    const open = declaration.index + declaration[0].length - 1;
    const close = masked.closing(open);
    if (close < 0) continue;
    const body = code.slice(open + 1, close);
    for (const method of body.matchAll(
      /(?:\]\s*)((?:public|internal)\s+[^;{}()=]*?\b([A-Za-z_]\w*)\s*\()/g,
    )) {
      const at = open + 1 + method.index + method[0].length - (method[1]?.length ?? 0);
      const attributes = attributesBefore(masked, at);
      const verbs = attributes.filter((attribute) => HTTP_ATTRIBUTE.test(attribute.name));
      if (verbs.length === 0) continue;
      const action = method[2] ?? "";
      const methodRoutes = attributes.filter((attribute) => attribute.name === "Route");
      const templates = [
        ...verbs.filter((verb) => verb.template !== undefined).map((verb) => verb.template as string),
        ...methodRoutes.map((route) => route.template ?? ""),
      ];
      const parameterOpen = open + 1 + method.index + method[0].length - 1;
      const parameterClose = masked.closing(parameterOpen);
      const inputs = parameterClose > 0 ? actionInputs(masked, parameterOpen + 1, parameterClose) : undefined;
      const line = masked.lineAt(at);
      for (const prefix of prefixes.length > 0 ? prefixes : [""])
        for (const template of templates.length > 0 ? templates : [""]) {
          const joined = /^~?\//.test(template) ? template.replace(/^~/, "") : joinPaths(prefix, template);
          const path = dotnetTemplate(
            joined.replace(/\[controller\]/gi, controller).replace(/\[action\]/gi, action),
          );
          for (const verb of verbs) {
            const name = HTTP_ATTRIBUTE.exec(verb.name)?.[1]?.toUpperCase() ?? "ALL";
            routes.push(textRoute(name, path, file, line, "aspnet", inputs?.build()));
          }
        }
    }
  }
  return routes;
}

/** The `[A, B("x")]` attributes directly before `at`, nearest last. */
function attributesBefore(masked: MaskedSource, at: number): Attribute[] {
  const code = masked.code;
  let end = at;
  // Skip modifiers and the return type back to the attribute run: the run ends at the last `]` before `at`
  // with only words, generics and whitespace between.
  const between = /[\w\s<>,.?[\]]*$/.exec(code.slice(Math.max(0, at - 300), at))?.[0] ?? "";
  const lastBracket = between.lastIndexOf("]");
  if (lastBracket < 0) return [];
  end = at - between.length + lastBracket + 1;
  const attributes: Attribute[] = [];
  let cursor = end;
  for (;;) {
    const close = cursor - 1;
    if (code[close] !== "]") break;
    let depth = 0;
    let open = close;
    for (; open >= 0; open -= 1) {
      if (code[open] === "]") depth += 1;
      else if (code[open] === "[") {
        depth -= 1;
        if (depth === 0) break;
      }
    }
    if (open < 0) break;
    for (const [start, stop] of masked.split(open + 1, close)) {
      const name = /^\s*([A-Za-z_][\w.]*)/.exec(code.slice(start, stop))?.[1]?.split(".").pop() ?? "";
      const paren = code.indexOf("(", start);
      const template = paren >= 0 && paren < stop ? masked.stringAt(paren + 1)?.value : undefined;
      attributes.unshift({ name, ...(template !== undefined ? { template } : {}) });
    }
    cursor = open;
    while (cursor > 0 && /\s/.test(code[cursor - 1] ?? "")) cursor -= 1;
  }
  return attributes;
}

function actionInputs(masked: MaskedSource, start: number, end: number): RouteInputsBuilder {
  const builder = new RouteInputsBuilder();
  for (const [pieceStart, pieceEnd] of masked.split(start, end)) {
    const piece = masked.code.slice(pieceStart, pieceEnd);
    const from = /\[\s*From(Query|Header|Body|Form)\b(?:\s*\(([^)]*)\))?\s*\]/.exec(piece);
    const declared = /([\w.<>?[\]]+)\s+([A-Za-z_]\w*)\s*(=.*)?$/s.exec(
      piece.replace(/\[[^\]]*\]/g, "").trim(),
    );
    if (!declared) continue;
    const type = declared[1] ?? "";
    const optional = declared[3] !== undefined || type.endsWith("?");
    const named = from
      ? masked.stringsIn(pieceStart + from.index, pieceStart + from.index + from[0].length)[0]
      : undefined;
    const name = named ?? declared[2] ?? "";
    const schema = /^(?:int|long|short)\??$/.test(type)
      ? { type: "integer" }
      : /^bool\??$/.test(type)
        ? { type: "boolean" }
        : { type: "string" };
    if (from?.[1] === "Query") builder.parameter("query", name, schema, !optional);
    else if (from?.[1] === "Header") builder.parameter("header", name, schema, !optional);
    else if (from?.[1] === "Body") builder.encoding("json").readsBody();
    else if (from?.[1] === "Form") builder.encoding("form").bodyField([name], schema);
  }
  return builder;
}

function minimalRoutes(file: string, masked: MaskedSource): Route[] {
  const code = masked.code;
  const groups = new Map<string, string>();
  const routes: Route[] = [];
  const events = [
    ...[...code.matchAll(GROUP)].map((match) => ({ kind: "group" as const, match })),
    ...[...code.matchAll(MAP_CALL)].map((match) => ({ kind: "map" as const, match })),
  ].sort((left, right) => left.match.index - right.match.index);
  for (const { kind, match } of events) {
    const literal = masked.stringAt(match.index + match[0].length);
    if (!literal) continue;
    if (kind === "group") {
      groups.set(match[1] ?? "", joinPaths(groups.get(match[2] ?? "") ?? "", literal.value));
      continue;
    }
    const path = dotnetTemplate(joinPaths(groups.get(match[1] ?? "") ?? "", literal.value));
    const open = match.index + match[0].length - 1;
    const methods =
      match[2] === "Methods"
        ? masked.stringsIn(literal.end, masked.closing(open)).filter((value) => /^[A-Z]+$/.test(value))
        : [(match[2] ?? "").toUpperCase()];
    for (const method of methods)
      routes.push(textRoute(method, path, file, masked.lineAt(match.index), "aspnet"));
  }
  return routes;
}

function dotnetTemplate(path: string): string {
  return normalizePathTemplate(
    path.replace(
      /\{\*{0,2}([A-Za-z_]\w*)([^}]*)\}/g,
      (_, name: string, rest: string) => `{${name}${rest.replace(/\?$/, "").replace(/=.*$/, "")}}`,
    ),
    "brace",
  );
}
