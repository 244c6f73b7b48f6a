import {
  type DocumentShapes,
  type FieldShape,
  namedOf,
  type RootKind,
  rootFields,
} from "./document-shapes.ts";
import { askGraphql, type GraphqlMethod, type GraphqlSend } from "./graphql-transport.ts";
import { ARGUMENT_WORDS, FIELD_WORDS } from "./likely-names.ts";

// Asking the server what the frontend's documents leave out, without running anything. Each root field is
// sent once in a document that declares one variable it never uses: the spec's "all variables used" rule
// makes every compliant server refuse it before execution, and the same validation pass names what we
// need — the type each argument expects, the arguments it requires, whether the field returns an object
// (and its type's name), the selected fields that do not exist, or that the field itself does not. The
// documents say the field is there; the server's own errors are the second, independent word on its shape.
// Where the documents pass no argument or select nothing from an object type, likely names are tried
// (likely-names.ts): the real ones draw a typed complaint or none, the rest "unknown" (with suggestions).

export interface ShapeProbeOutcome {
  /** Root fields the server described (at least one of its validation errors was about them). */
  described: number;
  /** `query.oldField`: fields the server says do not exist (a stale frontend, a page about attacks), dropped. */
  dropped: string[];
  /** Fields the server would have run: the guard did not hold, so no further field is asked. */
  executed?: string;
  requests: number;
}

export const GUARD = "qaasNeverUsed";
/** A type no argument plausibly has, so every argument's variable is out of place and the server names it. */
const MISFIT = "[[Boolean!]!]!";
const MAX_FIELDS = 60;
const SELECTION_DEPTH = 3;
const Q = `["'\u201c\u201d]`;
const NAME = "([_A-Za-z][_0-9A-Za-z]*)";
const TYPE = "([^\"'\u201c\u201d]+)";
// graphql-core 2 drops the `$` and says "sub selection"; both generations are read.
const POSITION = new RegExp(
  `Variable ${Q}\\$?${NAME}${Q} of type ${Q}[^"']+${Q} used in position expecting type ${Q}${TYPE}${Q}`,
);
const REQUIRED = [
  new RegExp(`Field ${Q}${NAME}${Q} argument ${Q}${NAME}${Q} of type ${Q}${TYPE}${Q} is required`),
  new RegExp(
    `Argument ${Q}(?:[_A-Za-z]\\w*\\.)?${NAME}\\(${NAME}:\\)${Q} of type ${Q}${TYPE}${Q} is required`,
  ),
];
const SUBFIELDS = new RegExp(
  `Field ${Q}${NAME}${Q} of type ${Q}${TYPE}${Q} must have a (?:selection of subfields|sub selection)`,
);
const LEAF = [
  new RegExp(`Field ${Q}${NAME}${Q} must not have a selection since type ${Q}${TYPE}${Q} has no subfields`),
  new RegExp(`Field ${Q}${NAME}${Q} of type ${Q}${TYPE}${Q} must not have a sub selection`),
];
const NO_FIELD = new RegExp(`Cannot query field ${Q}${NAME}${Q} on type ${Q}${NAME}${Q}`);

/** The field a "Cannot query field" error names, or undefined for any other error. */
export function missingFieldIn(message: string): string | undefined {
  return NO_FIELD.exec(message)?.[1];
}
const UNKNOWN_ARGUMENT = new RegExp(
  `Unknown argument ${Q}${NAME}${Q} on field ${Q}(?:[_A-Za-z]\\w*\\.)?${NAME}${Q}`,
);

