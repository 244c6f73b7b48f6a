import { type DocumentShapes, type RootKind, rootFields } from "./document-shapes.ts";
import type { GraphqlMethod, GraphqlSend } from "./graphql-transport.ts";
import { COMMON_ROOT_FIELDS, ROOT_SUFFIXES, ROOT_VERBS } from "./likely-names.ts";
import { guardedDocument, missingFieldIn, suggestionsIn, validationErrors } from "./probe-shapes.ts";

// Root fields no page sends, found the way a server with suggestions on gives them away: a guarded document
// (nothing runs, see probe-shapes.ts) selects a batch of likely names; the server answers "Cannot query
// field "x" on type "Query". Did you mean "y"?" for each one it lacks, naming its own fields that are close.
// A suggestion is the server's word that the field exists. A name the server raised no error about exists
// too, but only where the server visibly reported every missing name in the batch.

export interface FieldDiscovery {
  /** `query.systemDebug`: fields added to the shapes. */
  found: string[];
  requests: number;
}

const BATCH = 40;
const MAX_CANDIDATES = 240;

/**
 * Adds to `shapes` the root fields the server suggests, and the asked names it raised no error about;
 * a server that neither suggests nor reports every missing name adds nothing.
 */
export async function discoverRootFields(
  send: GraphqlSend,
  url: string,
  methods: readonly GraphqlMethod[],
  shapes: DocumentShapes,
): Promise<FieldDiscovery> {
  const discovery: FieldDiscovery = { found: [], requests: 0 };
  for (const kind of ["query", "mutation"] as const) {
    const rootName = shapes.roots[kind] ?? (kind === "query" ? "Query" : "Mutation");
    const known = new Set(shapes.types.get(rootName)?.keys() ?? []);
    // A query's nouns name the mutations too (`pastes` → `createPaste`).
    const everyRootField = rootFields(shapes).map(({ field }) => field.name);
    const candidates = candidatesFor(everyRootField, known);
    for (let start = 0; start < candidates.length; start += BATCH) {
      const batch = candidates.slice(start, start + BATCH);
      const messages = await validationErrors(send, url, methods, guardedDocument(kind, batch.join(" ")));
      discovery.requests += 1;
      if (!messages || messages === "ran") return discovery;
      const missing = new Set<string>();
      const named = new Set<string>();
      for (const message of messages) {
        const absent = missingFieldIn(message);
        if (!absent) continue;
        missing.add(absent);
        for (const suggestion of suggestionsIn(message)) named.add(suggestion);
      }
      // Every missing name reported: the unreported ones are real fields (a leaf needing nothing raises none).
      const complete = missing.size >= batch.length * 0.7;
      const present = complete ? batch.filter((name) => !missing.has(name)) : [];
      for (const name of [...named, ...present]) {
        if (known.has(name)) continue;
        known.add(name);
        addRootField(shapes, kind, rootName, name);
        discovery.found.push(`${kind}.${name}`);
      }
    }
  }
  return discovery;
}

/** The known fields' stems under the usual verbs and their prefixes with usual endings, then common names. */
function candidatesFor(seen: readonly string[], known: ReadonlySet<string>): string[] {
  const names = new Set<string>();
  for (const field of seen) {
    const stem = field.replace(
      /^(?:create|update|edit|delete|remove|get|list|all|import|upload)(?=[A-Z])/,
      "",
    );
    const noun = `${stem.charAt(0).toUpperCase()}${stem.slice(1)}`;
    const singular = noun.replace(/s$/, "");
    for (const verb of ROOT_VERBS) {
      names.add(`${verb}${singular}`);
      names.add(`${verb}${singular}s`);
    }
    names.add(`${stem.charAt(0).toLowerCase()}${stem.slice(1)}`);
    const prefix = /^[a-z]+(?=[A-Z])/.exec(field)?.[0];
    if (prefix && prefix.length >= 4) for (const suffix of ROOT_SUFFIXES) names.add(`${prefix}${suffix}`);
  }
  // Many known fields make many derived names: the common ones keep their place within the cap.
  const common = COMMON_ROOT_FIELDS.filter((name) => !known.has(name));
  const derived = [...names].filter((name) => !known.has(name) && !common.includes(name));
  return [...derived.slice(0, Math.max(0, MAX_CANDIDATES - common.length)), ...common];
}

function addRootField(shapes: DocumentShapes, kind: RootKind, rootName: string, name: string): void {
  shapes.roots[kind] = rootName;
  let root = shapes.types.get(rootName);
  if (!root) {
    root = new Map();
    shapes.types.set(rootName, root);
  }
  root.set(name, { name, arguments: new Map(), returns: "String", guessedReturn: true });
}
