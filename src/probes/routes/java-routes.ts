import type { Route } from "../../map/system-map.ts";
import { normalizePathTemplate } from "./path-template.ts";
import { type JsonSchema, objectSchema, RouteInputsBuilder } from "./route-inputs.ts";
import { C_SYNTAX, MaskedSource, skipSpace, textRoute, uniqueRoutes } from "./source-text.ts";
import { readSource } from "./source-tree.ts";

// Spring MVC / WebFlux annotated controllers in Java and Kotlin: a `@RestController` or `@Controller`
// class, its `@RequestMapping` prefix, and `@GetMapping`…`@RequestMapping(method = …)` on its methods.
// Parameters come from `@PathVariable`, `@RequestParam`, `@RequestHeader`, `@CookieValue`, and the body's
// fields from the `@RequestBody` type when the tree declares it (a record, a class's fields, a data class).

const JAVA_SYNTAX = { ...C_SYNTAX, tripleQuotes: true };

const METHOD_ANNOTATIONS: Record<string, string> = {
  GetMapping: "GET",
  PostMapping: "POST",
  PutMapping: "PUT",
  DeleteMapping: "DELETE",
  PatchMapping: "PATCH",
  RequestMapping: "ALL",
};

const MODIFIERS =
  /(?:public|private|protected|static|final|abstract|open|override|internal|data|suspend|synchronized|default|sealed|inline|operator)\b/y;
const ANNOTATION = /@([A-Za-z_][\w.]*)/y;
const DECLARATION = /(?:class|interface|object|enum|record|@interface)\s+([A-Za-z_]\w*)/y;

interface Annotation {
  name: string;
  /** The argument list's inside, as offsets; absent without parentheses. */
  args?: [number, number];
}

interface ClassDeclaration {
  name: string;
  annotations: Annotation[];
  bodyStart: number;
  bodyEnd: number;
}

interface Member {
  annotations: Annotation[];
  at: number;
  /** The parameter list's inside, as offsets, when the member is a method. */
  parameters?: [number, number];
}

interface ParsedFile {
  file: string;
  kotlin: boolean;
  masked: MaskedSource;
  classes: ClassDeclaration[];
  members: Member[];
}

export function scanJavaRoutes(root: string, files: readonly string[]): Route[] {
  const parsed: ParsedFile[] = [];
  for (const file of files) {
    const source = readSource(root, file);
    if (source === undefined || !/@(?:Rest)?Controller\b/.test(source)) {
      if (source !== undefined) parsed.push({ ...parseFile(file, source), members: [] });
      continue;
    }
    parsed.push(parseFile(file, source));
  }
  const constants = stringConstants(parsed);
  const types = bodyTypes(parsed);
  const routes: Route[] = [];
  for (const file of parsed) routes.push(...routesOf(file, constants, types));
  return uniqueRoutes(routes);
}

function parseFile(file: string, source: string): ParsedFile {
  const masked = new MaskedSource(source, JAVA_SYNTAX);
  const code = masked.code;
  const classes: ClassDeclaration[] = [];
  const members: Member[] = [];
  const finder = /@[A-Za-z_]/g;
  let cursor = 0;
  for (let match = finder.exec(code); match; match = finder.exec(code)) {
    if (match.index < cursor) continue;
    const run = annotationRun(masked, match.index);
    cursor = run.end;
    finder.lastIndex = run.end;
    DECLARATION.lastIndex = run.end;
    const declaration = DECLARATION.exec(code);
    if (declaration) {
      const body = classBody(masked, DECLARATION.lastIndex);
      if (body)
        classes.push({
          name: declaration[1] ?? "",
          annotations: run.annotations,
          bodyStart: body[0],
          bodyEnd: body[1],
        });
      continue;
    }
    const parameters = parameterList(masked, run.end);
    members.push({ annotations: run.annotations, at: match.index, ...(parameters ? { parameters } : {}) });
  }
  return { file, kotlin: file.endsWith(".kt"), masked, classes, members };
}

