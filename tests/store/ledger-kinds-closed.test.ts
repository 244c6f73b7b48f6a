import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { isLedgerKind, LEDGER_KINDS } from "../../src/store/ledger-kinds.ts";

// Proves the ledger's kinds are one closed list: every kind written anywhere in src/ is a member of
// LEDGER_KINDS. TypeScript already rejects a bad literal passed as `LedgerKind`; this catches what types
// miss (casts, `any`, data built elsewhere) and keeps the promise even if a signature is loosened.
//
// What counts as writing a kind (found by parsing, not by regex, so formatting and comments don't matter):
//   1. a call named `append` or `record` (`store.append("k", …)`, `context.record("k", …)`, `record("k", …)`)
//      whose first argument is a string literal — unless the receiver is a form, header or URL-parameter
//      object (`form.append("name", value)` is not a ledger write);
//   2. such a call whose first argument is an object literal with a string-literal `kind`
//      (`record({ kind: "k", data })`);
//   3. any object literal that has both a string-literal `kind` and a `data` property — the shape of a
//      ledger entry, and of router effects that are later written as entries (`{ type: "record", kind, data }`).
// A kind computed at run time (a variable) cannot be seen here; it is typed `LedgerKind`, and
// `RunStore.append` refuses a non-member at run time as well.

const WRITER_NAMES = new Set(["append", "record"]);
const NOT_A_LEDGER = /(form|header|param|search|url|query|buffer|list|children|body)/i;

interface FoundKind {
  kind: string;
  file: string;
  line: number;
}

function findLedgerKinds(source: string, file = "source.ts"): FoundKind[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: FoundKind[] = [];
  const add = (node: ts.Node, kind: string) =>
    found.push({ kind, file, line: sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1 });

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && isWriterCall(node)) {
      const first = node.arguments[0];
      if (first && ts.isStringLiteralLike(first)) add(first, first.text);
      if (first && ts.isObjectLiteralExpression(first)) {
        const kind = stringProperty(first, "kind");
        if (kind) add(kind, kind.text);
      }
    }
    if (ts.isObjectLiteralExpression(node) && hasProperty(node, "data")) {
      const kind = stringProperty(node, "kind");
      if (kind) add(kind, kind.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  // Rules 2 and 3 can see the same literal; report it once.
  return found.filter(
    (item, index) =>
      found.findIndex((other) => other.line === item.line && other.kind === item.kind) === index,
  );
}

function isWriterCall(call: ts.CallExpression): boolean {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return WRITER_NAMES.has(callee.text);
  if (ts.isPropertyAccessExpression(callee) && WRITER_NAMES.has(callee.name.text)) {
    return !NOT_A_LEDGER.test(callee.expression.getText());
  }
  return false;
}

function stringProperty(object: ts.ObjectLiteralExpression, name: string): ts.StringLiteralLike | undefined {
  for (const property of object.properties) {
    if (
      ts.isPropertyAssignment(property) &&
      propertyName(property.name) === name &&
      ts.isStringLiteralLike(property.initializer)
    ) {
      return property.initializer;
    }
  }
  return undefined;
}

function hasProperty(object: ts.ObjectLiteralExpression, name: string): boolean {
  return object.properties.some(
    (property) =>
      (ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property)) &&
      propertyName(property.name) === name,
  );
}

function propertyName(name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined;
}

function sourceFiles(folder: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

describe("ledger kinds are a closed list", () => {
  it("the scanner finds every written form and catches an unknown kind", () => {
    const source = `
      store.append("run_started", { mode });
      context.record(
        "tool_called", // formatting does not matter
        { tool },
        agent,
      );
      record("made_up_kind", {});
      deps.record({ kind: "invented_too", data: {} });
      effects.push({ type: "record", kind: "phase_started", data: { phase } });
      form.append("file", blob);
      url.searchParams.append("page", "2");
      const location = { kind: "endpoint", value: "GET /x" };
      memory.record({ fingerprint, runId });
      // store.append("in_a_comment", {});
    `;
    const found = findLedgerKinds(source, "fake.ts");
    expect(found.map((item) => `${item.kind}@${item.line}`)).toEqual([
      "run_started@2",
      "tool_called@4",
      "made_up_kind@8",
      "invented_too@9",
      "phase_started@10",
    ]);
    expect(found.filter((item) => !isLedgerKind(item.kind)).map((item) => item.kind)).toEqual([
      "made_up_kind",
      "invented_too",
    ]);
  });

  it("every kind written under src/ is in LEDGER_KINDS", () => {
    const root = path.resolve(import.meta.dirname, "../../src");
    const found = sourceFiles(root).flatMap((file) =>
      findLedgerKinds(fs.readFileSync(file, "utf8"), path.relative(root, file)),
    );
    // Guards against a scanner that silently matches nothing.
    expect(found.length).toBeGreaterThan(0);
    const unknown = found
      .filter((item) => !isLedgerKind(item.kind))
      .map((item) => `src/${item.file}:${item.line} writes "${item.kind}"`);
    expect(
      unknown,
      `add these to LEDGER_KINDS (${LEDGER_KINDS.length} kinds today) or fix the writer`,
    ).toEqual([]);
  });
});