export async function probeShapes(
  send: GraphqlSend,
  url: string,
  methods: readonly GraphqlMethod[],
  shapes: DocumentShapes,
): Promise<ShapeProbeOutcome> {
  const outcome: ShapeProbeOutcome = { described: 0, dropped: [], requests: 0 };
  const described = new Set<FieldShape>();
  const wordsAsked = new Set<string>();
  const ask = async (kind: RootKind, field: FieldShape, names: readonly string[]) => {
    const query = shapeQuery(kind, field, names, selectionOf(shapes, field.returns, 0));
    const messages = await validationErrors(send, url, methods, query);
    outcome.requests += 1;
    if (messages === "ran") outcome.executed = `${kind}.${field.name}`;
    else if (messages && apply(shapes, kind, field, names, messages, outcome)) described.add(field);
    const type = namedOf(field.returns);
    if (outcome.executed || field.guessedReturn || !shapes.types.has(type) || wordsAsked.has(type)) return;
    wordsAsked.add(type);
    // Each object type once: likely field names (a frontend selects what it shows, not the `password`
    // beside it), asked in a document of their own (servers stop validating at a hundred errors, and the
    // guard's complaint comes last).
    const words = FIELD_WORDS.filter((word) => word !== field.name);
    const found = await validationErrors(send, url, methods, wordQuery(kind, field, words));
    outcome.requests += 1;
    if (found === "ran") outcome.executed = `${kind}.${field.name}`;
    else if (found) addFoundFields(shapes, field, words, found);
  };
  const suggested: Array<{ kind: RootKind; field: FieldShape }> = [];
  for (const { kind, field } of rootFields(shapes).slice(0, MAX_FIELDS)) {
    const guessing = field.arguments.size === 0;
    await ask(kind, field, guessing ? ARGUMENT_WORDS : [...field.arguments.keys()]);
    if (outcome.executed) break;
    // An argument the server suggested is asked once more, for its type.
    if (guessing && [...field.arguments.values()].some((argument) => argument.guessed))
      suggested.push({ kind, field });
  }
  for (const { kind, field } of suggested) {
    if (outcome.executed) break;
    await ask(kind, field, [...field.arguments.keys()]);
  }
  outcome.described = described.size;
  return outcome;
}

/** The field with each named argument given a misfit variable, bare and (for an object) with a selection. */
function shapeQuery(kind: RootKind, field: FieldShape, names: readonly string[], selection: string): string {
  const variables = names.map((_, index) => `, $a${index}: ${MISFIT}`).join("");
  const call = names.length > 0 ? `(${names.map((name, index) => `${name}: $a${index}`).join(", ")})` : "";
  // Bare, the field's type is named (or it is a leaf); with the documents' selection, the selected
  // fields that do not exist are.
  const fields = selection
    ? `qaasBare: ${field.name}${call} qaasShaped: ${field.name}${call} ${selection}`
    : `${field.name}${call}`;
  return guardedDocument(kind, fields, variables);
}

function wordQuery(kind: RootKind, field: FieldShape, words: readonly string[]): string {
  return guardedDocument(kind, `${field.name} { ${words.join(" ")} }`);
}

/**
 * The words selected on an object type that raised no error: its leaves. Only when the server visibly
 * reported the missing ones (at least half the words are missing from any real type; a server that stops
 * at its first error reports one); a word that is itself an object or needs arguments is left out, so the
 * selection stays valid.
 */
function addFoundFields(
  shapes: DocumentShapes,
  field: FieldShape,
  words: readonly string[],
  messages: readonly string[],
): void {
  const type = shapes.types.get(namedOf(field.returns));
  if (!type || field.guessedReturn) return;
  const raised = new Set<string>();
  let absent = 0;
  for (const message of messages) {
    const missing = missingFieldIn(message);
    if (missing) absent += 1;
    const named =
      missing ??
      SUBFIELDS.exec(message)?.[1] ??
      REQUIRED.map((pattern) => pattern.exec(message)).find((match) => match)?.[1];
    if (named && named !== field.name) raised.add(named);
  }
  if (absent < words.length * 0.5) return;
  for (const word of words)
    if (!raised.has(word) && !type.has(word))
      type.set(word, { name: word, arguments: new Map(), returns: "String", guessedReturn: true });
}

/**
 * `kind QaasShape($qaasNeverUsed: Boolean!…) { body }`. The guard is never used, so validation fails (the
 * spec's "all variables used"); and it is required but never given a value, so even a server that skipped
 * validation would fail coercing variables before running anything.
 */
export function guardedDocument(kind: RootKind, body: string, variables = ""): string {
  return `${kind} QaasShape($${GUARD}: Boolean!${variables}) { ${body} }`;
}

/**
 * The validation errors a guarded document drew; undefined when the answer is not a full validation (no
 * GraphQL answer, or no complaint about the guard); "ran" when the server executed it regardless.
 */
export async function validationErrors(
  send: GraphqlSend,
  url: string,
  methods: readonly GraphqlMethod[],
  query: string,
): Promise<string[] | "ran" | undefined> {
  const asked = await askGraphql(send, url, { query, operationName: "QaasShape" }, methods);
  const answer = asked?.answer;
  if (!answer) return undefined;
  if (answer.data !== undefined && answer.data !== null) return "ran";
  const messages = answer.errors.map((error) => error.message);
  return messages.some((message) => message.includes(GUARD)) ? messages : undefined;
}

