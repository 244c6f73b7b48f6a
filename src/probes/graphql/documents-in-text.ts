import { type DefinitionNode, type DocumentNode, Kind, parse } from "graphql";

// The GraphQL operations an application's own frontend sends, read out of what it serves or ships: template
// literals in an inline script, strings in a minified bundle (JSON-escaped, as a precompiled `gql` keeps
// them in `loc.source.body`), a URL-encoded `?query=` in a link. When introspection is refused these are
// the best account of the API there is: every one was written against the real schema.

/** Where a document starts with its keyword: an operation with a body, or a fragment. */
const KEYWORD_START =
  /(?:\b|(?<=\\[ntr]))(?:(?:query|mutation|subscription)\b(?=\s*(?:[_A-Za-z]\w*\s*)?[({@])|fragment\s+[_A-Za-z]\w*\s+on\s+[_A-Za-z]\w*\s*\{)/g;
/** An anonymous `{ … }` only where a `gql`/`graphql` tag or a `query` key or parameter holds it. */
const ANONYMOUS_START =
  /(?:\b(?:gql|graphql)\s*\(?\s*[`'"]|\bquery\\?["']?\s*[:=]\s*\\?[`'"])\s*(?=\{\s*[_A-Za-z])/g;
const URL_QUERY = /[?&]query=([^&"'`<>\s][^&"'`<>]{0,4000})/g;
const MAX_DOCUMENT = 20_000;
const MAX_DOCUMENTS = 200;

/** Parsed documents holding at least one operation or fragment, each once. */
export function graphqlDocumentsInText(text: string): DocumentNode[] {
  const seen = new Set<string>();
  const documents: DocumentNode[] = [];
  const consider = (source: string) => {
    for (const { candidate, keyword } of candidatesIn(source)) {
      if (documents.length >= MAX_DOCUMENTS) return;
      const document = parseExecutable(candidate);
      if (!document || (keyword && !document.definitions.some(looksWritten))) continue;
      const key = candidate.replace(/\s+/g, " ").trim();
      if (seen.has(key)) continue;
      seen.add(key);
      documents.push(document);
    }
  };
  const plain = withoutInterpolations(text);
  consider(plain);
  for (const match of plain.matchAll(URL_QUERY)) {
    const decoded = decodeQuery(match[1] ?? "");
    if (decoded) consider(decoded.startsWith("{") ? `query ${decoded}` : decoded);
  }
  return documents;
}

/**
 * `${…}` stands for a value the script fills in (`pastes(public: ${flag})`, `"${title}"`): `0` keeps the
 * document parseable in both places; the argument's real type is the server's to say.
 */
function withoutInterpolations(text: string): string {
  let previous: string;
  let current = text;
  do {
    previous = current;
    current = current.replace(/\$\{[^{}]{0,200}\}/g, "0");
  } while (current !== previous);
  return current;
}

/** Each start's text up to the brace that closes its first body; `keyword`: found by its keyword alone. */
function* candidatesIn(text: string): Generator<{ candidate: string; keyword: boolean }> {
  const starts = [
    ...[...text.matchAll(KEYWORD_START)].map((match) => ({ from: match.index ?? 0, keyword: true })),
    ...[...text.matchAll(ANONYMOUS_START)].map((match) => ({
      from: (match.index ?? 0) + match[0].length,
      keyword: false,
    })),
  ];
  for (const { from, keyword } of starts) {
    const end = closingBrace(text, from);
    if (end !== undefined) yield { candidate: text.slice(from, end + 1), keyword };
  }
}

/**
 * Prose says "the query {docs}" too; a document a program sends has a name, variables, arguments or a
 * nested selection somewhere. A fragment always has a name.
 */
function looksWritten(definition: DefinitionNode): boolean {
  if (definition.kind !== Kind.OPERATION_DEFINITION) return true;
  if (definition.name || (definition.variableDefinitions ?? []).length > 0) return true;
  return definition.selectionSet.selections.some(
    (selection) =>
      selection.kind !== Kind.FIELD ||
      (selection.arguments ?? []).length > 0 ||
      selection.selectionSet !== undefined,
  );
}

function closingBrace(text: string, from: number): number | undefined {
  let depth = 0;
  const limit = Math.min(text.length, from + MAX_DOCUMENT);
  for (let index = from; index < limit; index += 1) {
    const char = text[index];
    if (char === "{") depth += 1;
    else if (char === "}") {
      depth -= 1;
      if (depth === 0) return index;
      if (depth < 0) return undefined;
    }
  }
  return undefined;
}

/** The text as GraphQL, or as the JavaScript/JSON string it sits in, unescaped. */
function parseExecutable(candidate: string): DocumentNode | undefined {
  for (const text of [candidate, unescapeString(candidate)]) {
    try {
      const document = parse(text, { noLocation: true });
      const executable = document.definitions.every(
        (definition) =>
          definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION,
      );
      if (executable && document.definitions.length > 0) return document;
    } catch {
      // not GraphQL in this form
    }
  }
  return undefined;
}

function unescapeString(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])/g, (_, sequence: string) => {
    if (sequence.length > 1) return String.fromCharCode(Number.parseInt(sequence.slice(1), 16));
    return { n: "\n", r: "\r", t: "\t", b: "", f: "" }[sequence] ?? sequence;
  });
}

function decodeQuery(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, " ")).trim();
  } catch {
    return undefined;
  }
}