function annotationRun(masked: MaskedSource, start: number): { annotations: Annotation[]; end: number } {
  const code = masked.code;
  const annotations: Annotation[] = [];
  let position = start;
  for (;;) {
    position = skipSpace(code, position);
    ANNOTATION.lastIndex = position;
    const annotation = ANNOTATION.exec(code);
    if (annotation && !code.startsWith("@interface", position)) {
      const name = (annotation[1] ?? "").split(".").pop() ?? "";
      position = ANNOTATION.lastIndex;
      const open = skipSpace(code, position);
      if (code[open] === "(") {
        const close = masked.closing(open);
        if (close < 0) return { annotations, end: code.length };
        annotations.push({ name, args: [open + 1, close] });
        position = close + 1;
      } else annotations.push({ name });
      continue;
    }
    MODIFIERS.lastIndex = position;
    if (MODIFIERS.exec(code)) {
      position = MODIFIERS.lastIndex;
      continue;
    }
    return { annotations, end: position };
  }
}

/** The body of a class declared at `from` (after its name): skips a constructor's parentheses. */
function classBody(masked: MaskedSource, from: number): [number, number] | undefined {
  const code = masked.code;
  for (let index = from; index < code.length && index < from + 4000; index += 1) {
    const character = code[index];
    if (character === "(") {
      index = masked.closing(index);
      if (index < 0) return undefined;
    } else if (character === "{") {
      const end = masked.closing(index);
      return end < 0 ? undefined : [index, end];
    } else if (character === ";" || character === "=" || character === "@") return undefined;
  }
  return undefined;
}

/** A method's parameter list after its annotations: the first `(` before a body, `;` or `=`. */
function parameterList(masked: MaskedSource, from: number): [number, number] | undefined {
  const code = masked.code;
  for (let index = from; index < code.length && index < from + 600; index += 1) {
    const character = code[index];
    if (character === "(") {
      const close = masked.closing(index);
      return close < 0 ? undefined : [index + 1, close];
    }
    if (character === "{" || character === ";" || character === "=") return undefined;
  }
  return undefined;
}

function routesOf(
  file: ParsedFile,
  constants: ReadonlyMap<string, string>,
  types: ReadonlyMap<string, JsonSchema>,
): Route[] {
  const routes: Route[] = [];
  for (const member of file.members) {
    const mapping = member.annotations.find((annotation) => annotation.name in METHOD_ANNOTATIONS);
    if (!mapping) continue;
    const owner = innermostClass(file.classes, member.at);
    if (!owner || !isController(owner)) continue;
    const classMapping = owner.annotations.find((annotation) => annotation.name === "RequestMapping");
    const prefixes = classMapping ? mappingPaths(file.masked, classMapping, constants) : [""];
    const paths = mappingPaths(file.masked, mapping, constants);
    if (!prefixes || !paths) continue;
    const methods = mappingMethods(file.masked, mapping);
    const inputs = member.parameters ? methodInputs(file, member.parameters, types) : undefined;
    const line = file.masked.lineAt(member.at);
    for (const prefix of prefixes)
      for (const path of paths) {
        const template = normalizePathTemplate(joinSpring(prefix, path), "brace");
        for (const method of methods)
          routes.push(textRoute(method, template, file.file, line, "spring", inputs?.build()));
      }
  }
  return routes;
}

function isController(declaration: ClassDeclaration): boolean {
  const names = new Set(declaration.annotations.map((annotation) => annotation.name));
  return (names.has("RestController") || names.has("Controller")) && !names.has("FeignClient");
}

function innermostClass(classes: readonly ClassDeclaration[], at: number): ClassDeclaration | undefined {
  let found: ClassDeclaration | undefined;
  for (const declaration of classes) {
    if (declaration.bodyStart < at && at < declaration.bodyEnd)
      if (!found || declaration.bodyStart > found.bodyStart) found = declaration;
  }
  return found;
}

function joinSpring(prefix: string, path: string): string {
  const left = prefix.replace(/\/+$/, "");
  if (path === "") return left === "" ? "/" : left;
  return `${left}/${path.replace(/^\/+/, "")}`;
}

/** An annotation's named arguments (`value = …`) and its positional first argument under `value`. */
function annotationArguments(masked: MaskedSource, annotation: Annotation): Map<string, [number, number]> {
  const named = new Map<string, [number, number]>();
  if (!annotation.args) return named;
  for (const [start, end] of masked.split(annotation.args[0], annotation.args[1])) {
    const piece = masked.code.slice(start, end);
    const key = /^\s*([A-Za-z_]\w*)\s*=(?!=)/.exec(piece);
    if (key) named.set(key[1] ?? "", [start + key[0].length, end]);
    else if (!named.has("value")) named.set("value", [start, end]);
  }
  return named;
}

