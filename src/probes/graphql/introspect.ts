import {
  getIntrospectionQuery,
  type IntrospectionSchema,
  type IntrospectionType,
  type IntrospectionTypeRef,
} from "graphql";
import type { HttpExchange } from "../http/http-types.ts";
import type { GraphqlAnswer } from "./graphql-answer.ts";
import { askGraphql, type GraphqlAsked, type GraphqlMethod, type GraphqlSend } from "./graphql-transport.ts";
import { fieldsOf, namedTypeOf } from "./type-refs.ts";

// Reading a live endpoint's schema. The standard introspection query first; then a lighter one (no
// descriptions or directives, shallower type references) for servers that cap depth or size; then type by
// type through `__type(name:)`, which servers that only block `__schema` still answer. Each step is a
// handful of requests at most.

export interface IntrospectionOutcome {
  schema: IntrospectionSchema | undefined;
  how: "full" | "light" | "by-type" | "refused";
  /** The answer carried errors beside the schema, or types were missing from it. */
  partial: boolean;
  method: GraphqlMethod | undefined;
  /** What the server said when it refused the standard query (its first error, or the status). */
  refusal: string | undefined;
  /** The standard query's exchange first (the evidence that introspection is, or is not, open). */
  exchanges: HttpExchange[];
  notes: string[];
}

/** Four wrappers deep (`[[Int!]]!`): enough for real schemas, shallow enough for servers that cap query depth near 10. */
const TYPE_REF =
  "kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }";
const INPUT_VALUE = `name type { ${TYPE_REF} } defaultValue`;
const FULL_TYPE = `kind name
  fields(includeDeprecated: true) { name args { ${INPUT_VALUE} } type { ${TYPE_REF} } }
  inputFields { ${INPUT_VALUE} }
  interfaces { kind name }
  enumValues(includeDeprecated: true) { name }
  possibleTypes { kind name }`;

export const LIGHT_INTROSPECTION_QUERY = `query QaasSchema { __schema {
  queryType { name } mutationType { name } subscriptionType { name }
  types { ${FULL_TYPE} }
} }`;

const MUTATION_ROOTS = [
  "Mutation",
  "Mutations",
  "RootMutation",
  "MutationType",
  "RootMutationType",
  "MutationRoot",
];
const SUBSCRIPTION_ROOTS = [
  "Subscription",
  "Subscriptions",
  "RootSubscription",
  "SubscriptionType",
  "RootSubscriptionType",
];
const TYPES_PER_REQUEST = 40;
const TYPE_ROUNDS = 6;

export async function introspect(
  send: GraphqlSend,
  url: string,
  methods: readonly GraphqlMethod[] = ["POST", "GET"],
): Promise<IntrospectionOutcome> {
  const outcome: IntrospectionOutcome = {
    schema: undefined,
    how: "refused",
    partial: false,
    method: undefined,
    refusal: undefined,
    exchanges: [],
    notes: [],
  };
  let anonymousOnly = false;
  const ask = async (query: string, operationName?: string): Promise<GraphqlAsked | undefined> => {
    const asked = await askGraphql(send, url, { query, operationName }, methods);
    if (asked) outcome.exchanges.push(asked.exchange);
    if (!operationName || answeredAnything(asked)) return asked;
    // Servers that filter by operation name (an allow- or deny-list) answer the same document unnamed.
    const unnamed = await askGraphql(send, url, { query: withoutOperationName(query) }, methods);
    if (unnamed) outcome.exchanges.push(unnamed.exchange);
    if (!answeredAnything(unnamed)) return asked;
    anonymousOnly = true;
    return unnamed;
  };
  const noteAnonymous = () => {
    if (anonymousOnly)
      outcome.notes.push(
        "named operations were refused but the same documents without an operation name were answered (a filter on operation names)",
      );
  };
  const full = await ask(getIntrospectionQuery(), "IntrospectionQuery");
  const fromFull = schemaOf(full?.answer);
  if (fromFull && full) {
    noteAnonymous();
    return { ...outcome, schema: fromFull, how: "full", method: full.method, partial: full.answer!.failed };
  }
  outcome.refusal = refusalOf(full);
  const light = await ask(LIGHT_INTROSPECTION_QUERY, "QaasSchema");
  const fromLight = schemaOf(light?.answer);
  if (fromLight && light) {
    noteAnonymous();
    outcome.notes.push(
      `the standard introspection query was refused (${outcome.refusal}); a lighter one was answered`,
    );
    return {
      ...outcome,
      schema: fromLight,
      how: "light",
      method: light.method,
      partial: light.answer!.failed,
    };
  }
  const byType = await schemaByType(ask);
  if (byType) {
    noteAnonymous();
    outcome.notes.push(
      `__schema was refused (${outcome.refusal}); the schema was rebuilt type by type through __type`,
    );
    return {
      ...outcome,
      schema: byType.schema,
      how: "by-type",
      method: byType.method,
      partial: byType.partial,
    };
  }
  outcome.notes.push(`introspection refused: ${outcome.refusal}`);
  return outcome;
}

