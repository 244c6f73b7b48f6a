import type { GraphqlOperation } from "../../map/system-map.ts";

// Every GraphQL operation travels as a POST, so the write policy cannot judge it by method. Its kind and
// its name can: mutations write, and a query named like an action (`deleteAllPastes`, `importData`) is one
// whatever the schema calls it.

export type GraphqlEffect = "read" | "write" | "destructive";

const DESTRUCTIVE = verbs(
  "delete|remove|destroy|drop|purge|reset|wipe|truncate|clear|erase|revoke|deactivate|disable|ban|shutdown|restart|kill|terminate|cancel",
);
const WRITING = verbs(
  "create|add|insert|upsert|update|edit|set|save|put|patch|change|modify|send|import|upload|register|signup|invite|approve|publish|submit|run|exec|execute|trigger|start|stop|transfer|pay|charge|refund|assign|grant|enable|activate|mark|move|merge|sync",
);

/** A leading verb as a whole word of a camelCase or snake_case name: `setRole`, `set_role`, not `settings`. */
function verbs(list: string): RegExp {
  return new RegExp(`^(?:${list})(?=[A-Z0-9_]|$)`);
}

/** What sending the operation may do: read, write (creates or changes), or destroy what it did not create. */
export function graphqlEffect(graphql: Pick<GraphqlOperation, "kind" | "field">): GraphqlEffect {
  if (graphql.kind === "subscription") return "read";
  const name = `${graphql.field.charAt(0).toLowerCase()}${graphql.field.slice(1)}`;
  if (DESTRUCTIVE.test(name)) return "destructive";
  if (graphql.kind === "mutation" || WRITING.test(name)) return "write";
  return "read";
}
