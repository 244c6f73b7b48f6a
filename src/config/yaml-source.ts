import fs from "node:fs";
import { type Document, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { z } from "zod";
import { didYouMean, displayPath, formatFieldPath, type Problem } from "./config-errors.ts";

// A YAML file parsed with positions kept, so that every problem — syntax, schema or coherence — can name
// the line a person has to edit, not just the field.

export interface YamlSource {
  /** Absolute path. */
  file: string;
  /** As shown in problems. */
  display: string;
  document: Document | undefined;
  lineCounter: LineCounter;
  /** The plain data, or undefined when the file could not be read or parsed. */
  value: unknown;
}

export function readYamlFile(file: string, problems: Problem[]): YamlSource {
  const lineCounter = new LineCounter();
  const source: YamlSource = {
    file,
    display: displayPath(file),
    document: undefined,
    lineCounter,
    value: undefined,
  };
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : String(error);
    problems.push({ file: source.display, path: "", message: reason, severity: "error" });
    return source;
  }
  // prettyErrors is off: its code frame would copy file content (possibly a credential) into the message.
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  source.document = document;
  for (const error of document.errors) {
    problems.push({
      file: source.display,
      line: lineCounter.linePos(error.pos[0]).line,
      path: "",
      message: `YAML syntax error: ${error.message}`,
      severity: "error",
    });
  }
  if (document.errors.length === 0) source.value = document.toJS();
  return source;
}

/**
 * The line of the node at `segments`, or of the deepest part of that path that exists (a missing field is
 * reported on its parent). A map key is reported on the key's line, a list item on the item's.
 */
export function lineAt(source: YamlSource, segments: readonly PropertyKey[]): number | undefined {
  const document = source.document;
  if (document === undefined) return undefined;
  let node: unknown = document.contents;
  let line = offsetLine(source, node);
  for (const segment of segments) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && item.key.value === segment,
      );
      if (pair === undefined) break;
      line = offsetLine(source, pair.key) ?? line;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      const item = node.items[segment];
      if (item === undefined) break;
      line = offsetLine(source, item) ?? line;
      node = item;
    } else {
      break;
    }
  }
  return line;
}

/** Every key/value pair of the document with its path, for scans that look at names (literal credentials). */
export function* walkPairs(
  source: YamlSource,
): Generator<{ segments: PropertyKey[]; key: string; value: unknown; line: number | undefined }> {
  function* visit(
    node: unknown,
    segments: PropertyKey[],
  ): Generator<{
    segments: PropertyKey[];
    key: string;
    value: unknown;
    line: number | undefined;
  }> {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        const childSegments = [...segments, key];
        const value = isScalar(pair.value) ? pair.value.value : pair.value;
        yield { segments: childSegments, key, value, line: offsetLine(source, pair.key) };
        yield* visit(pair.value, childSegments);
      }
    } else if (isSeq(node)) {
      for (const [index, item] of node.items.entries()) yield* visit(item, [...segments, index]);
    }
  }
  yield* visit(source.document?.contents, []);
}

/** Zod issues turned into problems with lines, valid-key lists and did-you-mean suggestions. */
export function schemaProblems(source: YamlSource, schema: z.ZodType, error: z.ZodError): Problem[] {
  const problems: Problem[] = [];
  for (const issue of flattenIssues(error.issues)) {
    const segments = issue.path as PropertyKey[];
    if (issue.code === "unrecognized_keys") {
      const valid = objectKeysAt(schema, segments);
      for (const key of issue.keys) {
        const hint = valid.length > 0 ? `${didYouMean(key, valid)}; valid keys: ${valid.join(", ")}` : "";
        problems.push({
          file: source.display,
          line: lineAt(source, [...segments, key]),
          path: formatFieldPath([...segments, key]),
          message: `unknown key "${key}"${hint}`,
          severity: "error",
        });
      }
      continue;
    }
    problems.push({
      file: source.display,
      line: lineAt(source, segments),
      path: formatFieldPath(segments),
      message: describeIssue(source, issue, segments),
      severity: "error",
    });
  }
  return problems;
}

function describeIssue(
  source: YamlSource,
  issue: z.core.$ZodIssue,
  segments: readonly PropertyKey[],
): string {
  const actual = valueAt(source.value, segments);
  if (segments.length === 0 && (actual === null || actual === undefined)) return "the file is empty";
  if (issue.code === "invalid_type" && actual === undefined) return "required field is missing";
  if (issue.code === "invalid_value" && issue.values.length > 1) {
    const choices = issue.values.map((value) => JSON.stringify(value));
    const got = typeof actual === "string" ? `"${actual}" is not valid` : "invalid value";
    const hint = typeof actual === "string" ? didYouMean(actual, issue.values.map(String)) : "";
    return `${got}${hint}; expected one of ${choices.join(", ")}`;
  }
  return issue.message;
}

/** A union failure is reported as the problems of the branch that came closest to matching. */
function flattenIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const flat: z.core.$ZodIssue[] = [];
  for (const issue of issues) {
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const closestBranch = [...issue.errors].sort((left, right) => left.length - right.length)[0] ?? [];
      const nested = closestBranch.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
      flat.push(...flattenIssues(nested as z.core.$ZodIssue[]));
    } else {
      flat.push(issue);
    }
  }
  return flat;
}

function valueAt(value: unknown, segments: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/** The keys an object schema at `segments` accepts, looking through optional/default/array/record wrappers. */
function objectKeysAt(schema: z.ZodType, segments: readonly PropertyKey[]): string[] {
  let current: unknown = unwrap(schema);
  for (const segment of segments) {
    const definition = defOf(current);
    if (definition?.type === "object")
      current = unwrap((definition.shape as Record<string, unknown>)[String(segment)]);
    else if (definition?.type === "array") current = unwrap(definition.element);
    else if (definition?.type === "record") current = unwrap(definition.valueType);
    else return [];
  }
  const definition = defOf(current);
  return definition?.type === "object" ? Object.keys(definition.shape as Record<string, unknown>) : [];
}

type Definition = Record<string, unknown> & { type?: string };

function defOf(schema: unknown): Definition | undefined {
  return (schema as { _zod?: { def?: Definition } } | undefined)?._zod?.def;
}

function unwrap(schema: unknown): unknown {
  let current = schema;
  for (;;) {
    const definition = defOf(current);
    if (definition === undefined) return current;
    if (
      ["optional", "default", "nullable", "prefault", "readonly", "nonoptional"].includes(
        definition.type ?? "",
      )
    ) {
      current = definition.innerType;
    } else if (definition.type === "pipe") {
      current = definition.in;
    } else {
      return current;
    }
  }
}

function offsetLine(source: YamlSource, node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  if (!range) return undefined;
  return source.lineCounter.linePos(range[0]).line;
}

export type Report = (segments: PropertyKey[], message: string, severity?: Problem["severity"]) => void;

/** A function that adds a problem at a field of `source`, with its line, to `problems`. */
export function reporter(problems: Problem[], source: YamlSource): Report {
  return (segments, message, severity = "error") => {
    problems.push({
      file: source.display,
      line: lineAt(source, segments),
      path: formatFieldPath(segments),
      message,
      severity,
    });
  };
}