/** Some root field came back with a value (a refusal answers `data: null` or every field null). */
function answeredAnything(asked: GraphqlAsked | undefined): boolean {
  const data = asked?.answer?.data;
  return !!data && typeof data === "object" && Object.values(data).some((value) => value !== null);
}

/** `query IntrospectionQuery { … }` → `query { … }`: the same operation, unnamed. */
export function withoutOperationName(query: string): string {
  return query.replace(/^(\s*(?:query|mutation|subscription))\s+[_A-Za-z][_0-9A-Za-z]*/, "$1");
}

function schemaOf(answer: GraphqlAnswer | undefined): IntrospectionSchema | undefined {
  const data = answer?.data as { __schema?: IntrospectionSchema } | null | undefined;
  const schema = data?.__schema;
  return schema && Array.isArray(schema.types) && schema.queryType ? schema : undefined;
}

function refusalOf(asked: GraphqlAsked | undefined): string {
  if (!asked) return "no request could be sent";
  const message = asked.answer?.errors[0]?.message;
  if (message) return message.slice(0, 300);
  const response = asked.exchange.response;
  return response ? `HTTP ${response.status}` : (asked.exchange.error ?? "no answer");
}

/** The schema rebuilt from `__type(name:)` answers: the roots, then every type they reach, a few rounds deep. */
async function schemaByType(
  ask: (query: string, operationName?: string) => Promise<GraphqlAsked | undefined>,
): Promise<{ schema: IntrospectionSchema; method: GraphqlMethod; partial: boolean } | undefined> {
  const root = await ask("query QaasRoot { __typename }", "QaasRoot");
  const queryRoot = (root?.answer?.data as { __typename?: unknown } | undefined)?.__typename;
  if (typeof queryRoot !== "string" || !root) return undefined;
  const found = new Map<string, IntrospectionType>();
  let method: GraphqlMethod = root.method;
  let partial = false;
  const fetchTypes = async (names: string[]): Promise<boolean> => {
    const aliases = names.map(
      (name, index) => `t${index}: __type(name: ${JSON.stringify(name)}) { ${FULL_TYPE} }`,
    );
    const asked = await ask(`query QaasTypes { ${aliases.join("\n")} }`, "QaasTypes");
    const data = asked?.answer?.data as Record<string, IntrospectionType | null> | null | undefined;
    if (!asked || !data) return false;
    method = asked.method;
    if (asked.answer?.failed) partial = true;
    for (const type of Object.values(data)) if (type?.name) found.set(type.name, type);
    return true;
  };
  if (!(await fetchTypes([queryRoot, ...MUTATION_ROOTS, ...SUBSCRIPTION_ROOTS]))) return undefined;
  if (!found.has(queryRoot)) return undefined;
  const asked = new Set([queryRoot, ...MUTATION_ROOTS, ...SUBSCRIPTION_ROOTS]);
  for (let round = 0; round < TYPE_ROUNDS; round += 1) {
    const missing = [...referencedNames(found.values())].filter(
      (name) => !asked.has(name) && !name.startsWith("__"),
    );
    if (missing.length === 0) break;
    const batch = missing.slice(0, TYPES_PER_REQUEST);
    for (const name of batch) asked.add(name);
    if (!(await fetchTypes(batch))) break;
    if (round === TYPE_ROUNDS - 1 && missing.length > 0) partial = true;
  }
  const pick = (names: readonly string[]) => names.find((name) => found.get(name)?.kind === "OBJECT");
  const mutation = pick(MUTATION_ROOTS);
  const subscription = pick(SUBSCRIPTION_ROOTS);
  return {
    method,
    partial,
    schema: {
      queryType: { kind: "OBJECT", name: queryRoot },
      mutationType: mutation ? { kind: "OBJECT", name: mutation } : null,
      subscriptionType: subscription ? { kind: "OBJECT", name: subscription } : null,
      types: [...found.values()],
      directives: [],
    } as IntrospectionSchema,
  };
}

function referencedNames(types: Iterable<IntrospectionType>): Set<string> {
  const names = new Set<string>();
  const add = (ref: IntrospectionTypeRef | undefined) => {
    const name = namedTypeOf(ref);
    if (name) names.add(name);
  };
  for (const type of types) {
    for (const field of fieldsOf(type)) {
      add(field.type);
      for (const argument of field.args ?? []) add(argument.type);
    }
    if (type.kind === "INPUT_OBJECT") for (const input of type.inputFields ?? []) add(input.type);
    if (type.kind === "UNION" || type.kind === "INTERFACE")
      for (const possible of type.possibleTypes ?? []) names.add(possible.name);
  }
  return names;
}
