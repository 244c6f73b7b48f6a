import type { IntrospectionField, IntrospectionSchema, IntrospectionType } from "graphql";
import type { OperationCandidate } from "../../map/inventory.ts";
import type { GraphqlOperation } from "../../map/system-map.ts";
import { argumentsSchema } from "./arguments-schema.ts";
import {
  fieldsOf,
  isLeafKind,
  isRequiredInput,
  namedTypeOf,
  rootTypeNames,
  typeIndex,
  typeString,
} from "./type-refs.ts";

// Every root field of a schema as one operation of the inventory: `POST <endpoint>` carrying the field, its
// typed arguments, a one-level selection of its return type, and the JSON Schema of its variables.

const KINDS = ["query", "mutation", "subscription"] as const;

/** One candidate per root query, mutation and subscription field, sent to `path`. */
export function operationsFromSchema(schema: IntrospectionSchema, path: string): OperationCandidate[] {
  const types = typeIndex(schema);
  const roots = rootTypeNames(schema);
  const candidates: OperationCandidate[] = [];
  for (const kind of KINDS) {
    const rootName = roots[kind];
    const root = rootName ? types.get(rootName) : undefined;
    for (const field of fieldsOf(root)) {
      if (field.name.startsWith("__")) continue;
      const graphql = graphqlOperationOf(kind, field, types);
      candidates.push({
        method: "POST",
        path,
        provenance: "graphql",
        graphql,
        request_body: {
          content_type: "application/json",
          required: graphql.arguments.some((argument) => argument.required),
          schema: argumentsSchema(field.args ?? [], types),
        },
      });
    }
  }
  return candidates;
}

export function graphqlOperationOf(
  kind: GraphqlOperation["kind"],
  field: IntrospectionField,
  types: ReadonlyMap<string, IntrospectionType>,
): GraphqlOperation {
  const returns = namedTypeOf(field.type);
  return {
    kind,
    field: field.name,
    arguments: (field.args ?? []).map((argument) => ({
      name: argument.name,
      type: typeString(argument.type),
      required: isRequiredInput(argument),
    })),
    returns,
    selection: selectionFor(returns, types),
  };
}

/**
 * `{ id title }`: the return type's scalar and enum fields that need no argument. A composite type with
 * none (or a union) asks for `__typename`, so the document stays valid; a leaf return needs no selection.
 */
export function selectionFor(
  typeName: string | undefined,
  types: ReadonlyMap<string, IntrospectionType>,
): string {
  const type = typeName ? types.get(typeName) : undefined;
  if (!type) return typeName && isBuiltinScalar(typeName) ? "" : typeName ? "{ __typename }" : "";
  if (isLeafKind(type.kind)) return "";
  const leaves = fieldsOf(type)
    .filter((field) => !field.name.startsWith("__"))
    .filter((field) => isLeafKind(types.get(namedTypeOf(field.type) ?? "")?.kind ?? leafGuess(field)))
    .filter((field) => !(field.args ?? []).some(isRequiredInput))
    .map((field) => field.name);
  return leaves.length > 0 ? `{ ${leaves.join(" ")} }` : "{ __typename }";
}

function isBuiltinScalar(name: string): boolean {
  return ["ID", "String", "Int", "Float", "Boolean"].includes(name);
}

/** A field whose type the answer did not describe is a leaf only when it is a built-in scalar. */
function leafGuess(field: IntrospectionField): string | undefined {
  const name = namedTypeOf(field.type);
  return name && isBuiltinScalar(name) ? "SCALAR" : undefined;
}
