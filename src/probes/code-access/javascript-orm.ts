import ts from "typescript";
import { propertyName, unwrap } from "../routes/javascript-syntax.ts";
import type { Cardinality } from "./data-access-types.ts";
import { consumption } from "./javascript-sql.ts";

// Single-row lookups written with query builders and ORMs common in JS/TS: prisma `findUnique`/`findFirst`,
// sequelize/typeorm `findOne*`, knex `.where(…).first()`, drizzle `.from(t).where(eq(t.c, …))` taken as one.

const PRISMA_SINGLE = new Set(["findUnique", "findUniqueOrThrow", "findFirst", "findFirstOrThrow"]);
const FIND_ONE = new Set(["findOne", "findOneBy", "findOneOrFail", "findOneByOrFail", "findOneOrNull"]);
const OPTION_KEYS = new Set([
  "select",
  "relations",
  "order",
  "include",
  "attributes",
  "raw",
  "transaction",
  "lock",
  "cache",
  "withDeleted",
  "paranoid",
  "rejectOnEmpty",
  "orderBy",
  "take",
  "skip",
]);

export interface OrmLookup {
  model: string;
  columns: string[];
  cardinality: Cardinality;
  via: string;
}

function objectKeys(expression: ts.Expression | undefined): string[] | undefined {
  if (!expression) return undefined;
  const node = unwrap(expression);
  if (!ts.isObjectLiteralExpression(node)) return undefined;
  const keys: string[] = [];
  for (const property of node.properties) {
    if (ts.isShorthandPropertyAssignment(property)) keys.push(property.name.text);
    else if (ts.isPropertyAssignment(property)) {
      const name = propertyName(property.name);
      // Relation filters and operators (`{ some: … }`, `AND: […]`) are not one column's equality.
      const value = unwrap(property.initializer);
      if (name && !ts.isArrayLiteralExpression(value) && !/^(AND|OR|NOT)$/.test(name)) keys.push(name);
    }
  }
  return keys;
}

function whereColumns(argument: ts.Expression | undefined): string[] | undefined {
  if (!argument) return undefined;
  const node = unwrap(argument);
  if (!ts.isObjectLiteralExpression(node)) return undefined;
  const where = node.properties.find(
    (property) => ts.isPropertyAssignment(property) && propertyName(property.name) === "where",
  ) as ts.PropertyAssignment | undefined;
  if (where) return objectKeys(where.initializer);
  const keys = objectKeys(node) ?? [];
  return keys.filter((key) => !OPTION_KEYS.has(key));
}

/** `User`, `this.userRepository`, `getRepository(User)`, `prisma.user` → the model name as written. */
function modelOf(receiver: ts.Expression): string | undefined {
  const node = unwrap(receiver);
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isCallExpression(node)) {
    const first = node.arguments[0];
    if (first && ts.isIdentifier(unwrap(first))) return (unwrap(first) as ts.Identifier).text;
    if (first && ts.isStringLiteralLike(first)) return first.text;
  }
  return undefined;
}

interface ChainFacts {
  table?: string;
  model?: string;
  columns: string[];
  hasWhere: boolean;
}

/** Walks `a(…).b(…).c(…)` down to its root, collecting the table and the equality columns of `where`. */
function chainFacts(expression: ts.Expression): ChainFacts {
  const facts: ChainFacts = { columns: [], hasWhere: false };
  let node = unwrap(expression);
  for (let steps = 0; steps < 20; steps += 1) {
    if (!ts.isCallExpression(node)) break;
    const callee = unwrap(node.expression);
    const first = node.arguments[0] ? unwrap(node.arguments[0]) : undefined;
    if (ts.isIdentifier(callee)) {
      if (first && ts.isStringLiteralLike(first)) facts.table ??= first.text;
      break;
    }
    if (!ts.isPropertyAccessExpression(callee)) break;
    const name = callee.name.text;
    if ((name === "where" || name === "andWhere") && first) {
      facts.hasWhere = true;
      if (ts.isStringLiteralLike(first) && node.arguments.length >= 2) {
        const operator = node.arguments.length === 3 ? node.arguments[1] : undefined;
        if (!operator || (ts.isStringLiteralLike(operator) && operator.text === "=")) {
          facts.columns.push(first.text.split(".").pop()!);
        }
      } else if (ts.isObjectLiteralExpression(first)) {
        facts.columns.push(...(objectKeys(first) ?? []));
      } else {
        facts.columns.push(...equalityColumns(first));
      }
    } else if ((name === "from" || name === "table" || name === "into") && first) {
      if (ts.isStringLiteralLike(first)) facts.table ??= first.text;
      else if (ts.isIdentifier(first)) facts.model ??= first.text;
    }
    node = unwrap(callee.expression);
  }
  return facts;
}

/** `eq(users.email, x)`, `and(eq(…), eq(…))` → the compared properties. */
function equalityColumns(expression: ts.Expression): string[] {
  const node = unwrap(expression);
  if (!ts.isCallExpression(node)) return [];
  const callee = unwrap(node.expression);
  const name = ts.isIdentifier(callee)
    ? callee.text
    : ts.isPropertyAccessExpression(callee)
      ? callee.name.text
      : "";
  if (name === "and") return node.arguments.flatMap((argument) => equalityColumns(argument));
  if (name !== "eq") return [];
  const target = node.arguments[0] ? unwrap(node.arguments[0]) : undefined;
  return target && ts.isPropertyAccessExpression(target) ? [target.name.text] : [];
}

