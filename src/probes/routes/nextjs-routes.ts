import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import type { Route } from "../../map/system-map.ts";
import { withInputs } from "./container-graph.ts";
import { exportedCallable, type JavaScriptFileModel } from "./javascript-file-model.ts";
import { functionInputs, type InputsDraft } from "./javascript-route-inputs.ts";
import { lineOf, staticString, UPPER_METHODS } from "./javascript-syntax.ts";
import { normalizePathTemplate } from "./path-template.ts";
import type { RouteInputs } from "./route-inputs.ts";

// Next.js routes by file: `pages/api/**` (one default-exported handler, methods told apart inside) and
// `app/**/route.ts` (one exported function per method).

const PAGES_API = /^(.*?)(?:src\/)?pages\/(api\/.+)\.[cm]?[jt]sx?$/;
const APP_ROUTE = /^(.*?)(?:src\/)?app\/(.*?)\/?route\.[cm]?[jt]sx?$/;

/** Whether `relative` could be a Next.js API route by its place in the tree. */
export function isNextRouteFile(relative: string): boolean {
  return PAGES_API.test(relative) || APP_ROUTE.test(relative);
}

export function nextRoutesOf(
  root: string,
  model: JavaScriptFileModel,
  isNextProject: (folder: string) => boolean,
  resolve: (draft: InputsDraft) => RouteInputs,
): Route[] {
  const relative = model.file;
  const pages = PAGES_API.exec(relative);
  const app = pages ? null : APP_ROUTE.exec(relative);
  const projectFolder = (pages ?? app)?.[1] ?? "";
  if (!(pages || app) || !isNextProject(path.join(root, projectFolder))) return [];
  const source = model.source;
  if (pages) {
    const segments = (pages[2] ?? "").split("/").filter((segment) => segment !== "index");
    const template = normalizePathTemplate(segments.join("/"), "bracket");
    const methods = methodsComparedIn(source);
    const handler = exportedCallable(model, "default");
    const inputs = handler ? resolve(functionInputs(model, handler)) : {};
    return (methods.length > 0 ? methods : ["ALL"]).map((method) => ({
      method,
      path: template,
      file: relative,
      line: 1,
      framework: "nextjs",
      ...withInputs(method, inputs),
    }));
  }
  const segments = (app?.[2] ?? "").split("/").filter((segment) => segment !== "");
  if (segments.some((segment) => segment.startsWith("_"))) return [];
  const visible = segments.filter((segment) => !/^\(.*\)$/.test(segment) && !segment.startsWith("@"));
  const template = normalizePathTemplate(visible.join("/"), "bracket");
  const routes: Route[] = [];
  for (const [exported] of model.bindings.exports) {
    if (!UPPER_METHODS.has(exported)) continue;
    const handler = exportedCallable(model, exported);
    const inputs = handler ? resolve(functionInputs(model, handler)) : {};
    routes.push({
      method: exported,
      path: template,
      file: relative,
      line: exportLine(source, exported),
      framework: "nextjs",
      ...withInputs(exported, inputs),
    });
  }
  return routes;
}

/** A folder is a Next.js project when its package.json depends on `next` or it has a next.config file. */
export function nextProjectDetector(): (folder: string) => boolean {
  const cache = new Map<string, boolean>();
  return (folder) => {
    const cached = cache.get(folder);
    if (cached !== undefined) return cached;
    let result = ["next.config.js", "next.config.mjs", "next.config.ts", "next.config.cjs"].some((name) =>
      fs.existsSync(path.join(folder, name)),
    );
    if (!result) {
      try {
        const manifest = JSON.parse(fs.readFileSync(path.join(folder, "package.json"), "utf8")) as Record<
          string,
          unknown
        >;
        result = ["dependencies", "devDependencies"].some((field) => {
          const dependencies = manifest[field];
          return typeof dependencies === "object" && dependencies !== null && "next" in dependencies;
        });
      } catch {
        result = false;
      }
    }
    cache.set(folder, result);
    return result;
  };
}

/** `req.method === "POST"` and `case "GET":` under `switch (req.method)`. */
function methodsComparedIn(source: ts.SourceFile): string[] {
  const methods = new Set<string>();
  const none = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (
      ts.isBinaryExpression(node) &&
      (node.operatorToken.kind === ts.SyntaxKind.EqualsEqualsEqualsToken ||
        node.operatorToken.kind === ts.SyntaxKind.EqualsEqualsToken)
    ) {
      const [literal, other] =
        staticString(node.right, none) !== undefined ? [node.right, node.left] : [node.left, node.right];
      const value = staticString(literal, none)?.toUpperCase();
      if (value && UPPER_METHODS.has(value) && /method/i.test(other.getText(source))) methods.add(value);
    }
    if (ts.isCaseClause(node) && /method/i.test(node.parent.parent.expression.getText(source))) {
      const value = staticString(node.expression, none)?.toUpperCase();
      if (value && UPPER_METHODS.has(value)) methods.add(value);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...methods];
}

function exportLine(source: ts.SourceFile, name: string): number {
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name?.text === name)
      return lineOf(source, statement);
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.name.text === name)
          return lineOf(source, statement);
      }
    }
  }
  return 1;
}