/** The paths a mapping names (`""` when it names none); undefined when one is a constant not found. */
function mappingPaths(
  masked: MaskedSource,
  annotation: Annotation,
  constants: ReadonlyMap<string, string>,
): string[] | undefined {
  const named = annotationArguments(masked, annotation);
  const range = named.get("value") ?? named.get("path");
  if (!range) return [""];
  let [start, end] = range;
  const inner = masked.code.slice(start, end).trim();
  if (/^(?:\{|\[|arrayOf\s*\()/.test(inner)) {
    const open = masked.code.indexOf(inner[0] === "a" ? "(" : (inner[0] as string), start);
    start = open + 1;
    end = masked.closing(open);
  }
  const paths: string[] = [];
  for (const [pieceStart, pieceEnd] of masked.split(start, end)) {
    const value = constantExpression(masked, pieceStart, pieceEnd, constants);
    if (value === undefined) return undefined;
    paths.push(value);
  }
  return paths.length > 0 ? paths : [""];
}

/** `"a" + Paths.BASE + "/b"`: literals and string constants joined, or undefined. */
function constantExpression(
  masked: MaskedSource,
  start: number,
  end: number,
  constants: ReadonlyMap<string, string>,
): string | undefined {
  let value = "";
  let offset = start;
  for (const part of masked.code.slice(start, end).split("+")) {
    const partStart = offset;
    offset += part.length + 1;
    const trimmed = part.trim();
    if (trimmed.startsWith('"')) {
      const literal = masked.stringAt(partStart);
      if (!literal) return undefined;
      value += literal.value;
      continue;
    }
    const constant = constants.get(trimmed.split(".").pop() ?? "");
    if (constant === undefined) return undefined;
    value += constant;
  }
  return value;
}

function mappingMethods(masked: MaskedSource, annotation: Annotation): string[] {
  const fixed = METHOD_ANNOTATIONS[annotation.name];
  if (fixed !== "ALL") return [fixed as string];
  const range = annotationArguments(masked, annotation).get("method");
  if (!range) return ["ALL"];
  const methods = masked.code
    .slice(range[0], range[1])
    .match(/\b(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\b/g);
  return methods ? [...new Set(methods)] : ["ALL"];
}

const INPUT_ANNOTATIONS = new Set([
  "PathVariable",
  "RequestParam",
  "RequestHeader",
  "CookieValue",
  "RequestBody",
  "RequestPart",
]);

function methodInputs(
  file: ParsedFile,
  [start, end]: [number, number],
  types: ReadonlyMap<string, JsonSchema>,
): RouteInputsBuilder {
  const builder = new RouteInputsBuilder();
  const masked = file.masked;
  for (const [pieceStart, pieceEnd] of masked.split(start, end)) {
    const run = annotationRun(masked, pieceStart);
    const annotation = run.annotations.find((candidate) => INPUT_ANNOTATIONS.has(candidate.name));
    if (!annotation) continue;
    const declaration = masked.code.slice(run.end, pieceEnd).trim();
    const { name: declared, type } = file.kotlin ? kotlinParameter(declaration) : javaParameter(declaration);
    const named = annotationArguments(masked, annotation);
    const nameRange = named.get("name") ?? named.get("value");
    const name = (nameRange ? masked.stringsIn(nameRange[0], nameRange[1])[0] : undefined) ?? declared;
    const optional =
      /\bfalse\b/.test(sliceOf(masked, named.get("required"))) ||
      named.has("defaultValue") ||
      /^Optional\b|\?$/.test(type);
    const schema = typeSchema(type);
    if (annotation.name === "RequestParam" && name && !/^(?:Map|MultiValueMap)\b/.test(type))
      builder.parameter("query", name, schema, !optional);
    else if (annotation.name === "RequestHeader" && name)
      builder.parameter("header", name, schema, !optional);
    else if (annotation.name === "CookieValue" && name) builder.parameter("cookie", name, schema, !optional);
    else if (annotation.name === "RequestBody") {
      builder.encoding("json").readsBody();
      const body = types.get(type.replace(/[?<].*$/, ""));
      if (body) builder.bodySchema(body);
    } else if (annotation.name === "RequestPart" && name) {
      builder
        .encoding("multipart")
        .bodyField([name], /MultipartFile|FilePart/.test(type) ? fileSchema() : schema);
    }
  }
  return builder;
}

function sliceOf(masked: MaskedSource, range: [number, number] | undefined): string {
  return range ? masked.code.slice(range[0], range[1]) : "";
}

function javaParameter(declaration: string): { name: string; type: string } {
  const match = /^(?:final\s+)?(.+?)\s+([A-Za-z_]\w*)$/s.exec(declaration);
  return { name: match?.[2] ?? "", type: (match?.[1] ?? "").trim() };
}

function kotlinParameter(declaration: string): { name: string; type: string } {
  const match = /^(?:va[lr]\s+)?([A-Za-z_]\w*)\s*:\s*([^=]+)/s.exec(declaration);
  return { name: match?.[1] ?? "", type: (match?.[2] ?? "").trim() };
}

function typeSchema(type: string): JsonSchema {
  const bare = type.replace(/^Optional<(.+)>$/, "$1").replace(/\?$/, "");
  if (/^(?:int|Integer|Int|long|Long|short|Short|BigInteger)$/.test(bare)) return { type: "integer" };
  if (/^(?:double|Double|float|Float|BigDecimal)$/.test(bare)) return { type: "number" };
  if (/^(?:boolean|Boolean)$/.test(bare)) return { type: "boolean" };
  if (/^(?:List|Set|Collection)<|\[\]$|^Array</.test(bare))
    return { type: "array", items: typeSchema(/<(.+)>|^(.+)\[\]$/.exec(bare)?.slice(1).find(Boolean) ?? "") };
  if (/^(?:UUID)$/.test(bare)) return { type: "string", format: "uuid" };
  return { type: "string" };
}

function fileSchema(): JsonSchema {
  return { type: "string", format: "binary" };
}

/** `static final String NAME = "…"` and Kotlin `const val NAME = "…"` across the tree, by simple name. */
function stringConstants(files: readonly ParsedFile[]): Map<string, string> {
  const constants = new Map<string, string>();
  const declaration =
    /\b(?:static\s+final\s+String|final\s+static\s+String|const\s+val)\s+([A-Za-z_]\w*)\s*(?::\s*String\s*)?=\s*"/g;
  for (const file of files) {
    for (const match of file.masked.code.matchAll(declaration)) {
      const literal = file.masked.stringAt(match.index + match[0].length - 1);
      const end = literal ? skipSpace(file.masked.code, literal.end) : -1;
      if (literal && file.masked.code[end] !== "+") constants.set(match[1] ?? "", literal.value);
    }
  }
  return constants;
}

/** Body schemas of records, data classes and plain classes' fields, by simple name. */
function bodyTypes(files: readonly ParsedFile[]): Map<string, JsonSchema> {
  const types = new Map<string, JsonSchema>();
  for (const file of files) {
    const code = file.masked.code;
    for (const match of code.matchAll(/\b(record|class)\s+([A-Z]\w*)\s*(?:<[^>]*>)?\s*\(/g)) {
      const open = match.index + match[0].length - 1;
      const close = file.masked.closing(open);
      if (close < 0) continue;
      const properties: Record<string, JsonSchema> = {};
      for (const [start, end] of file.masked.split(open + 1, close)) {
        const text = code
          .slice(start, end)
          .replace(/@[\w.]+(\([^)]*\))?/g, "")
          .trim();
        const parameter = file.kotlin ? kotlinParameter(text) : javaParameter(text);
        if (parameter.name) properties[parameter.name] = typeSchema(parameter.type);
      }
      if (Object.keys(properties).length > 0) types.set(match[2] ?? "", objectSchema(properties));
    }
    for (const declaration of file.classes) {
      if (types.has(declaration.name)) continue;
      const body = code.slice(declaration.bodyStart + 1, declaration.bodyEnd);
      const properties: Record<string, JsonSchema> = {};
      const field =
        /^\s*(?:@[\w.]+(?:\([^)]*\))?\s*)*(?:private|protected|public)\s+(?!static)([\w<>, ?[\]]+?)\s+([a-z]\w*)\s*;/gm;
      for (const match of body.matchAll(field))
        properties[match[2] ?? ""] = typeSchema((match[1] ?? "").trim());
      if (Object.keys(properties).length > 0) types.set(declaration.name, objectSchema(properties));
    }
  }
  return types;
}
