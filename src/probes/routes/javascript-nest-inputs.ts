import ts from "typescript";
import type { JavaScriptFileModel } from "./javascript-file-model.ts";
import { type ReadSink, RequestReader } from "./javascript-request-reads.ts";
import {
  literalValue,
  numberValue,
  propertyName,
  regexSource,
  staticString,
  unwrap,
} from "./javascript-syntax.ts";
import { guessedSchema, type JsonSchema, objectSchema } from "./route-inputs.ts";

// What a decorated controller method (NestJS and look-alikes) accepts: `@Query("page", ParseIntPipe)`,
// `@Body() dto: CreateUserDto`, `@Headers("x-api-key")`, `@Req() req` read like any handler; and DTO
// classes read as JSON Schema from their property types and class-validator decorators.

const PIPES: Record<string, JsonSchema> = {
  ParseIntPipe: { type: "integer" },
  ParseFloatPipe: { type: "number" },
  ParseBoolPipe: { type: "boolean" },
  ParseUUIDPipe: { type: "string", format: "uuid" },
  ParseArrayPipe: { type: "array" },
};

const MAX_DTO_DEPTH = 4;

export function nestMethodInputs(
  model: JavaScriptFileModel,
  method: ts.MethodDeclaration,
  sink: ReadSink,
): void {
  const { builder } = sink;
  method.parameters.forEach((parameter, index) => {
    for (const decorator of ts.getDecorators(parameter) ?? []) {
      const call = unwrap(decorator.expression);
      if (!ts.isCallExpression(call) || !ts.isIdentifier(call.expression)) continue;
      const kind = call.expression.text;
      const name = staticString(call.arguments[0], model.bindings.constants);
      const pipe = call.arguments
        .slice(name === undefined ? 0 : 1)
        .map(pipeSchema)
        .find((schema) => schema !== undefined);
      const optional = parameter.questionToken !== undefined || parameter.initializer !== undefined;
      const typed = pipe ?? typeSchema(model, parameter.type, 0);
      if (kind === "Req" || kind === "Request") {
        new RequestReader(model, sink).readHandler(method, index);
      } else if (kind === "Query" || kind === "Headers" || kind === "Cookies") {
        const location = kind === "Query" ? "query" : kind === "Headers" ? "header" : "cookie";
        if (name !== undefined)
          builder.parameter(location, name, typed ?? guessedSchema(), pipe !== undefined && !optional);
        else if (typed?.properties) builder.parametersFrom(location, typed);
        else deferClass(model, parameter.type, location, sink);
      } else if (kind === "Body") {
        builder.encoding("json");
        if (name !== undefined) builder.bodyField([name], typed, pipe !== undefined && !optional);
        else if (typed?.properties) builder.bodySchema(typed);
        else if (!deferClass(model, parameter.type, "body", sink)) builder.readsBody();
      } else if (kind === "UploadedFile" || kind === "UploadedFiles") {
        builder.encoding("multipart").readsBody();
        for (const field of interceptedFields(method, model))
          builder.bodyField([field], guessedSchema({ type: "string", format: "binary" }));
      }
    }
  });
}

/** `@UseInterceptors(FileInterceptor("avatar"))`: the multipart field a method takes its file from. */
function interceptedFields(method: ts.MethodDeclaration, model: JavaScriptFileModel): string[] {
  const fields: string[] = [];
  for (const decorator of ts.getDecorators(method) ?? []) {
    const call = unwrap(decorator.expression);
    if (!ts.isCallExpression(call)) continue;
    for (const argument of call.arguments) {
      const inner = unwrap(argument);
      if (
        ts.isCallExpression(inner) &&
        /FileInterceptor|FilesInterceptor/.test(inner.expression.getText(model.source))
      ) {
        const name = staticString(inner.arguments[0], model.bindings.constants);
        if (name) fields.push(name);
      }
    }
  }
  return fields;
}

function pipeSchema(argument: ts.Expression): JsonSchema | undefined {
  const value = unwrap(argument);
  const name = ts.isNewExpression(value) ? value.expression.getText() : value.getText();
  const schema = PIPES[name];
  return schema ? { ...schema } : undefined;
}

/** A class named by a parameter's type but declared in another file: looked up later. */
function deferClass(
  model: JavaScriptFileModel,
  type: ts.TypeNode | undefined,
  location: "body" | "query" | "header" | "cookie",
  sink: ReadSink,
): boolean {
  if (!type || !ts.isTypeReferenceNode(type) || !ts.isIdentifier(type.typeName)) return false;
  const imported = model.bindings.imports.get(type.typeName.text);
  if (!imported) return false;
  sink.deferred.push({ kind: "schema", file: model.file, reference: imported, location });
  return true;
}

