import {
  buildASTSchema,
  type DefinitionNode,
  type DocumentNode,
  type IntrospectionSchema,
  introspectionFromSchema,
  Kind,
  type NamedTypeNode,
  parse,
  visit,
} from "graphql";

// A schema from SDL fragments as projects really write them: split over files and template literals,
// `extend type Query` without a base `type Query`, the same type declared in two modules, custom scalars
// and federation types declared elsewhere. Fragments are merged leniently (the server validated them; we
// only need their shape) and the result is read back as an introspection `__schema`.

export interface SdlFragment {
  /** Where it came from (`schema.graphql`, `src/server.js:12`), for notes. */
  origin: string;
  text: string;
}

export interface SdlSchema {
  schema: IntrospectionSchema;
  /** Fragments that held type definitions and were used. */
  used: string[];
}

const TYPE_SYSTEM = new Set<string>([
  Kind.SCHEMA_DEFINITION,
  Kind.SCALAR_TYPE_DEFINITION,
  Kind.OBJECT_TYPE_DEFINITION,
  Kind.INTERFACE_TYPE_DEFINITION,
  Kind.UNION_TYPE_DEFINITION,
  Kind.ENUM_TYPE_DEFINITION,
  Kind.INPUT_OBJECT_TYPE_DEFINITION,
  Kind.DIRECTIVE_DEFINITION,
  Kind.SCHEMA_EXTENSION,
  Kind.SCALAR_TYPE_EXTENSION,
  Kind.OBJECT_TYPE_EXTENSION,
  Kind.INTERFACE_TYPE_EXTENSION,
  Kind.UNION_TYPE_EXTENSION,
  Kind.ENUM_TYPE_EXTENSION,
  Kind.INPUT_OBJECT_TYPE_EXTENSION,
]);

const EXTENSION_TO_DEFINITION: Record<string, string> = {
  [Kind.OBJECT_TYPE_EXTENSION]: Kind.OBJECT_TYPE_DEFINITION,
  [Kind.INTERFACE_TYPE_EXTENSION]: Kind.INTERFACE_TYPE_DEFINITION,
  [Kind.INPUT_OBJECT_TYPE_EXTENSION]: Kind.INPUT_OBJECT_TYPE_DEFINITION,
  [Kind.ENUM_TYPE_EXTENSION]: Kind.ENUM_TYPE_DEFINITION,
  [Kind.UNION_TYPE_EXTENSION]: Kind.UNION_TYPE_DEFINITION,
  [Kind.SCALAR_TYPE_EXTENSION]: Kind.SCALAR_TYPE_DEFINITION,
};

const BUILT_IN = new Set(["String", "Int", "Float", "Boolean", "ID"]);

/** The type-system definitions of one fragment, or undefined when it is not SDL (a client query, not GraphQL). */
export function typeDefinitionsOf(text: string): DefinitionNode[] | undefined {
  let document: DocumentNode;
  try {
    document = parse(text, { noLocation: true });
  } catch {
    return undefined;
  }
  const definitions = document.definitions.filter((definition) => TYPE_SYSTEM.has(definition.kind));
  return definitions.length > 0 ? definitions : undefined;
}

/**
 * Merges fragments into one schema with a query root, or undefined when none defines root fields (why, when
 * it is not simply that there was no SDL, goes into `notes`).
 */
