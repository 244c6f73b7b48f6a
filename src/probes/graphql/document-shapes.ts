import {
  type ArgumentNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  print,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";

// The part of a schema a set of client operations shows: root fields with their arguments, and the fields
// selected below them. Types the documents do not name (a selection's object type, a literal argument's
// type) are guessed and marked so; the server's validation errors may correct them (`probe-shapes.ts`).

export type RootKind = "query" | "mutation" | "subscription";

export interface ArgumentShape {
  type: string;
  /** Inferred from a literal; a variable's declared type is the author's, not a guess. */
  guessed: boolean;
}

export interface FieldShape {
  name: string;
  arguments: Map<string, ArgumentShape>;
  /** A type reference (`[Paste!]`, `String`); an object type the documents never name has a made-up name. */
  returns: string;
  /** True while `returns` is made up (a guessed leaf is `String`, a guessed object named after its field). */
  guessedReturn: boolean;
}

export interface DocumentShapes {
  roots: Partial<Record<RootKind, string>>;
  types: Map<string, Map<string, FieldShape>>;
}

const ROOT_NAMES: Record<RootKind, string> = {
  query: "Query",
  mutation: "Mutation",
  subscription: "Subscription",
};

export function shapesFromDocuments(documents: readonly DocumentNode[]): DocumentShapes {
  const shapes: DocumentShapes = { roots: {}, types: new Map() };
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const document of documents)
    for (const definition of document.definitions)
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const inputNames = new Set<string>();
  for (const document of documents)
    for (const definition of document.definitions)
      if (definition.kind === Kind.OPERATION_DEFINITION)
        for (const variable of definition.variableDefinitions ?? [])
          inputNames.add(namedOf(print(variable.type)));

  const typeOf = (name: string) => {
    let type = shapes.types.get(name);
    if (!type) {
      type = new Map();
      shapes.types.set(name, type);
    }
    return type;
  };
  const objectName = (field: string) => {
    const base = `${field[0]?.toUpperCase() ?? "X"}${field.slice(1)}`;
    const taken = inputNames.has(base) || Object.values(ROOT_NAMES).includes(base);
    return taken ? `${base}Object` : base;
  };

  const walk = (
    selection: SelectionSetNode,
    typeName: string,
    variables: ReadonlyMap<string, string>,
    depth: number,
  ) => {
    if (depth > 12) return;
    const type = typeOf(typeName);
    for (const node of selection.selections) {
      if (node.kind === Kind.FIELD) {
        const name = node.name.value;
        if (name.startsWith("__")) continue;
        const field = type.get(name) ?? {
          name,
          arguments: new Map<string, ArgumentShape>(),
          returns: "String",
          guessedReturn: true,
        };
        type.set(name, field);
        for (const argument of node.arguments ?? []) {
          const shape = argumentShape(argument, variables);
          const known = field.arguments.get(argument.name.value);
          if (!known || (known.guessed && !shape.guessed)) field.arguments.set(argument.name.value, shape);
        }
        if (node.selectionSet) {
          const condition = typeCondition(node.selectionSet, fragments);
          if (field.guessedReturn && (field.returns === "String" || condition))
            field.returns = condition ?? objectName(name);
          walk(node.selectionSet, namedOf(field.returns), variables, depth + 1);
        }
      } else {
        const fragment = node.kind === Kind.INLINE_FRAGMENT ? node : fragments.get(node.name.value);
        if (!fragment) continue;
        const condition = fragment.typeCondition?.name.value;
        walk(
          fragment.selectionSet,
          condition && condition !== typeName ? condition : typeName,
          variables,
          depth + 1,
        );
      }
    }
  };

  for (const document of documents)
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
      const root = ROOT_NAMES[definition.operation];
      shapes.roots[definition.operation] = root;
      walk(definition.selectionSet, root, variablesOf(definition), 0);
    }
  return shapes;
}

/** The shapes as SDL, leaves and unknown named types left for the SDL reader to declare as scalars. */
export function sdlOfShapes(shapes: DocumentShapes): string {
  const blocks: string[] = [];
  const roots = Object.entries(shapes.roots).map(([kind, name]) => `${kind}: ${name}`);
  if (roots.length > 0) blocks.push(`schema { ${roots.join(" ")} }`);
  const rootNames = new Set(Object.values(shapes.roots));
  for (const [name, fields] of shapes.types) {
    if (fields.size === 0) {
      // An object type whose fields nothing named: `__typename` keeps it an object, selectable as one.
      if (!rootNames.has(name)) blocks.push(`type ${name} { __typename: String }`);
      continue;
    }
    const lines = [...fields.values()].map((field) => {
      const args = [...field.arguments].map(([argument, shape]) => `${argument}: ${shape.type}`);
      return `  ${field.name}${args.length > 0 ? `(${args.join(", ")})` : ""}: ${field.returns}`;
    });
    blocks.push(`type ${name} {\n${lines.join("\n")}\n}`);
  }
  return blocks.join("\n\n");
}

/** Fields of every root type, the way they will be mapped as operations. */
export function rootFields(shapes: DocumentShapes): Array<{ kind: RootKind; field: FieldShape }> {
  return (Object.entries(shapes.roots) as Array<[RootKind, string]>).flatMap(([kind, name]) =>
    [...(shapes.types.get(name)?.values() ?? [])].map((field) => ({ kind, field })),
  );
}

export function namedOf(typeReference: string): string {
  return typeReference.replace(/[[\]!\s]/g, "");
}

function variablesOf(operation: OperationDefinitionNode): Map<string, string> {
  return new Map(
    (operation.variableDefinitions ?? []).map((variable) => [
      variable.variable.name.value,
      print(variable.type),
    ]),
  );
}

function argumentShape(argument: ArgumentNode, variables: ReadonlyMap<string, string>): ArgumentShape {
  const value = argument.value;
  if (value.kind === Kind.VARIABLE) {
    const declared = variables.get(value.name.value);
    if (declared) return { type: declared, guessed: false };
  }
  return { type: literalType(value), guessed: true };
}

function literalType(value: ValueNode): string {
  switch (value.kind) {
    case Kind.INT:
      return "Int";
    case Kind.FLOAT:
      return "Float";
    case Kind.BOOLEAN:
      return "Boolean";
    case Kind.LIST:
      return `[${value.values[0] ? literalType(value.values[0]) : "String"}]`;
    default:
      return "String";
  }
}

/** The object type a selection names, when it is spelled out as one fragment spread or inline fragment. */
function typeCondition(
  selection: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): string | undefined {
  if (selection.selections.length !== 1) return undefined;
  const only = selection.selections[0];
  if (only?.kind === Kind.INLINE_FRAGMENT) return only.typeCondition?.name.value;
  if (only?.kind === Kind.FRAGMENT_SPREAD) return fragments.get(only.name.value)?.typeCondition.name.value;
  return undefined;
}