/** A DTO class as an object schema: typed properties, class-validator decorators, mapped-type parents. */
export function dtoSchema(model: JavaScriptFileModel, klass: ts.ClassLikeDeclaration, depth = 0): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const inherited = parentSchema(model, klass, depth);
  if (inherited) {
    Object.assign(properties, inherited.properties ?? {});
    required.push(...((inherited.required as string[] | undefined) ?? []));
  }
  for (const member of klass.members) {
    if (!ts.isPropertyDeclaration(member) || !member.name) continue;
    if (member.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword)) continue;
    const name = propertyName(member.name);
    if (name === undefined) continue;
    const decorated = decoratedSchema(model, member, typeSchema(model, member.type, depth) ?? {}, depth);
    properties[name] = decorated.schema;
    const optional =
      member.questionToken !== undefined || member.initializer !== undefined || decorated.optional;
    if (!optional && !required.includes(name)) required.push(name);
    if (optional && required.includes(name)) required.splice(required.indexOf(name), 1);
  }
  return objectSchema(properties, required);
}

/** `extends Base`, `extends PartialType(Base)`, `PickType(Base, ["a"])`, `OmitType(Base, ["b"])`. */
function parentSchema(
  model: JavaScriptFileModel,
  klass: ts.ClassLikeDeclaration,
  depth: number,
): JsonSchema | undefined {
  const clause = klass.heritageClauses?.find((heritage) => heritage.token === ts.SyntaxKind.ExtendsKeyword);
  const parent = clause?.types[0]?.expression;
  if (!parent || depth >= MAX_DTO_DEPTH) return undefined;
  const value = unwrap(parent);
  if (ts.isIdentifier(value)) {
    const base = model.classes.get(value.text);
    return base ? dtoSchema(model, base, depth + 1) : undefined;
  }
  if (!ts.isCallExpression(value) || !ts.isIdentifier(value.expression)) return undefined;
  const helper = value.expression.text;
  const baseName = value.arguments[0] && unwrap(value.arguments[0]);
  const base = baseName && ts.isIdentifier(baseName) ? model.classes.get(baseName.text) : undefined;
  if (!base) return undefined;
  const schema = dtoSchema(model, base, depth + 1);
  const names = (
    value.arguments[1] && ts.isArrayLiteralExpression(unwrap(value.arguments[1]))
      ? (unwrap(value.arguments[1]) as ts.ArrayLiteralExpression).elements
      : []
  )
    .map((element) => staticString(element, model.bindings.constants))
    .filter((entry) => entry !== undefined);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const keep = (name: string): boolean =>
    helper === "PickType" ? names.includes(name) : helper === "OmitType" ? !names.includes(name) : true;
  const kept = Object.fromEntries(Object.entries(properties).filter(([name]) => keep(name)));
  const required =
    helper === "PartialType" ? [] : ((schema.required as string[] | undefined) ?? []).filter(keep);
  return objectSchema(kept, required);
}

function decoratedSchema(
  model: JavaScriptFileModel,
  member: ts.PropertyDeclaration,
  base: JsonSchema,
  depth: number,
): { schema: JsonSchema; optional: boolean } {
  const schema: JsonSchema = { ...base };
  let optional = false;
  for (const decorator of ts.getDecorators(member) ?? []) {
    const call = unwrap(decorator.expression);
    if (!ts.isCallExpression(call) || !ts.isIdentifier(call.expression)) continue;
    const args = call.arguments;
    const first = numberValue(args[0]);
    switch (call.expression.text) {
      case "IsOptional":
      case "ApiPropertyOptional":
        optional = true;
        break;
      case "IsString":
        schema.type = "string";
        break;
      case "IsInt":
        schema.type = "integer";
        break;
      case "IsNumber":
      case "IsNumberString":
        schema.type = "number";
        break;
      case "IsBoolean":
        schema.type = "boolean";
        break;
      case "IsArray":
        schema.type = "array";
        break;
      case "IsEmail":
      case "IsUUID":
      case "IsUrl":
      case "IsDateString":
      case "IsISO8601":
        schema.type = "string";
        schema.format = {
          IsEmail: "email",
          IsUUID: "uuid",
          IsUrl: "uri",
          IsDateString: "date-time",
          IsISO8601: "date-time",
        }[call.expression.text];
        break;
      case "Min":
        if (first !== undefined) schema.minimum = first;
        break;
      case "Max":
        if (first !== undefined) schema.maximum = first;
        break;
      case "IsPositive":
        schema.exclusiveMinimum = 0;
        break;
      case "MinLength":
        if (first !== undefined) schema.minLength = first;
        break;
      case "MaxLength":
        if (first !== undefined) schema.maxLength = first;
        break;
      case "Length":
        if (first !== undefined) schema.minLength = first;
        if (numberValue(args[1]) !== undefined) schema.maxLength = numberValue(args[1]);
        break;
      case "Matches": {
        const pattern = regexSource(args[0], model.bindings.constants);
        if (pattern !== undefined) schema.pattern = pattern;
        break;
      }
      case "IsIn":
      case "IsEnum": {
        const values = enumValues(model, args[0]);
        if (values.length > 0) Object.assign(schema, enumSchema(values));
        break;
      }
      case "Type": {
        // `@Type(() => AddressDto)` with `@ValidateNested()`: the nested DTO's schema.
        const target = args[0] && unwrap(args[0]);
        const body =
          target && ts.isArrowFunction(target) && ts.isIdentifier(target.body) ? target.body.text : undefined;
        const nested = body ? model.classes.get(body) : undefined;
        if (nested && depth < MAX_DTO_DEPTH) {
          const nestedSchema = dtoSchema(model, nested, depth + 1);
          if (schema.type === "array") schema.items = nestedSchema;
          else Object.assign(schema, nestedSchema);
        }
        break;
      }
      case "ApiProperty": {
        const options = args[0] && unwrap(args[0]);
        if (options && ts.isObjectLiteralExpression(options)) {
          const flag = options.properties.find(
            (property) => property.name && propertyName(property.name) === "required",
          );
          if (flag && ts.isPropertyAssignment(flag) && flag.initializer.kind === ts.SyntaxKind.FalseKeyword)
            optional = true;
        }
        break;
      }
      default:
    }
  }
  return { schema, optional };
}

