import path from "node:path";

// Path expressions in source, evaluated as far as the text allows, for finding a SQLite file: string
// literals, f-strings and template literals, `+`, `os.path.join`/`path.join`/`path.resolve`, pathlib's
// `/`, `__dirname`, `os.path.dirname(__file__)`, `Path(__file__).parent`, `os.getcwd()`, and names
// assigned on one line of the same file. The answer is a base (the working directory, the file's folder
// and how many levels up, or unknown) and the literal tail.

/** Where a path expression starts from: the working directory (the root), the file's folder (and up). */
export type Base = { from: "root" } | { from: "file"; up: number } | { from: "unknown" };

export interface Evaluated {
  base: Base;
  tail: string;
}

export function evaluate(
  expression: string,
  names: ReadonlyMap<string, string>,
  depth: number,
): Evaluated | undefined {
  const text = expression.trim();
  if (depth > 4 || !text) return undefined;
  const literal = /^[rbuf]?(["'`])((?:(?!\1).)*)\1$/is.exec(text);
  if (literal) return stringLiteral(literal[2]!, text.startsWith("f") || literal[1] === "`", names, depth);
  for (const operator of ["+", "/"]) {
    const parts = splitTopLevel(text, operator);
    if (parts.length > 1)
      return joinAll(
        parts.map((part) => evaluate(part, names, depth + 1)),
        operator === "/",
      );
  }
  const call =
    /^(?:os\.path\.join|path\.join|path\.resolve|join|resolve|Path|str|String|os\.path\.abspath|path\.normalize)\s*\(([\s\S]*)\)$/.exec(
      text,
    );
  if (call)
    return joinAll(
      splitTopLevel(call[1]!, ",").map((part) => evaluate(part, names, depth + 1)),
      true,
    );
  const base = baseOf(text);
  if (base) return { base, tail: "" };
  const name = /^[A-Za-z_]\w*$/.exec(text)?.[0];
  if (name && names.has(name)) return evaluate(names.get(name)!, names, depth + 1);
  return { base: { from: "unknown" }, tail: "" };
}

/** `__dirname`, `os.path.dirname(__file__)`, `Path(__file__).resolve().parent.parent`, `os.getcwd()`. */
function baseOf(text: string): Base | undefined {
  if (/^(os\.getcwd\(\)|process\.cwd\(\)|Path\.cwd\(\))$/.test(text)) return { from: "root" };
  if (!/__dirname|__file__|import\.meta\.(dirname|url)|\broot_path\b/.test(text)) return undefined;
  const parents = (text.match(/\.parent\b/g) ?? []).length;
  const dirnames = (text.match(/dirname\s*\(/g) ?? []).length;
  const up = Math.max(parents, dirnames) - (/__file__/.test(text) ? 1 : 0);
  return { from: "file", up: Math.max(0, up) };
}

function stringLiteral(
  body: string,
  template: boolean,
  names: ReadonlyMap<string, string>,
  depth: number,
): Evaluated {
  if (!template || !/\{|\$\{/.test(body)) return { base: { from: "root" }, tail: body };
  const pieces = body.split(/\$?\{([^}]+)\}/);
  return joinAll(
    pieces.map((piece, index) =>
      index % 2 === 1 ? evaluate(piece, names, depth + 1) : { base: { from: "root" }, tail: piece },
    ),
    false,
  );
}

/**
 * Joins evaluated pieces: the first piece that is a bare base (`os.getcwd()`, `__dirname`) sets the base,
 * literals make the tail (joined as path segments for `os.path.join` and `/`, concatenated otherwise); a
 * tail after a base is relative to it even when written `"/x.db"`.
 */
function joinAll(pieces: Array<Evaluated | undefined>, asPath: boolean): Evaluated {
  let base: Base = { from: "root" };
  let tail = "";
  let afterBase = false;
  for (const piece of pieces) {
    if (!piece) continue;
    if (tail === "") {
      if (piece.tail === "") {
        base = piece.base;
        afterBase = true;
        continue;
      }
      if (piece.base.from !== "root") base = piece.base;
    }
    if (!piece.tail) continue;
    const next = afterBase && tail === "" ? piece.tail.replace(/^\/+/, "") : piece.tail;
    tail = asPath && tail ? path.posix.join(tail, next) : tail + next;
  }
  return { base, tail };
}

/** `NAME = expression` on one line, for names a path expression refers to (last assignment wins). */
export function assignments(text: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const match of text.matchAll(
    /^\s*(?:export\s+)?(?:const|let|var)?\s*([A-Za-z_]\w*)\s*(?::\s*\w+\s*)?=\s*([^\n;]+?)\s*;?\s*$/gm,
  )) {
    names.set(match[1]!, match[2]!);
  }
  return names;
}

/** The first argument of a call whose `(` ends right before `from`. */
export function firstArgument(text: string, from: number): string | undefined {
  const [first] = splitTopLevel(balanced(text, from, ")"), ",");
  return first?.trim() || undefined;
}

/** The value of `key: value` up to the next top-level `,` or closing bracket. */
export function propertyValue(text: string, from: number): string | undefined {
  const rest = text.slice(from, from + 500);
  let depth = 0;
  let quote: string | undefined;
  for (let index = 0; index < rest.length; index += 1) {
    const char = rest[index]!;
    if (quote) {
      if (char === quote && rest[index - 1] !== "\\") quote = undefined;
    } else if (`"'\``.includes(char)) quote = char;
    else if ("([{".includes(char)) depth += 1;
    else if (")]}".includes(char)) {
      if (depth === 0) return rest.slice(0, index).trim();
      depth -= 1;
    } else if ((char === "," || char === "\n") && depth === 0) return rest.slice(0, index).trim();
  }
  return undefined;
}

/** What follows a `"sqlite:///"` literal on its line: `+ os.path.join(...)` or an f-string's remainder. */
export function restOfExpression(text: string, from: number): string {
  const line = text.slice(from, text.indexOf("\n", from) === -1 ? undefined : text.indexOf("\n", from));
  const fString = /^\{([^}]+)\}([^"']*)/.exec(line);
  if (fString) return `${fString[1]!.trim()} + ${JSON.stringify(fString[2])}`;
  let rest = line.replace(/^["'`]\s*\+?\s*/, "").replace(/[,;]*\s*$/, "");
  // A closing bracket of an enclosing call (`create_engine("sqlite:///" + name)`) is not the expression's.
  while (rest.endsWith(")") && (rest.match(/\)/g) ?? []).length > (rest.match(/\(/g) ?? []).length)
    rest = rest.slice(0, -1).trimEnd();
  return rest;
}

/** Text from `from` up to the matching `close` (exclusive), skipping nested brackets and strings. */
function balanced(text: string, from: number, close: string): string {
  let depth = 0;
  let quote: string | undefined;
  for (let index = from; index < Math.min(text.length, from + 1000); index += 1) {
    const char = text[index]!;
    if (quote) {
      if (char === quote && text[index - 1] !== "\\") quote = undefined;
    } else if (`"'\``.includes(char)) quote = char;
    else if ("([{".includes(char)) depth += 1;
    else if (")]}".includes(char)) {
      if (depth === 0) return char === close ? text.slice(from, index) : "";
      depth -= 1;
    }
  }
  return "";
}

function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quote) {
      if (char === quote && text[index - 1] !== "\\") quote = undefined;
    } else if (`"'\``.includes(char)) quote = char;
    else if ("([{".includes(char)) depth += 1;
    else if (")]}".includes(char)) depth -= 1;
    else if (depth === 0 && text.startsWith(separator, index)) {
      parts.push(text.slice(start, index));
      start = index + separator.length;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