/** The fields the documents select below a type, as a selection set (arguments left out). */
function selectionOf(shapes: DocumentShapes, returns: string, depth: number): string {
  const fields = shapes.types.get(namedOf(returns));
  if (!fields || fields.size === 0 || depth >= SELECTION_DEPTH) return "";
  const parts = [...fields.values()].map((field) => {
    const inner = selectionOf(shapes, field.returns, depth + 1);
    return inner ? `${field.name} ${inner}` : shapes.types.has(namedOf(field.returns)) ? "" : field.name;
  });
  const kept = parts.filter((part) => part !== "");
  return kept.length > 0 ? `{ ${kept.join(" ")} }` : "";
}

/** What the errors say about one root field, written into the shapes; true when any error was about it. */
function apply(
  shapes: DocumentShapes,
  kind: RootKind,
  field: FieldShape,
  names: readonly string[],
  messages: readonly string[],
  outcome: ShapeProbeOutcome,
): boolean {
  let described = false;
  let missing = false;
  const unknownBelow = new Set<string>();
  for (const message of messages) {
    const position = POSITION.exec(message);
    const argument = position?.[1]?.match(/^a(\d+)$/) ? names[Number(position[1].slice(1))] : undefined;
    if (argument && position?.[2]) {
      field.arguments.set(argument, { type: position[2], guessed: false });
      described = true;
      continue;
    }
    const required = REQUIRED.map((pattern) => pattern.exec(message)).find((match) => match);
    if (required?.[1] === field.name && required[2] && required[3]) {
      field.arguments.set(required[2], { type: required[3], guessed: false });
      described = true;
      continue;
    }
    const unknown = UNKNOWN_ARGUMENT.exec(message);
    if (unknown?.[2] === field.name && unknown[1]) {
      field.arguments.delete(unknown[1]);
      for (const suggestion of suggestionsIn(message))
        if (!field.arguments.has(suggestion))
          field.arguments.set(suggestion, { type: "String", guessed: true });
      described = true;
      continue;
    }
    const subfields = SUBFIELDS.exec(message);
    if (subfields?.[1] === field.name && subfields[2]) {
      renameReturn(shapes, field, subfields[2]);
      described = true;
      continue;
    }
    const leaf = LEAF.map((pattern) => pattern.exec(message)).find((match) => match);
    if (leaf?.[1] === field.name && leaf[2]) {
      field.returns = leaf[2];
      field.guessedReturn = false;
      described = true;
      continue;
    }
    const absent = NO_FIELD.exec(message);
    if (absent?.[1] === field.name) missing = true;
    else if (absent?.[1]) unknownBelow.add(absent[1]);
  }
  // A field of the same name further down may be the one missing: the root is gone only when nothing
  // else was said about it.
  if (missing && !described) {
    shapes.types.get(shapes.roots[kind] ?? "")?.delete(field.name);
    outcome.dropped.push(`${kind}.${field.name}`);
    return true;
  }
  if (unknownBelow.size > 0) {
    dropBelow(shapes, field.returns, unknownBelow, new Set());
    described = true;
  }
  return described;
}

/** The quoted names after "Did you mean" (`"a", "b", or "c"?`). */
export function suggestionsIn(message: string): string[] {
  const tail = message.split(/Did you mean/i)[1];
  if (!tail) return [];
  return [...tail.matchAll(/["'\u201c]([_A-Za-z]\w*)["'\u201d]/g)]
    .map((match) => match[1] ?? "")
    .filter(Boolean);
}

function dropBelow(
  shapes: DocumentShapes,
  returns: string,
  names: ReadonlySet<string>,
  seen: Set<string>,
): void {
  const typeName = namedOf(returns);
  const fields = shapes.types.get(typeName);
  if (!fields || seen.has(typeName)) return;
  seen.add(typeName);
  for (const name of names) fields.delete(name);
  for (const field of fields.values()) dropBelow(shapes, field.returns, names, seen);
}

/** The field returns `typeReference`: its guessed object type takes the server's name (merged if known). */
function renameReturn(shapes: DocumentShapes, field: FieldShape, typeReference: string): void {
  const guessed = namedOf(field.returns);
  const real = namedOf(typeReference);
  field.returns = typeReference;
  field.guessedReturn = false;
  if (guessed === real) return;
  const merged = shapes.types.get(real) ?? new Map<string, FieldShape>();
  shapes.types.set(real, merged);
  const fields = shapes.types.get(guessed);
  if (!fields) return;
  for (const [name, shape] of fields) if (!merged.has(name)) merged.set(name, shape);
  shapes.types.set(real, merged);
  const stillUsed = [...shapes.types.values()].some((type) =>
    [...type.values()].some((other) => other !== field && namedOf(other.returns) === guessed),
  );
  if (!stillUsed) shapes.types.delete(guessed);
}
