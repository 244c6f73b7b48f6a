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

/** Nested fields (or union members) a selection spells out when the type itself has no leaves. */
const MAX_NESTED = 5;

/**
 * `{ id title }`: the return type's scalar and enum fields that need no argument; a leaf return needs no
 * selection. A payload type with no leaves of its own (`CreatePaste { paste: Paste }`) selects its object
 * fields' leaves one level down, a union each member's leaves; failing that, `__typename` keeps the
 * document valid.
 */
export function selectionFor(
  typeName: string | undefined,
  types: ReadonlyMap<string, IntrospectionType>,
): string {
  const type = typeName ? types.get(typeName) : undefined;
  if (!type) return typeName && isBuiltinScalar(typeName) ? "" : typeName ? "{ __typename }" : "";
  if (isLeafKind(type.kind)) return "";
  if (type.kind === "UNION") {
    const members = (type.possibleTypes ?? []).slice(0, MAX_NESTED).flatMap((member) => {
      const leaves = leafFields(types.get(member.name), types);
      return leaves.length > 0 ? [`... on ${member.name} { ${leaves.join(" ")} }`] : [];
    });
    return `{ __typename${members.length > 0 ? ` ${members.join(" ")}` : ""} }`;
  }
  const leaves = leafFields(type, types);
  if (leaves.length > 0) return `{ ${leaves.join(" ")} }`;
  const nested = usableFields(type)
    .flatMap((field) => {
      const inner = leafFields(types.get(namedTypeOf(field.type) ?? ""), types);
      return inner.length > 0 ? [`${field.name} { ${inner.join(" ")} }`] : [];
    })
    .slice(0, MAX_NESTED);
  return nested.length > 0 ? `{ ${nested.join(" ")} }` : "{ __typename }";
}

function leafFields(
  type: IntrospectionType | undefined,
  types: ReadonlyMap<string, IntrospectionType>,
): string[] {
  return usableFields(type)
    .filter((field) => isLeafKind(types.get(namedTypeOf(field.type) ?? "")?.kind ?? leafGuess(field)))
    .map((field) => field.name);
}

/** Fields that can be selected without arguments. */
function usableFields(type: IntrospectionType | undefined): IntrospectionField[] {
  return fieldsOf(type).filter(
    (field) => !field.name.startsWith("__") && !(field.args ?? []).some(isRequiredInput),
  );
}

function isBuiltinScalar(name: string): boolean {
  return ["ID", "String", "Int", "Float", "Boolean"].includes(name);
}

/** A field whose type the answer did not describe is a leaf only when it is a built-in scalar. */
function leafGuess(field: IntrospectionField): string | undefined {
  const name = namedTypeOf(field.type);
  return name && isBuiltinScalar(name) ? "SCALAR" : undefined;
}
