import type { Route } from "../../map/system-map.ts";
import { withInputs } from "./container-graph.ts";
import type { RouteInputs } from "./route-inputs.ts";

// The line-based readers (Java, Go, PHP, Ruby, C#) look for route declarations with regular expressions.
// They search a view of the file where comments are blanked (a commented-out mapping is no route) and a
// second view where string contents are blanked too (a `@GetMapping` inside a log message is no route);
// both views keep every offset and newline, so a match in one reads its literal from the other.

export interface SourceSyntax {
  /** Line comment openers (`//`, `#`). */
  lineComments: readonly string[];
  /** `/* … *\/` comments. */
  blockComments: boolean;
  /** Quote characters whose strings take backslash escapes. */
  quotes: string;
  /** Quote characters of raw strings (Go's backtick): no escapes. */
  rawQuotes?: string;
  /** `"""…"""` strings (Kotlin, Java text blocks). */
  tripleQuotes?: boolean;
}

export const C_SYNTAX: SourceSyntax = { lineComments: ["//"], blockComments: true, quotes: "\"'" };

export class MaskedSource {
  /** Comments blanked, strings kept. */
  readonly text: string;
  /** Comments and string contents blanked; quotes kept, so a string starts where `code` has a quote. */
  readonly code: string;
  private readonly lineStarts: number[];

  constructor(source: string, syntax: SourceSyntax) {
    const [text, code] = mask(source, syntax);
    this.text = text;
    this.code = code;
    this.lineStarts = [0];
    for (let index = 0; index < source.length; index += 1)
      if (source[index] === "\n") this.lineStarts.push(index + 1);
  }

  /** 1-based line of an offset. */
  lineAt(index: number): number {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.lineStarts[middle] ?? 0) <= index) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }

  /** The string literal starting at or after `from` (only whitespace between), its value and end offset. */
  stringAt(from: number): { value: string; start: number; end: number } | undefined {
    const start = skipSpace(this.code, from);
    const quote = this.code[start];
    if (quote === undefined || !`"'\``.includes(quote)) return undefined;
    const triple = this.code.startsWith(quote.repeat(3), start) && quote !== "`";
    const open = triple ? 3 : 1;
    const close = this.code.indexOf(triple ? quote.repeat(3) : quote, start + open);
    if (close < 0) return undefined;
    const raw = this.text.slice(start + open, close);
    return { value: raw.replace(/\\(["'\\/])/g, "$1"), start, end: close + open };
  }

  /** Offset of the bracket closing the one at `open` (any of `([{`), or -1. */
  closing(open: number): number {
    let depth = 0;
    for (let index = open; index < this.code.length; index += 1) {
      const character = this.code[index];
      if (character === "(" || character === "[" || character === "{") depth += 1;
      else if (character === ")" || character === "]" || character === "}") {
        depth -= 1;
        if (depth === 0) return index;
      }
    }
    return -1;
  }

  /** Top-level comma-separated pieces of `code[start, end)`, as offset ranges. */
  split(start: number, end: number): Array<[number, number]> {
    const pieces: Array<[number, number]> = [];
    let depth = 0;
    let pieceStart = start;
    for (let index = start; index < end; index += 1) {
      const character = this.code[index];
      if ("([{<".includes(character ?? "")) depth += 1;
      else if (")]}>".includes(character ?? "") && !(character === ">" && this.code[index - 1] === "-"))
        depth = Math.max(0, depth - 1);
      else if (character === "," && depth === 0) {
        pieces.push([pieceStart, index]);
        pieceStart = index + 1;
      }
    }
    if (this.code.slice(pieceStart, end).trim() !== "") pieces.push([pieceStart, end]);
    return pieces;
  }

  /** Every string literal in `code[start, end)`, in order. */
  stringsIn(start: number, end: number): string[] {
    const values: string[] = [];
    let index = start;
    while (index < end) {
      const character = this.code[index] ?? "";
      if (`"'\``.includes(character)) {
        const literal = this.stringAt(index);
        if (!literal) break;
        values.push(literal.value);
        index = literal.end;
        continue;
      }
      index += 1;
    }
    return values;
  }
}

export function skipSpace(text: string, from: number): number {
  let index = from;
  while (index < text.length && /\s/.test(text[index] ?? "")) index += 1;
  return index;
}

function mask(source: string, syntax: SourceSyntax): [string, string] {
  const text: string[] = [];
  const code: string[] = [];
  const blank = (character: string): string => (character === "\n" ? "\n" : " ");
  let index = 0;
  const length = source.length;
  while (index < length) {
    const character = source[index] as string;
    const lineComment = syntax.lineComments.find(
      (opener) => source.startsWith(opener, index) && !(opener === "#" && source[index + 1] === "["),
    );
    if (lineComment) {
      while (index < length && source[index] !== "\n") {
        text.push(" ");
        code.push(" ");
        index += 1;
      }
      continue;
    }
    if (syntax.blockComments && source.startsWith("/*", index)) {
      const end = source.indexOf("*/", index + 2);
      const stop = end < 0 ? length : end + 2;
      for (; index < stop; index += 1) {
        text.push(blank(source[index] as string));
        code.push(blank(source[index] as string));
      }
      continue;
    }
    const raw = syntax.rawQuotes?.includes(character) ?? false;
    if (syntax.quotes.includes(character) || raw) {
      const triple = syntax.tripleQuotes === true && source.startsWith(character.repeat(3), index);
      const delimiter = triple ? character.repeat(3) : character;
      let end = index + delimiter.length;
      while (end < length && !source.startsWith(delimiter, end)) {
        if (!raw && !triple && source[end] === "\\") end += 1;
        else if (!raw && !triple && source[end] === "\n") break;
        end += 1;
      }
      const stop = Math.min(length, end + delimiter.length);
      const closed = source.startsWith(delimiter, end);
      for (let position = index; position < stop; position += 1) {
        const current = source[position] as string;
        text.push(current);
        const isDelimiter =
          position < index + delimiter.length || (closed && position >= end && position < stop);
        code.push(isDelimiter ? current : blank(current));
      }
      index = stop;
      continue;
    }
    text.push(character);
    code.push(character);
    index += 1;
  }
  return [text.join(""), code.join("")];
}

/** A route in the map's shape, its inputs dropped where the method cannot carry them. */
export function textRoute(
  method: string,
  path: string,
  file: string,
  line: number,
  framework: string,
  inputs?: RouteInputs,
): Route {
  return { method: method.toUpperCase(), path, file, line, framework, ...withInputs(method, inputs) };
}

/** Routes without repeats of the same method, path and place. */
export function uniqueRoutes(routes: Route[]): Route[] {
  const seen = new Set<string>();
  return routes.filter((route) => {
    const key = `${route.method} ${route.path} ${route.file}:${route.line}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
