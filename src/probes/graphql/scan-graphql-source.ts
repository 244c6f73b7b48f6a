import path from "node:path";
import type { DocumentNode } from "graphql";
import { listSourceFiles, readSource, type SourceTreeOptions } from "../routes/source-tree.ts";
import { graphqlDocumentsInText } from "./documents-in-text.ts";
import { type SdlFragment, type SdlSchema, schemaFromSdl } from "./sdl-schema.ts";
import { endpointsInFile, type SourceEndpoint } from "./source-endpoints.ts";

// What a target's source says about GraphQL: the endpoints it mounts and the schema it declares in SDL
// (`.graphql` files, `gql`/`graphql` tagged templates, `buildSchema(...)`, `typeDefs` strings, Python
// triple-quoted strings handed to ariadne or graphql-core). Code-first schemas (graphene classes,
// strawberry decorators, Nexus, TypeGraphQL) leave no SDL: introspection covers them on a live target,
// and the client operations a repository's frontend holds (`documents`) sketch them when it is refused.

export interface GraphqlSourceScan {
  endpoints: SourceEndpoint[];
  sdl: SdlSchema | undefined;
  /** Client operations and fragments (queries a frontend in the same repository sends). */
  documents: DocumentNode[];
  files: number;
  notes: string[];
}

const EXTENSIONS = new Set([
  ".js",
  ".mjs",
  ".cjs",
  ".jsx",
  ".ts",
  ".mts",
  ".cts",
  ".tsx",
  ".py",
  ".graphql",
  ".graphqls",
  ".gql",
]);
const SDL_FILE = /\.(?:graphqls?|gql)$/;
/** A string worth parsing as SDL: it declares a type, input, interface or enum with a body. */
const SDL_HINT = /\b(?:type|input|interface|enum)\s+[_A-Za-z]\w*[^{}]*\{/;
const EMBEDDING_FILE =
  /\bgql\b|graphql|typeDefs|type_defs|buildSchema|make_executable_schema|makeExecutableSchema/i;

export function scanGraphqlSource(root: string, options: SourceTreeOptions = {}): GraphqlSourceScan {
  const tree = listSourceFiles(root, EXTENSIONS, options);
  const endpoints: SourceEndpoint[] = [];
  const fragments: SdlFragment[] = [];
  const documents: DocumentNode[] = [];
  const notes: string[] = [];
  for (const relative of tree.files) {
    const text = readSource(root, relative);
    if (text === undefined) continue;
    endpoints.push(...endpointsInFile(relative, text));
    fragments.push(...sdlFragmentsInFile(relative, text));
    if (SDL_FILE.test(relative) || EMBEDDING_FILE.test(text)) documents.push(...graphqlDocumentsInText(text));
  }
  if (tree.truncated) notes.push(`GraphQL source scan stopped after ${tree.files.length} files`);
  const sdlNotes: string[] = [];
  const sdl = fragments.length > 0 ? schemaFromSdl(fragments, sdlNotes) : undefined;
  notes.push(...sdlNotes);
  if (fragments.length > 0 && !sdl && sdlNotes.length === 0)
    notes.push("SDL-like strings were found in the source but none defined root fields");
  return { endpoints: dedupeEndpoints(endpoints), sdl, documents, files: tree.files.length, notes };
}

/** The SDL a file holds: all of a `.graphql` file, else the embedded strings that look like type definitions. */
export function sdlFragmentsInFile(relative: string, text: string): SdlFragment[] {
  if (SDL_FILE.test(relative)) return [{ origin: relative, text }];
  if (!EMBEDDING_FILE.test(text)) return [];
  const strings = path.extname(relative) === ".py" ? pythonStrings(text) : templateLiterals(text);
  return strings
    .filter((entry) => SDL_HINT.test(entry.text))
    .map((entry) => ({ origin: `${relative}:${entry.line}`, text: entry.text }));
}

/** JavaScript template literals, interpolations (`${fragment}`) dropped. */
function templateLiterals(text: string): Array<{ text: string; line: number }> {
  const found: Array<{ text: string; line: number }> = [];
  for (const match of text.matchAll(/`((?:[^`\\]|\\[\s\S])*)`/g)) {
    const body = (match[1] ?? "").replace(/\$\{[^}]*\}/g, "");
    found.push({ text: body, line: lineAt(text, match.index ?? 0) });
  }
  return found;
}

/** Python triple-quoted strings (SDL is multi-line; one-line strings are never a schema). */
function pythonStrings(text: string): Array<{ text: string; line: number }> {
  const found: Array<{ text: string; line: number }> = [];
  for (const match of text.matchAll(/[rRuU]?("""|''')([\s\S]*?)\1/g))
    found.push({ text: match[2] ?? "", line: lineAt(text, match.index ?? 0) });
  return found;
}

function lineAt(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/** Library code copied into the tree: its mounts are real but say less than the application's own. */
const VENDORED = /(^|\/)(_?vendor(ed)?|third[_-]?party|extern(al)?)(\/|$)/i;

/** One endpoint per path, the application's own mount preferred over a copied library's. */
function dedupeEndpoints(endpoints: SourceEndpoint[]): SourceEndpoint[] {
  const seen = new Set<string>();
  const ordered = [...endpoints].sort(
    (a, b) => Number(VENDORED.test(a.file)) - Number(VENDORED.test(b.file)),
  );
  return ordered.filter((endpoint) => {
    if (seen.has(endpoint.path)) return false;
    seen.add(endpoint.path);
    return true;
  });
}
