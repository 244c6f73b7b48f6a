import ts from "typescript";

// What one JavaScript/TypeScript file imports, read from its syntax tree (never from regexes): static
// imports and re-exports, `import x = require()`, `require()`, `import("literal")`, type-only imports, and
// the calls that load a whole folder at run time (readdir, glob, `import.meta.glob`, `require.context`).

/**
 * static: evaluated when the module loads (the edges of a load-time cycle). type: erased at compile time.
 * lazy: `import()` or a `require()` inside a function, evaluated later. reference: a string that names a
 * file (a worker script, a module loaded by name): it reaches code but is no import.
 */
export type ImportKind = "static" | "type" | "lazy" | "reference";

export interface ImportReference {
  specifier: string;
  kind: ImportKind;
  line: number;
}

export interface ModuleFacts {
  imports: ImportReference[];
  /** Folders (relative to the file) whose modules are loaded by a folder-loading call. */
  loaders: Array<{ folder: string; line: number }>;
  /** Dynamic loads whose target no literal reveals. */
  opaqueLoads: number;
  /** String literals shaped like paths or module names, for files loaded by name. */
  strings: string[];
  /** Non-blank lines. */
  lines: number;
  /** Functions, methods, arrow functions. */
  functions: number;
  /** Lines of top-level declarations that are plain data (literals, enums, types). */
  dataLines: number;
  /** Runs as a program by itself (a shebang, or Python's `if __name__ == "__main__"`). */
  main: boolean;
}

const LOADER_CALLS = new Set([
  "readdirSync",
  "readdir",
  "opendir",
  "opendirSync",
  "glob",
  "globSync",
  "sync",
  "context",
  "fastGlob",
  "fg",
]);
const PATH_JOINERS = new Set(["join", "resolve"]);
const PATH_LIKE = /^(\.{1,2}\/)?[\w@.$-]+(\/[\w@.$*-]+)*\/?$/;
const MAX_STRINGS = 400;

