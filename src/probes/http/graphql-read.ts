import { Kind, parse } from "graphql";
import { graphqlEffect } from "../graphql/graphql-effect.ts";
import type { HttpRequestSpec } from "./http-types.ts";

// GraphQL sends reads as POSTs. A body whose every operation is a query, and whose every top-level field is
// named like a read (see graphql-effect.ts: `deleteAll` or `importData` is a write whatever its kind),
// changes nothing, so the write policy of an `external` target does not stop it. A body that does not
// parse as such stays a write.

/** Whether the request is a POST of GraphQL reads only. */
export function isGraphqlRead(spec: HttpRequestSpec): boolean {
  if (spec.method.toUpperCase() !== "POST" || !spec.body) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(spec.body);
  } catch {
    return false;
  }
  const requests = Array.isArray(parsed) ? parsed : [parsed];
  return (
    requests.length > 0 && requests.every((request) => readsOnly((request as { query?: unknown })?.query))
  );
}

function readsOnly(query: unknown): boolean {
  if (typeof query !== "string") return false;
  try {
    const operations = parse(query).definitions.filter(
      (definition) => definition.kind === Kind.OPERATION_DEFINITION,
    );
    return (
      operations.length > 0 &&
      operations.every(
        (operation) =>
          operation.operation === "query" &&
          operation.selectionSet.selections.every(
            (selection) =>
              selection.kind === Kind.FIELD &&
              graphqlEffect({ kind: "query", field: selection.name.value }) === "read",
          ),
      )
    );
  } catch {
    return false;
  }
}
