import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { joinUrl } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget } from "../session/probe-run.ts";
import { checkBatching } from "./batching-check.ts";
import { checkQueryDepth } from "./depth-check.ts";
import { checkErrorDisclosure } from "./error-disclosure-check.ts";
import { graphqlEndpoints } from "./finding-support.ts";
import { checkGraphqlIde, findIdePages } from "./ide-check.ts";
import { checkIntrospection } from "./introspection-check.ts";
import { ALIAS_OVERLOADING, checkOverloading, FIELD_DUPLICATION } from "./overloading-check.ts";
import { checkFieldSuggestions } from "./suggestions-check.ts";
import { checkTokenArguments } from "./token-argument-check.ts";

// The GraphQL-specific checks over every endpoint the map holds. Each is a few requests, runs no
// resolver that could change or load much (`__typename` leaves, one-item lists), and reports only what
// two requests agree on.

export const GRAPHQL_CHECKS = [
  "introspection",
  "suggestions",
  "batching",
  "depth",
  "aliases",
  "duplication",
  "errors",
  "ide",
  "tokens",
] as const;
export type GraphqlCheck = (typeof GRAPHQL_CHECKS)[number];

export interface GraphqlCheckOptions {
  /** The API is public by design (its schema is published): introspection and suggestions are not defects. */
  api_public?: boolean;
  /** Which checks to run (all by default). */
  checks?: readonly GraphqlCheck[];
  /** Only this endpoint path. */
  endpoint?: string;
}

export async function checkGraphql(
  run: ProbeRun,
  options: GraphqlCheckOptions = {},
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const wanted = new Set(options.checks ?? GRAPHQL_CHECKS);
  const apiPublic = options.api_public ?? false;
  const endpoints = graphqlEndpoints(run).filter(
    (endpoint) => !options.endpoint || endpoint.path === options.endpoint,
  );
  const candidates: EnvelopeDraft[] = [];
  const checked: Record<string, string[]> = {};
  const exhausted = await untilBudget(run, async () => {
    for (const endpoint of endpoints) {
      const ran: string[] = [];
      checked[endpoint.path] = ran;
      const found = async (check: GraphqlCheck, probe: () => Promise<EnvelopeDraft | undefined>) => {
        if (!wanted.has(check)) return;
        ran.push(check);
        const draft = await probe();
        if (draft) candidates.push(draft);
      };
      await found("introspection", () => checkIntrospection(run, endpoint, { apiPublic }));
      await found("suggestions", () => checkFieldSuggestions(run, endpoint, { apiPublic }));
      await found("batching", () => checkBatching(run, endpoint));
      await found("depth", () => checkQueryDepth(run, endpoint));
      await found("aliases", () => checkOverloading(run, endpoint, ALIAS_OVERLOADING));
      await found("duplication", () => checkOverloading(run, endpoint, FIELD_DUPLICATION));
      await found("errors", () => checkErrorDisclosure(run, endpoint));
    }
    if (wanted.has("tokens") && endpoints.length > 0) {
      checked["(token arguments)"] = ["tokens"];
      candidates.push(...(await checkTokenArguments(run)));
    }
    // An IDE page is the target's, not one endpoint's: looked for once, beside every endpoint.
    if (endpoints.length === 0 || !(wanted.has("ide") || wanted.has("errors"))) return;
    const pages = await findIdePages(run, endpoints);
    if (wanted.has("ide")) {
      checked["(ide pages)"] = ["ide"];
      const draft = await checkGraphqlIde(run, endpoints, pages, { apiPublic });
      if (draft) candidates.push(draft);
    }
    // An IDE often answers operations at its own path, through its own (debug) error formatting.
    if (!wanted.has("errors")) return;
    for (const page of pages) {
      if (endpoints.some((endpoint) => endpoint.path === page.path)) continue;
      checked[page.path] = ["errors"];
      const draft = await checkErrorDisclosure(run, {
        path: page.path,
        url: joinUrl(run.target.baseUrl, page.path),
        schema: undefined,
      });
      if (draft) candidates.push(draft);
    }
  });
  const notes: string[] = [];
  if (endpoints.length === 0) notes.push("the map holds no GraphQL endpoint (map_graphql finds them)");
  if (apiPublic)
    notes.push("the API is marked public: introspection, field suggestions and IDE pages are not reported");
  if (!run.target.writesAllowed && wanted.has("batching"))
    notes.push("batching not tried: the write policy refuses POST, and a batch only travels by POST");
  return {
    candidates,
    stats: {
      endpoints: endpoints.map((endpoint) => endpoint.path),
      checked,
      budget_exhausted: exhausted,
      graphql_notes: notes,
    },
  };
}