function isOneLiteral(expression: ts.Expression | undefined): boolean {
  return (
    expression !== undefined &&
    ts.isNumericLiteral(unwrap(expression)) &&
    unwrap(expression).getText() === "1"
  );
}

/** A single-row ORM or query-builder lookup at this call, when it is one. */
export function ormLookupOf(call: ts.CallExpression): OrmLookup | undefined {
  const callee = unwrap(call.expression);
  if (!ts.isPropertyAccessExpression(callee)) return undefined;
  const name = callee.name.text;
  if (PRISMA_SINGLE.has(name) || FIND_ONE.has(name)) {
    const model = modelOf(callee.expression);
    const columns = whereColumns(call.arguments[0]);
    if (!model || !columns || columns.length === 0) return undefined;
    return { model, columns, cardinality: "single", via: name };
  }
  const parentIsChain =
    call.parent && ts.isPropertyAccessExpression(call.parent) && call.parent.expression === call;
  if (name === "first" || (name === "get" && call.arguments.length === 0) || name === "limit") {
    if (name === "limit" && !isOneLiteral(call.arguments[0])) return undefined;
    const facts = chainFacts(callee.expression);
    const model = facts.table ?? facts.model;
    if (!model || !facts.hasWhere || facts.columns.length === 0) return undefined;
    return {
      model,
      columns: facts.columns,
      cardinality: "single",
      via: `.${name}(${name === "limit" ? "1" : ""})`,
    };
  }
  if (name === "where" && !parentIsChain) {
    // `const [row] = await db.select().from(t).where(eq(t.c, v))`: the chain ends at `where`.
    const facts = chainFacts(call);
    const model = facts.table ?? facts.model;
    const used = consumption(call);
    if (!model || facts.columns.length === 0 || used?.cardinality !== "single") return undefined;
    return { model, columns: facts.columns, cardinality: "single", via: used.via };
  }
  return undefined;
}

/** Table names the code declares for its models, and model properties mapped to column names. */
export function collectModelDeclarations(
  source: ts.SourceFile,
  tables: Record<string, string>,
  columns: Record<string, string>,
): void {
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const init = unwrap(node.initializer);
      if (ts.isCallExpression(init)) {
        const callee = unwrap(init.expression);
        const calleeName = ts.isIdentifier(callee)
          ? callee.text
          : ts.isPropertyAccessExpression(callee)
            ? callee.name.text
            : "";
        const first = init.arguments[0] ? unwrap(init.arguments[0]) : undefined;
        if (/Table$/.test(calleeName) && first && ts.isStringLiteralLike(first)) {
          tables[node.name.text] = first.text;
          const shape = init.arguments[1] ? unwrap(init.arguments[1]) : undefined;
          if (shape && ts.isObjectLiteralExpression(shape))
            collectColumnNames(node.name.text, shape, columns);
        } else if (calleeName === "define" && first && ts.isStringLiteralLike(first)) {
          tables[node.name.text] = tableNameOption(init.arguments[2]) ?? first.text;
        }
      }
    }
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression);
      if (
        ts.isPropertyAccessExpression(callee) &&
        callee.name.text === "init" &&
        ts.isIdentifier(callee.expression)
      ) {
        const table = tableNameOption(node.arguments[1]);
        if (table) tables[callee.expression.text] = table;
      }
    }
    if (ts.isClassDeclaration(node) && node.name) {
      for (const decorator of ts.getDecorators(node) ?? []) {
        const expression = decorator.expression;
        if (!ts.isCallExpression(expression) || !ts.isIdentifier(expression.expression)) continue;
        if (!/^(Entity|Table)$/.test(expression.expression.text)) continue;
        const first = expression.arguments[0] ? unwrap(expression.arguments[0]) : undefined;
        const table = first && ts.isStringLiteralLike(first) ? first.text : tableNameOption(first, "name");
        if (table) tables[node.name.text] = table;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

function tableNameOption(expression: ts.Expression | undefined, key = "tableName"): string | undefined {
  if (!expression) return undefined;
  const node = unwrap(expression);
  if (!ts.isObjectLiteralExpression(node)) return undefined;
  for (const property of node.properties) {
    if (!ts.isPropertyAssignment(property) || propertyName(property.name) !== key) continue;
    const value = unwrap(property.initializer);
    if (ts.isStringLiteralLike(value)) return value.text;
  }
  return undefined;
}

/** `{ email: text("email_address").notNull() }` → `users.email` is column `email_address`. */
function collectColumnNames(
  model: string,
  shape: ts.ObjectLiteralExpression,
  columns: Record<string, string>,
): void {
  for (const property of shape.properties) {
    if (!ts.isPropertyAssignment(property)) continue;
    const key = propertyName(property.name);
    let node: ts.Expression = unwrap(property.initializer);
    while (ts.isCallExpression(node) && ts.isPropertyAccessExpression(unwrap(node.expression))) {
      node = unwrap((unwrap(node.expression) as ts.PropertyAccessExpression).expression);
    }
    if (!key || !ts.isCallExpression(node)) continue;
    const first = node.arguments[0] ? unwrap(node.arguments[0]) : undefined;
    if (first && ts.isStringLiteralLike(first)) columns[`${model}.${key}`] = first.text;
  }
}
