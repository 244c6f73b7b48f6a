import type {
  IntrospectionField,
  IntrospectionInputValue,
  IntrospectionSchema,
  IntrospectionType,
  IntrospectionTypeRef,
} from "graphql";

// Reading an introspection result tolerantly: a partial answer (a server that cut `ofType` short, or a
// schema rebuilt type by type) still yields type strings, just with `Unknown` where a name went missing.

/** A type reference as GraphQL writes it: `String!`, `[Int]`, `[Paste!]!`. */
export function typeString(ref: IntrospectionTypeRef | undefined | null): string {
  if (!ref) return "Unknown";
  if (ref.kind === "NON_NULL") return `${typeString(ofType(ref))}!`;
  if (ref.kind === "LIST") return `[${typeString(ofType(ref))}]`;
  return (ref as { name?: string }).name ?? "Unknown";
}

/** The named type under lists and non-nulls (`Paste` for `[Paste!]!`). */
export function namedTypeOf(ref: IntrospectionTypeRef | undefined | null): string | undefined {
  let current: IntrospectionTypeRef | undefined | null = ref;
  for (let depth = 0; current && depth < 16; depth += 1) {
    if (current.kind !== "NON_NULL" && current.kind !== "LIST") return (current as { name?: string }).name;
    current = ofType(current);
  }
  return undefined;
}

export function isNonNull(ref: IntrospectionTypeRef | undefined | null): boolean {
  return ref?.kind === "NON_NULL";
}

/** An argument or input field must be given when it is non-null and has no default. */
export function isRequiredInput(value: Pick<IntrospectionInputValue, "type" | "defaultValue">): boolean {
  return isNonNull(value.type) && (value.defaultValue === null || value.defaultValue === undefined);
}

function ofType(ref: IntrospectionTypeRef): IntrospectionTypeRef | undefined {
  return (ref as { ofType?: IntrospectionTypeRef }).ofType;
}

/** Named types of a schema by name, for lookups while walking fields. */
export function typeIndex(schema: IntrospectionSchema): Map<string, IntrospectionType> {
  return new Map((schema.types ?? []).map((type) => [type.name, type]));
}

/** The fields of an object or interface type (none for other kinds, or when the answer left them out). */
export function fieldsOf(type: IntrospectionType | undefined): readonly IntrospectionField[] {
  return type && (type.kind === "OBJECT" || type.kind === "INTERFACE") ? (type.fields ?? []) : [];
}

export function isLeafKind(kind: string | undefined): boolean {
  return kind === "SCALAR" || kind === "ENUM";
}

/** The root type names: what `queryType`, `mutationType` and `subscriptionType` name. */
export function rootTypeNames(schema: IntrospectionSchema): {
  query?: string;
  mutation?: string;
  subscription?: string;
} {
  return {
    query: schema.queryType?.name ?? undefined,
    mutation: schema.mutationType?.name ?? undefined,
    subscription: schema.subscriptionType?.name ?? undefined,
  };
}
