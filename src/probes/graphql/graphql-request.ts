import type { GraphqlOperation, Operation } from "../../map/system-map.ts";

// What goes over the wire for one GraphQL operation: a document declaring every argument as a variable,
// so a probe only ever fills and mutates the `variables` object (the operation's request body).

export interface GraphqlRequestBody {
  query: string;
  variables: unknown;
  operationName: string;
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/**
 * `{ query: "mutation CreatePaste($title: String!) { createPaste(title: $title) { id title } }", variables }`.
 * `variables` is passed through as given (a probe may send a malformed one on purpose).
 */
export function graphqlRequestBody(
  operation: Pick<Operation, "graphql"> | GraphqlOperation,
  variables: unknown = {},
): GraphqlRequestBody {
  const graphql = "field" in operation ? operation : operation.graphql;
  if (!graphql) throw new Error("graphqlRequestBody: the operation has no graphql descriptor");
  return {
    query: graphqlDocument(graphql),
    variables: variables ?? {},
    operationName: operationNameOf(graphql),
  };
}

/** The document for one field: each argument a variable of its declared type, the selection appended. */
export function graphqlDocument(graphql: GraphqlOperation): string {
  if (!NAME.test(graphql.field))
    throw new Error(`graphqlDocument: "${graphql.field}" is not a GraphQL field name`);
  // An argument whose type a partial schema lost cannot be declared; it is left out rather than guessed.
  const declared = graphql.arguments.filter(
    (argument) =>
      NAME.test(argument.name) && /^[[\]!_A-Za-z0-9]+$/.test(argument.type) && !/Unknown/.test(argument.type),
  );
  const definitions = declared.map((argument) => `$${argument.name}: ${argument.type}`).join(", ");
  const call = declared.map((argument) => `${argument.name}: $${argument.name}`).join(", ");
  const head = `${graphql.kind} ${operationNameOf(graphql)}${definitions ? `(${definitions})` : ""}`;
  const field = `${graphql.field}${call ? `(${call})` : ""}`;
  return `${head} { ${field}${graphql.selection ? ` ${graphql.selection}` : ""} }`;
}

/** `CreatePaste` for `createPaste`: readable in a server's logs and in the evidence. */
export function operationNameOf(graphql: Pick<GraphqlOperation, "field">): string {
  const base = graphql.field.replace(/^_+/, "");
  return base ? `${base[0]!.toUpperCase()}${base.slice(1)}` : "Operation";
}