function scriptKind(fileName: string): ts.ScriptKind {
  if (fileName.endsWith(".tsx")) return ts.ScriptKind.TSX;
  if (fileName.endsWith(".jsx")) return ts.ScriptKind.JSX;
  if (/\.[cm]?js$/.test(fileName)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function isFunctionLike(node: ts.Node): boolean {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

function literalText(node: ts.Node | undefined): string | undefined {
  if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

function calleeName(expression: ts.Expression): string | undefined {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return expression.name.text;
  return undefined;
}

/** The folder a loader call reads, when its argument is literal enough: `"./routes"`, `join(__dirname, "a")`. */
function staticFolder(argument: ts.Expression | undefined): string | undefined {
  if (!argument) return undefined;
  if (isOwnFolder(argument)) return "./";
  const literal = literalText(argument);
  if (literal !== undefined) return literal;
  if (ts.isTemplateExpression(argument)) return argument.head.text || undefined;
  if (ts.isCallExpression(argument)) {
    const name = calleeName(argument.expression);
    if (name && PATH_JOINERS.has(name)) {
      const [base, ...rest] = argument.arguments;
      if (base === undefined || !isOwnFolder(base)) return undefined;
      const parts = rest.map((part) => literalText(part));
      if (parts.some((part) => part === undefined)) return undefined;
      return `./${parts.join("/")}`;
    }
  }
  if (
    ts.isNewExpression(argument) &&
    ts.isIdentifier(argument.expression) &&
    argument.expression.text === "URL"
  ) {
    return literalText(argument.arguments?.[0]);
  }
  return undefined;
}

/** `__dirname`, `import.meta.dirname`: the folder of the file itself. */
function isOwnFolder(expression: ts.Expression): boolean {
  if (ts.isIdentifier(expression)) return expression.text === "__dirname";
  return (
    ts.isPropertyAccessExpression(expression) &&
    ts.isMetaProperty(expression.expression) &&
    expression.name.text === "dirname"
  );
}

/** The part of a template or glob before its first variable piece, cut back to a folder. */
function folderPrefix(pattern: string): string | undefined {
  const cut = pattern.search(/[*{[$]/);
  const head = cut < 0 ? pattern : pattern.slice(0, cut);
  const slash = head.lastIndexOf("/");
  if (slash < 0) return undefined;
  return head.slice(0, slash + 1);
}

/** Whether a top-level declaration holds plain data: literals (possibly frozen or `as const`), enums, types. */
function isDataStatement(statement: ts.Statement): boolean {
  if (
    ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) ||
    ts.isEnumDeclaration(statement)
  ) {
    return true;
  }
  const isLiteral = (expression: ts.Expression | undefined): boolean => {
    if (!expression) return false;
    let current = expression;
    while (
      ts.isAsExpression(current) ||
      ts.isSatisfiesExpression(current) ||
      ts.isParenthesizedExpression(current) ||
      (ts.isCallExpression(current) &&
        calleeName(current.expression) === "freeze" &&
        current.arguments.length === 1)
    ) {
      current = ts.isCallExpression(current) ? current.arguments[0]! : current.expression;
    }
    if (!(ts.isObjectLiteralExpression(current) || ts.isArrayLiteralExpression(current))) {
      return (
        ts.isStringLiteral(current) ||
        ts.isNumericLiteral(current) ||
        ts.isNoSubstitutionTemplateLiteral(current)
      );
    }
    let hasLogic = false;
    const visit = (node: ts.Node): void => {
      if (hasLogic) return;
      if (isFunctionLike(node) || ts.isCallExpression(node) || ts.isNewExpression(node)) hasLogic = true;
      else ts.forEachChild(node, visit);
    };
    visit(current);
    return !hasLogic;
  };
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.every((declaration) => isLiteral(declaration.initializer));
  }
  if (ts.isExportAssignment(statement)) return isLiteral(statement.expression);
  return false;
}

function importKind(node: ts.ImportDeclaration): ImportKind {
  const clause = node.importClause;
  if (!clause) return "static";
  if (clause.isTypeOnly) return "type";
  const bindings = clause.namedBindings;
  if (
    !clause.name &&
    bindings &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  ) {
    return "type";
  }
  return "static";
}

function exportKind(node: ts.ExportDeclaration): ImportKind {
  if (node.isTypeOnly) return "type";
  const clause = node.exportClause;
  if (
    clause &&
    ts.isNamedExports(clause) &&
    clause.elements.length > 0 &&
    clause.elements.every((element) => element.isTypeOnly)
  ) {
    return "type";
  }
  return "static";
}

export function extractJavaScriptImports(fileName: string, text: string): ModuleFacts {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, scriptKind(fileName));
  const facts: ModuleFacts = {
    imports: [],
    loaders: [],
    opaqueLoads: 0,
    strings: [],
    lines: text.split("\n").filter((line) => line.trim() !== "").length,
    functions: 0,
    dataLines: 0,
    main: text.startsWith("#!"),
  };
  const lineOf = (node: ts.Node): number =>
    source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const add = (specifier: string, kind: ImportKind, node: ts.Node): void => {
    facts.imports.push({ specifier, kind, line: lineOf(node) });
  };

  for (const statement of source.statements) {
    if (!isDataStatement(statement)) continue;
    const start = source.getLineAndCharacterOfPosition(statement.getStart(source)).line;
    const end = source.getLineAndCharacterOfPosition(statement.getEnd()).line;
    facts.dataLines += end - start + 1;
  }

  // TypeScript (tsc, esbuild, tsx) drops an import whose bindings are only used as types: such an import
  // is type-only at run time even without the `type` keyword. Uses are counted by context to tell.
  const typescript = /\.[cm]?tsx?$/.test(fileName);
  const valueUses = new Map<string, number>();
  const typeUses = new Map<string, number>();
  const importedNames: Array<{ index: number; names: string[] }> = [];

  const visit = (node: ts.Node, insideFunction: boolean, inType: boolean): void => {
    if (isFunctionLike(node)) facts.functions += 1;
    if (ts.isImportDeclaration(node)) {
      const specifier = literalText(node.moduleSpecifier);
      if (specifier === undefined) return;
      const kind = importKind(node);
      add(specifier, kind, node);
      const names = boundNames(node);
      if (typescript && kind === "static" && names.length > 0) {
        importedNames.push({ index: facts.imports.length - 1, names });
      }
      return;
    }
    if (ts.isExportDeclaration(node)) {
      const specifier = literalText(node.moduleSpecifier);
      if (specifier !== undefined) add(specifier, exportKind(node), node);
      else ts.forEachChild(node, (child) => visit(child, insideFunction, inType));
      return;
    }
    if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const specifier = literalText(node.moduleReference.expression);
      if (specifier !== undefined) add(specifier, node.isTypeOnly ? "type" : "static", node);
      return;
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const specifier = literalText(node.argument.literal);
      if (specifier !== undefined) add(specifier, "type", node);
    }
    if (ts.isCallExpression(node)) visitCall(node, insideFunction);
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (facts.strings.length < MAX_STRINGS && node.text.length < 200 && PATH_LIKE.test(node.text)) {
        facts.strings.push(node.text);
      }
    }
    if (ts.isIdentifier(node)) {
      const uses = inType ? typeUses : valueUses;
      uses.set(node.text, (uses.get(node.text) ?? 0) + 1);
      return;
    }
    const inside = insideFunction || isFunctionLike(node);
    // Names after a dot and property keys are not references to an import.
    const referenced = ts.isPropertyAccessExpression(node)
      ? node.expression
      : ts.isQualifiedName(node)
        ? node.left
        : ts.isPropertyAssignment(node)
          ? node.initializer
          : undefined;
    if (referenced) {
      visit(referenced, inside, inType);
      return;
    }
    if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.heritageClauses) {
      // `extends Base` needs Base at run time; `implements Shape` does not.
      for (const clause of node.heritageClauses) {
        for (const type of clause.types) {
          visit(type.expression, inside, inType || clause.token === ts.SyntaxKind.ImplementsKeyword);
          for (const argument of type.typeArguments ?? []) visit(argument, inside, true);
        }
      }
      ts.forEachChild(node, (child) => {
        if (!ts.isHeritageClause(child)) visit(child, inside, inType);
      });
      return;
    }
    const typeContext =
      inType || ts.isTypeNode(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node);
    ts.forEachChild(node, (child) => visit(child, inside, typeContext));
  };

  const visitCall = (node: ts.CallExpression, insideFunction: boolean): void => {
    const [first] = node.arguments;
    if (node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const literal = literalText(first);
      if (literal !== undefined) add(literal, "lazy", node);
      else noteLoader(staticFolder(first), node, false);
      return;
    }
    const name = calleeName(node.expression);
    if (ts.isIdentifier(node.expression) && name === "require" && node.arguments.length === 1) {
      const literal = literalText(first);
      if (literal !== undefined) add(literal, insideFunction ? "lazy" : "static", node);
      else noteLoader(staticFolder(first), node, false);
      return;
    }
    if (
      ts.isPropertyAccessExpression(node.expression) &&
      ts.isIdentifier(node.expression.expression) &&
      node.expression.expression.text === "require" &&
      name === "resolve"
    ) {
      const literal = literalText(first);
      if (literal !== undefined) add(literal, "reference", node);
      return;
    }
    const isMetaGlob =
      ts.isPropertyAccessExpression(node.expression) &&
      ts.isMetaProperty(node.expression.expression) &&
      name === "glob";
    if (isMetaGlob || (name !== undefined && LOADER_CALLS.has(name))) {
      const folder = staticFolder(first);
      if (folder !== undefined) noteLoader(folder, node, true);
      else if (first && ts.isArrayLiteralExpression(first)) {
        for (const element of first.elements) noteLoader(literalText(element), node, true);
      }
    }
  };

  // A folder-reading call names a folder (or a glob); a template import names a file prefix.
  const noteLoader = (pattern: string | undefined, node: ts.Node, namesFolder: boolean): void => {
    const folder =
      pattern === undefined
        ? undefined
        : namesFolder && !/[*{[]/.test(pattern)
          ? `${pattern.replace(/\/+$/, "")}/`
          : folderPrefix(pattern);
    if (folder === undefined || folder === "/") {
      // Only an import whose target is computed can load code we cannot see; reading a folder may not.
      if (!namesFolder) facts.opaqueLoads += 1;
      return;
    }
    facts.loaders.push({ folder, line: lineOf(node) });
  };

  visit(source, false, false);
  for (const { index, names } of importedNames) {
    const asValue = names.some((name) => (valueUses.get(name) ?? 0) > 0);
    const asType = names.some((name) => (typeUses.get(name) ?? 0) > 0);
    if (!asValue && asType) facts.imports[index]!.kind = "type";
  }
  return facts;
}

/** Local names an import declaration binds (default, named, namespace). */
function boundNames(node: ts.ImportDeclaration): string[] {
  const clause = node.importClause;
  if (!clause) return [];
  const names = clause.name ? [clause.name.text] : [];
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) names.push(bindings.name.text);
  else if (bindings)
    names.push(
      ...bindings.elements.filter((element) => !element.isTypeOnly).map((element) => element.name.text),
    );
  return names;
}
