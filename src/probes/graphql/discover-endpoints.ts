import { joinUrl } from "../http/target-url.ts";
import { askGraphql, type GraphqlMethod, type GraphqlSend } from "./graphql-transport.ts";

// Finding which paths of a live target answer GraphQL, with the most harmless document there is:
// `{ __typename }` reads the root type's name and runs no resolver. Paths the source or the frontend name
// come first; the usual paths are tried only when none of those answered.

export const USUAL_GRAPHQL_PATHS = [
  "/graphql",
  "/api/graphql",
  "/graphql/v1",
  "/v1/graphql",
  "/query",
  "/gql",
];

export type EndpointOrigin = "given" | "source" | "frontend" | "usual";

export interface CandidatePath {
  path: string;
  origin: EndpointOrigin;
}

export interface EndpointProbe extends CandidatePath {
  /** `graphql`: `{ __typename }` answered; `errors`: only GraphQL-shaped errors came back; else not GraphQL. */
  verdict: "graphql" | "errors" | "none";
  method?: GraphqlMethod;
  /** The profile user it answered as, when it refused anonymous callers. */
  user?: string;
  /** The query root's type name (`Query`, `RootQuery`). */
  typename?: string;
  status?: number;
  /** The first error message, when it only answered errors. */
  message?: string;
}

export interface DiscoveryOptions {
  baseUrl: string;
  /** A send function per user (undefined: anonymous). */
  sendAs: (user: string | undefined) => GraphqlSend;
  /** Users to try when a path refuses anonymous callers, least privileged first. */
  users: readonly string[];
  methods: readonly GraphqlMethod[];
}

const TYPENAME_QUERY = { query: "query QaasProbe { __typename }", operationName: "QaasProbe" };

/** Probes the candidates, then the usual paths when no candidate answered GraphQL. */
export async function discoverEndpoints(
  candidates: readonly CandidatePath[],
  options: DiscoveryOptions,
): Promise<EndpointProbe[]> {
  const probes: EndpointProbe[] = [];
  const tried = new Set<string>();
  const tryAll = async (list: readonly CandidatePath[]) => {
    for (const candidate of list) {
      if (tried.has(candidate.path)) continue;
      tried.add(candidate.path);
      probes.push(await probeEndpoint(candidate, options));
    }
  };
  await tryAll(candidates);
  if (!probes.some((probe) => probe.verdict === "graphql"))
    await tryAll(USUAL_GRAPHQL_PATHS.map((path) => ({ path, origin: "usual" as const })));
  return probes;
}

/** Whether one path answers GraphQL: anonymously, else as the first user who gets an answer. */
export async function probeEndpoint(
  candidate: CandidatePath,
  options: DiscoveryOptions,
): Promise<EndpointProbe> {
  const url = joinUrl(options.baseUrl, candidate.path);
  let probe: EndpointProbe = { ...candidate, verdict: "none" };
  for (const user of [undefined, ...options.users]) {
    const asked = await askGraphql(options.sendAs(user), url, TYPENAME_QUERY, options.methods);
    const status = asked?.exchange.response?.status;
    const typename = (asked?.answer?.data as { __typename?: unknown } | null | undefined)?.__typename;
    if (asked && typeof typename === "string")
      return { ...candidate, verdict: "graphql", method: asked.method, user, typename, status };
    const message = asked?.answer?.errors[0]?.message;
    if (asked?.answer && status !== 404 && message && probe.verdict === "none")
      probe = {
        ...candidate,
        verdict: "errors",
        method: asked.method,
        user,
        status,
        message: message.slice(0, 200),
      };
    else if (probe.verdict === "none") probe = { ...probe, status };
    // Only a refusal is worth a signed-in retry; a 404 or an HTML page will not change with a session.
    const refused = status === 401 || status === 403 || (asked?.answer !== undefined && status !== 404);
    if (!refused) break;
  }
  return probe;
}

/** Whether a probe counts as an endpoint: it answered, or it answered GraphQL errors where something named it. */
export function isEndpoint(probe: EndpointProbe): boolean {
  return probe.verdict === "graphql" || (probe.verdict === "errors" && probe.origin !== "usual");
}