/** A TypeScript type as a schema: keywords, arrays, `Date`, local enums and DTO classes, literal unions. */
function typeSchema(
  model: JavaScriptFileModel,
  type: ts.TypeNode | undefined,
  depth: number,
): JsonSchema | undefined {
  if (!type) return undefined;
  switch (type.kind) {
    case ts.SyntaxKind.StringKeyword:
      return { type: "string" };
    case ts.SyntaxKind.NumberKeyword:
      return { type: "number" };
    case ts.SyntaxKind.BooleanKeyword:
      return { type: "boolean" };
    default:
  }
  if (ts.isArrayTypeNode(type)) {
    const items = typeSchema(model, type.elementType, depth);
    return items ? { type: "array", items } : { type: "array" };
  }
  if (ts.isUnionTypeNode(type)) {
    const members = type.types.filter(
      (member) =>
        member.kind !== ts.SyntaxKind.UndefinedKeyword &&
        member.kind !== ts.SyntaxKind.NullKeyword &&
        !(ts.isLiteralTypeNode(member) && member.literal.kind === ts.SyntaxKind.NullKeyword),
    );
    const literals = members.map((member) =>
      ts.isLiteralTypeNode(member)
        ? literalValue(member.literal as ts.Expression, model.bindings.constants)
        : undefined,
    );
    if (literals.length > 0 && literals.every((value) => value !== undefined)) return enumSchema(literals);
    return members.length === 1 ? typeSchema(model, members[0], depth) : undefined;
  }
  if (ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
    const name = type.typeName.text;
    if (name === "Date") return { type: "string", format: "date-time" };
    if (name === "Array" && type.typeArguments?.[0])
      return { type: "array", items: typeSchema(model, type.typeArguments[0], depth) ?? {} };
    const enumeration = enumValues(model, type.typeName);
    if (enumeration.length > 0) return enumSchema(enumeration);
    const klass = model.classes.get(name);
    if (klass && depth < MAX_DTO_DEPTH) return dtoSchema(model, klass, depth + 1);
  }
  return undefined;
}

function enumSchema(values: unknown[]): JsonSchema {
  if (values.every((value) => typeof value === "string")) return { type: "string", enum: values };
  if (values.every((value) => Number.isInteger(value))) return { type: "integer", enum: values };
  return { enum: values };
}

/** Values of a local `enum`, an object of constants, or an array literal. */
function enumValues(model: JavaScriptFileModel, expression: ts.Node | undefined): unknown[] {
  if (!expression) return [];
  const value = ts.isIdentifier(expression) ? expression : unwrap(expression as ts.Expression);
  if (ts.isArrayLiteralExpression(value))
    return value.elements
      .map((element) => literalValue(element, model.bindings.constants))
      .filter((entry) => entry !== undefined);
  if (!ts.isIdentifier(value)) return [];
  for (const statement of model.source.statements) {
    if (ts.isEnumDeclaration(statement) && statement.name.text === value.text) {
      return statement.members.map((entry, index) =>
        entry.initializer ? literalValue(entry.initializer, model.bindings.constants) : index,
      );
    }
  }
  const declared = model.declarations.get(value.text);
  const object = declared && unwrap(declared);
  if (object && ts.isObjectLiteralExpression(object)) {
    return object.properties
      .map((property) =>
        ts.isPropertyAssignment(property)
          ? literalValue(property.initializer, model.bindings.constants)
          : undefined,
      )
      .filter((entry) => entry !== undefined);
  }
  return [];
}
