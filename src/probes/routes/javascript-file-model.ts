import ts from "typescript";
import type { FileBindings } from "./javascript-bindings.ts";
import { isFunctionNode, propertyName, unwrap } from "./javascript-syntax.ts";
import type { ValidatorContext } from "./javascript-validators.ts";

// One parsed file, kept for the second half of the scan: handlers and schemas a route names (here or in
// another file) are looked up by name in it — a function, a method of a class or of an exported object,
// a module-level schema constant.

/** A name bound in another file of the tree: `import { x } from "./y"`, `require("./y").x`. */
export interface ImportReference {
  specifier: string;
  /** `default`, a named export, or `*` for a CommonJS module object. */
  exportName: string;
}

export interface JavaScriptFileModel {
  file: string;
  source: ts.SourceFile;
  bindings: FileBindings;
  /** Module-level `const NAME = expression` (schemas, arrays of middleware, `new Controller()`). */
  declarations: Map<string, ts.Expression>;
  classes: Map<string, ts.ClassLikeDeclaration>;
  validators: ValidatorContext;
}

export function buildFileModel(
  file: string,
  source: ts.SourceFile,
  bindings: FileBindings,
): JavaScriptFileModel {
  const declarations = new Map<string, ts.Expression>();
  const classes = new Map<string, ts.ClassLikeDeclaration>();
  const visitStatement = (statement: ts.Statement): void => {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.initializer) {
          const value = unwrap(declaration.initializer);
          if (ts.isClassExpression(value)) classes.set(declaration.name.text, value);
          declarations.set(declaration.name.text, declaration.initializer);
        }
      }
    } else if (ts.isClassDeclaration(statement) && statement.name) {
      classes.set(statement.name.text, statement);
    } else if (ts.isExportAssignment(statement)) {
      const value = unwrap(statement.expression);
      if (ts.isClassExpression(value)) classes.set("default", value);
      else if (!ts.isIdentifier(value)) declarations.set("default", statement.expression);
    } else if (ts.isExpressionStatement(statement)) {
      // `module.exports.schema = z.object(...)`, `exports.rules = [...]`.
      const expression = statement.expression;
      if (ts.isBinaryExpression(expression) && expression.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
        const target = expression.left.getText(source);
        const named = /^(?:module\.)?exports\.([A-Za-z_$][\w$]*)$/.exec(target);
        if (named?.[1] && !declarations.has(named[1])) declarations.set(named[1], expression.right);
        if (target === "module.exports" && !ts.isIdentifier(unwrap(expression.right)))
          declarations.set("default", expression.right);
      }
    }
  };
  for (const statement of source.statements) visitStatement(statement);
  return {
    file,
    source,
    bindings,
    declarations,
    classes,
    validators: { packages: bindings.packages, constants: bindings.constants, declarations },
  };
}

/** The local name an export of the file is known by. */
export function exportedLocal(model: JavaScriptFileModel, exportName: string): string {
  return model.bindings.exports.get(exportName) ?? exportName;
}

/**
 * The function an export (and optionally one of its members) denotes: an exported function, a method of an
 * exported class or of an exported instance (`module.exports = new Controller()`), a function property of
 * an exported object (`module.exports = { list, create }`).
 */
export function exportedCallable(
  model: JavaScriptFileModel,
  exportName: string,
  member?: string,
): ts.FunctionLikeDeclaration | undefined {
  if (member !== undefined) {
    // A CommonJS module object or a default export read by member: the member may be an export itself.
    if (exportName === "*" || exportName === "default") {
      const direct = model.bindings.exports.get(member);
      if (direct !== undefined) {
        const found = localCallable(model, direct);
        if (found) return found;
      }
    }
    const local = exportName === "*" ? "default" : exportedLocal(model, exportName);
    return memberCallable(model, local, member) ?? uniqueMethod(model, member);
  }
  const local = exportName === "*" ? exportedLocal(model, "default") : exportedLocal(model, exportName);
  return localCallable(model, local);
}

/** A function of the file by its local name (a declaration, an arrow assigned to a const, `exports.x = fn`). */
export function localCallable(
  model: JavaScriptFileModel,
  name: string,
): ts.FunctionLikeDeclaration | undefined {
  const direct = model.bindings.functions.get(name);
  if (direct) return direct;
  const declared = model.declarations.get(name);
  const value = declared && unwrap(declared);
  if (value && isFunctionNode(value)) return value;
  // `exports.list = function (req, res) {}` binds no local name: the export name is the one to use.
  if (value && ts.isCallExpression(value)) {
    const wrapped = value.arguments.find((argument) => isFunctionNode(unwrap(argument)));
    if (wrapped) return unwrap(wrapped) as ts.FunctionLikeDeclaration;
  }
  return undefined;
}

/** `object.member` where `object` is a class, an instance of one, or an object literal of this file. */
export function memberCallable(
  model: JavaScriptFileModel,
  object: string,
  member: string,
): ts.FunctionLikeDeclaration | undefined {
  const klass = model.classes.get(object) ?? instanceClass(model, object);
  if (klass) return classMethod(klass, member);
  const declared = model.declarations.get(object);
  const value = declared && unwrap(declared);
  if (value && ts.isObjectLiteralExpression(value)) return objectMethod(model, value, member);
  return undefined;
}

/** The class `name` is an instance of: `const controller = new UsersController()`. */
export function instanceClass(model: JavaScriptFileModel, name: string): ts.ClassLikeDeclaration | undefined {
  const declared = model.declarations.get(name);
  const value = declared && unwrap(declared);
  if (value && ts.isNewExpression(value) && ts.isIdentifier(value.expression))
    return model.classes.get(value.expression.text);
  return undefined;
}

export function classMethod(
  klass: ts.ClassLikeDeclaration,
  member: string,
): ts.FunctionLikeDeclaration | undefined {
  for (const element of klass.members) {
    if (!element.name || propertyName(element.name) !== member) continue;
    if (ts.isMethodDeclaration(element)) return element;
    if (
      ts.isPropertyDeclaration(element) &&
      element.initializer &&
      isFunctionNode(unwrap(element.initializer))
    )
      return unwrap(element.initializer) as ts.FunctionLikeDeclaration;
  }
  return undefined;
}

function objectMethod(
  model: JavaScriptFileModel,
  object: ts.ObjectLiteralExpression,
  member: string,
): ts.FunctionLikeDeclaration | undefined {
  for (const property of object.properties) {
    if (!property.name || propertyName(property.name) !== member) continue;
    if (ts.isMethodDeclaration(property)) return property;
    if (ts.isShorthandPropertyAssignment(property)) return localCallable(model, property.name.text);
    if (ts.isPropertyAssignment(property)) {
      const value = unwrap(property.initializer);
      if (isFunctionNode(value)) return value;
      if (ts.isIdentifier(value)) return localCallable(model, value.text);
    }
  }
  return undefined;
}

/** A method name found on exactly one class of the file: a controller exported in a way not followed. */
function uniqueMethod(model: JavaScriptFileModel, member: string): ts.FunctionLikeDeclaration | undefined {
  const found = [...model.classes.values()]
    .map((klass) => classMethod(klass, member))
    .filter((method) => method !== undefined);
  return found.length === 1 ? found[0] : undefined;
}