export function schemaFromSdl(
  fragments: readonly SdlFragment[],
  notes: string[] = [],
): SdlSchema | undefined {
  const used: string[] = [];
  const definitions: DefinitionNode[] = [];
  for (const fragment of fragments) {
    const found = typeDefinitionsOf(fragment.text);
    if (!found) continue;
    used.push(fragment.origin);
    definitions.push(...found);
  }
  if (definitions.length === 0) return undefined;
  const merged = mergeDefinitions(definitions);
  const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [...merged, ...missingTypes(merged)] };
  try {
    const schema = buildASTSchema(document, { assumeValid: true, assumeValidSDL: true });
    if (!schema.getQueryType() && !schema.getMutationType()) return undefined;
    return { schema: introspectionFromSchema(schema).__schema, used };
  } catch (error) {
    notes.push(
      `SDL found in ${used.join(", ")} but not built: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}

type Named = DefinitionNode & {
  name: { value: string };
  fields?: readonly unknown[];
  values?: readonly unknown[];
  types?: readonly unknown[];
};

/**
 * One definition per type name: duplicates and extensions fold into the first definition (fields, enum
 * values, union members and input fields appended once each), and an extension with no base becomes one.
 */
function mergeDefinitions(definitions: readonly DefinitionNode[]): DefinitionNode[] {
  const byName = new Map<string, Named>();
  const others: DefinitionNode[] = [];
  for (const definition of definitions) {
    const name = (definition as Partial<Named>).name?.value;
    const baseKind = EXTENSION_TO_DEFINITION[definition.kind] ?? definition.kind;
    if (!name || definition.kind === Kind.DIRECTIVE_DEFINITION || !baseKind.endsWith("Definition")) {
      others.push(definition);
      continue;
    }
    const existing = byName.get(name);
    if (!existing) {
      byName.set(name, { ...(definition as Named), kind: baseKind } as Named);
      continue;
    }
    byName.set(name, {
      ...existing,
      ...(existing.fields || (definition as Named).fields
        ? { fields: unionByName(existing.fields, (definition as Named).fields) }
        : {}),
      ...(existing.values || (definition as Named).values
        ? { values: unionByName(existing.values, (definition as Named).values) }
        : {}),
      ...(existing.types || (definition as Named).types
        ? { types: unionByName(existing.types, (definition as Named).types) }
        : {}),
    } as Named);
  }
  // Extensions of the schema itself only matter when there is a base schema definition to extend.
  const schemaDefinitions = others
    .filter((definition) => definition.kind === Kind.SCHEMA_DEFINITION)
    .slice(0, 1);
  const rest = others.filter(
    (definition) => definition.kind !== Kind.SCHEMA_DEFINITION && definition.kind !== Kind.SCHEMA_EXTENSION,
  );
  const directives = uniqueDirectives(rest);
  return [...schemaDefinitions, ...byName.values(), ...directives];
}

function unionByName(
  first: readonly unknown[] | undefined,
  second: readonly unknown[] | undefined,
): unknown[] {
  const seen = new Set<string>();
  const merged: unknown[] = [];
  for (const item of [...(first ?? []), ...(second ?? [])]) {
    const name = (item as { name?: { value?: string } }).name?.value ?? JSON.stringify(item);
    if (seen.has(name)) continue;
    seen.add(name);
    merged.push(item);
  }
  return merged;
}

function uniqueDirectives(definitions: readonly DefinitionNode[]): DefinitionNode[] {
  const seen = new Set<string>();
  return definitions.filter((definition) => {
    const name = (definition as Partial<Named>).name?.value ?? "";
    if (seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/**
 * Types referenced but declared nowhere (a scalar added in code, a federated type) are declared: as an
 * interface where something implements them, an object where a union lists them, else a scalar.
 */
function missingTypes(definitions: readonly DefinitionNode[]): DefinitionNode[] {
  const declared = new Set(
    definitions
      .map((definition) => (definition as Partial<Named>).name?.value)
      .filter((name) => name !== undefined),
  );
  const missing = new Map<string, string>();
  const note = (name: string, kind: string) => {
    if (declared.has(name) || BUILT_IN.has(name)) return;
    if (kind !== Kind.SCALAR_TYPE_DEFINITION || !missing.has(name)) missing.set(name, kind);
  };
  for (const definition of definitions) {
    const record = definition as { interfaces?: readonly NamedTypeNode[]; types?: readonly NamedTypeNode[] };
    for (const node of record.interfaces ?? []) note(node.name.value, Kind.INTERFACE_TYPE_DEFINITION);
    if (definition.kind === Kind.UNION_TYPE_DEFINITION)
      for (const node of record.types ?? []) note(node.name.value, Kind.OBJECT_TYPE_DEFINITION);
    visit(definition, {
      NamedType(node: NamedTypeNode) {
        note(node.name.value, Kind.SCALAR_TYPE_DEFINITION);
      },
    });
  }
  return [...missing].map(
    ([name, kind]) =>
      ({ kind, name: { kind: Kind.NAME, value: name }, fields: [] }) as unknown as DefinitionNode,
  );
}
