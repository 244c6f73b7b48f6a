import path from "node:path";
import ts from "typescript";
import { lineOf, unwrap } from "../routes/javascript-syntax.ts";
import type { DataAccess, LiteralComparison } from "./data-access-types.ts";
import { collectModelDeclarations, ormLookupOf } from "./javascript-orm.ts";
import { collectSqlConstants, consumption, type SqlCall, scopeOf, sqlCallOf } from "./javascript-sql.ts";

// One JS/TS file → its data accesses (SQL strings and ORM lookups), the fixed strings it compares
// properties with, and the models it declares. Parsing only: nothing is executed or type-checked.

export interface JavaScriptFileAccess {
  accesses: DataAccess[];
  comparisons: LiteralComparison[];
  modelTables: Record<string, string>;
  modelColumns: Record<string, string>;
  enablesForeignKeys: boolean;
}

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

function scriptKind(file: string): ts.ScriptKind {
  const extension = path.extname(file);
  if (extension === ".tsx") return ts.ScriptKind.TSX;
  if (extension === ".jsx") return ts.ScriptKind.JSX;
  if (extension === ".ts" || extension === ".mts" || extension === ".cts") return ts.ScriptKind.TS;
  return ts.ScriptKind.JS;
}

/** The property a node reads: `x.status`, `x["status"]`, `x?.status`. */
function propertyRead(expression: ts.Expression): string | undefined {
  const node = unwrap(expression);
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) {
    return node.argumentExpression.text;
  }
  return undefined;
}

function stringLiteral(expression: ts.Expression): string | undefined {
  const node = unwrap(expression);
  return ts.isStringLiteralLike(node) ? node.text : undefined;
}

export function scanJavaScriptFile(file: string, text: string): JavaScriptFileAccess {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const sqlConstants = collectSqlConstants(source);
  const result: JavaScriptFileAccess = {
    accesses: [],
    comparisons: [],
    modelTables: {},
    modelColumns: {},
    enablesForeignKeys: /foreign_keys\s*=\s*(on|1|true)\b/i.test(text),
  };
  collectModelDeclarations(source, result.modelTables, result.modelColumns);
  const pending = new Map<string, DataAccess[]>();
  const seenNodes = new Set<ts.Node>();

  const addSql = (call: SqlCall): void => {
    if (seenNodes.has(call.node)) return;
    seenNodes.add(call.node);
    const access: DataAccess = {
      file,
      line: lineOf(source, call.node),
      language: "javascript",
      scope: scopeOf(source, call.node),
      kind: "sql",
      sql: call.sql,
      cardinality: call.cardinality,
      via: call.via,
    };
    result.accesses.push(access);
    if (call.statementVariable) {
      const list = pending.get(call.statementVariable) ?? [];
      list.push(access);
      pending.set(call.statementVariable, list);
    }
  };

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) || ts.isTaggedTemplateExpression(node)) {
      const sqlCall = sqlCallOf(node, sqlConstants);
      if (sqlCall) addSql(sqlCall);
    }
    if (ts.isCallExpression(node)) {
      const lookup = ormLookupOf(node);
      if (lookup) {
        result.accesses.push({
          file,
          line: lineOf(source, node),
          language: "javascript",
          scope: scopeOf(source, node),
          kind: "orm",
          cardinality: lookup.cardinality,
          via: lookup.via,
          model: lookup.model,
          columns: lookup.columns,
        });
      }
      collectIncludes(node, source, file, result.comparisons);
    }
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      const property = propertyRead(node.left) ?? propertyRead(node.right);
      const value = stringLiteral(node.right) ?? stringLiteral(node.left);
      if (property && value !== undefined) {
        result.comparisons.push({ file, line: lineOf(source, node), property, values: [value] });
      }
    }
    if (ts.isSwitchStatement(node)) {
      const property = propertyRead(node.expression);
      const values = node.caseBlock.clauses.flatMap((clause) =>
        ts.isCaseClause(clause) ? [stringLiteral(clause.expression)].filter((v) => v !== undefined) : [],
      ) as string[];
      if (property && values.length > 0) {
        result.comparisons.push({ file, line: lineOf(source, node), property, values });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (pending.size > 0) resolveStatementVariables(source, pending);
  return result;
}

/** `["a", "b"].includes(x.status)`. */
function collectIncludes(
  call: ts.CallExpression,
  source: ts.SourceFile,
  file: string,
  comparisons: LiteralComparison[],
): void {
  const callee = unwrap(call.expression);
  if (!ts.isPropertyAccessExpression(callee) || callee.name.text !== "includes") return;
  const list = unwrap(callee.expression);
  const argument = call.arguments[0];
  if (!ts.isArrayLiteralExpression(list) || !argument) return;
  const property = propertyRead(argument);
  const values = list.elements.map((element) => stringLiteral(element));
  if (property && values.length > 0 && values.every((value) => value !== undefined)) {
    comparisons.push({ file, line: lineOf(source, call), property, values: values as string[] });
  }
}

/** `stmt.get(x)` decides how a statement prepared into `stmt` is consumed. */
function resolveStatementVariables(source: ts.SourceFile, pending: Map<string, DataAccess[]>): void {
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node)) {
      const receiver = unwrap(node.expression);
      const name = ts.isIdentifier(receiver)
        ? receiver.text
        : ts.isPropertyAccessExpression(receiver)
          ? receiver.name.text
          : undefined;
      const accesses = name ? pending.get(name) : undefined;
      if (accesses) {
        const used = consumption(receiver);
        if (used) {
          for (const access of accesses) {
            // The strongest use wins: one `.get()` anywhere means the code takes a single row.
            if (access.cardinality === "unknown" || used.cardinality === "single") {
              access.cardinality = used.cardinality;
              access.via = used.via;
            }
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
