import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { type GraphqlEndpoint, methodsFor, sendFor, stepOf } from "./finding-support.ts";
import { askGraphql } from "./graphql-transport.ts";

// An in-browser GraphQL IDE (GraphiQL, GraphQL Playground, Altair, Voyager, Apollo Sandbox) served to
// anonymous visitors: a ready console that browses the schema and sends any operation with the visitor's
// cookies. Looked for where a browser would find one: each endpoint's own path asked for HTML, then the
// paths IDEs are usually mounted on. Two signals: the page is HTML that loads an IDE's own bundle or
// boots it, and a GraphQL endpoint the IDE can talk to answers `{ __typename }` (the page's own path,
// else an endpoint of the map).

export const USUAL_IDE_PATHS = [
  "/graphiql",
  "/playground",
  "/graphql/playground",
  "/graphql-playground",
  "/altair",
  "/graphql/altair",
  "/voyager",
  "/graphql/voyager",
  "/graphql-explorer",
  "/explorer",
  "/sandbox",
  "/api/graphiql",
  "/v1/graphiql",
  "/graphql/console",
  "/graphql/graphiql",
  "/__graphql",
];

interface IdeSignature {
  ide: string;
  pattern: RegExp;
}

/** Each IDE's bundle name, render call or page title: text a page only carries when it boots that IDE. */
const IDE_SIGNATURES: readonly IdeSignature[] = [
  {
    ide: "GraphiQL",
    pattern:
      /graphiql(?:@[\w.-]+)?\/(?:dist\/)?graphiql(?:\.min)?\.(?:js|css)|React\.createElement\(\s*GraphiQL\b|<GraphiQL\b|GraphiQL\.createFetcher|id=["']graphiql["']/i,
  },
  {
    ide: "GraphQL Playground",
    pattern:
      /graphql-playground-react|GraphQLPlayground\.init\s*\(|<title>\s*GraphQL Playground\s*<\/title>/i,
  },
  { ide: "Altair", pattern: /altair-graphql|<title>\s*Altair\s*<\/title>|AltairGraphQL\.init\s*\(/i },
  {
    ide: "GraphQL Voyager",
    pattern: /graphql-voyager(?:\/dist)?\/voyager|GraphQLVoyager\.(?:init|renderVoyager)/i,
  },
  { ide: "Apollo Sandbox", pattern: /embeddable-sandbox|EmbeddedSandbox\s*\(|embeddable-explorer/i },
  { ide: "Banana Cake Pop", pattern: /banana-cake-pop|bananacakepop/i },
];

export interface IdePage {
  path: string;
  ide: string;
  exchange: HttpExchange;
}

/** The IDE a page boots, when it is an HTML page that loads one. */
export function ideOf(exchange: HttpExchange | undefined): string | undefined {
  const response = exchange?.response;
  if (!response || response.status >= 500 || response.status === 404) return undefined;
  const type = response.contentType || (response.headers["content-type"] ?? "");
  const body = response.body ?? "";
  if (!/html/i.test(type) && !/^\s*<(?:!doctype html|html)/i.test(body)) return undefined;
  return IDE_SIGNATURES.find((signature) => signature.pattern.test(body))?.ide;
}

/** IDE pages served to anonymous visitors: each endpoint's own path asked for HTML, then the usual paths. */
export async function findIdePages(run: ProbeRun, endpoints: readonly GraphqlEndpoint[]): Promise<IdePage[]> {
  const paths = [...new Set([...endpoints.map((endpoint) => endpoint.path), ...USUAL_IDE_PATHS])];
  const pages: IdePage[] = [];
  for (const path of paths) {
    const exchange = await send(run, undefined, {
      method: "GET",
      url: joinUrl(run.target.baseUrl, path),
      headers: { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8" },
    });
    const ide = ideOf(exchange);
    if (exchange && ide) pages.push({ path, ide, exchange });
  }
  return pages;
}

/** The finding for the IDE pages found, once a GraphQL endpoint behind them answers. */
export async function checkGraphqlIde(
  run: ProbeRun,
  endpoints: readonly GraphqlEndpoint[],
  pages: readonly IdePage[],
  options: { apiPublic: boolean },
): Promise<EnvelopeDraft | undefined> {
  if (options.apiPublic) return undefined;
  const first = pages[0];
  if (!first) return undefined;
  const live = await liveEndpoint(run, first.path, endpoints);
  if (!live) return undefined;
  const listed = pages.map((page) => `${page.path} (${page.ide})`).join(", ");
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `GraphQL IDE served to anonymous visitors at ${first.path} (${first.ide})`,
    summary: `GET ${first.path} without credentials answered the ${first.ide} in-browser IDE (status ${first.exchange.response?.status}); IDE pages found: ${listed}. The GraphQL endpoint ${live.path} behind it answered { __typename } by ${live.method}. The target profile does not mark the API as public.`,
    impact:
      "Anyone gets a ready console to browse the schema and send any query or mutation (with a signed-in visitor's cookies when the endpoint accepts them): it eases every attack on the API and is not meant for production.",
    location: { kind: "endpoint", value: `GET ${first.path}` },
    severity: severityFor("misconfiguration"),
    confidence: 0.85,
    discriminator: "graphql-ide",
    exchanges: [
      { label: "ide-page", exchange: first.exchange },
      { label: "endpoint", exchange: live.exchange },
    ],
    repro: {
      title: `No GraphQL IDE is served to anonymous visitors at ${first.path}`,
      steps: [{ ...stepOf("page", first.exchange), headers: { accept: "text/html" } }],
      assertions: [
        {
          kind: "body_not_matches",
          step: "page",
          pattern: IDE_SIGNATURES.find((signature) => signature.ide === first.ide)!.pattern.source,
          flags: "i",
          message: `GET ${first.path} must not serve the ${first.ide} IDE`,
        },
      ],
    },
    suggestedFixArea: "the GraphQL server's options (turn the IDE / playground off outside development)",
  });
}

/** The page's own path when it answers GraphQL, else the first endpoint of the map that does. */
async function liveEndpoint(
  run: ProbeRun,
  pagePath: string,
  endpoints: readonly GraphqlEndpoint[],
): Promise<{ path: string; method: string; exchange: HttpExchange } | undefined> {
  const ordered = [
    ...endpoints.filter((endpoint) => endpoint.path === pagePath),
    ...endpoints.filter((endpoint) => endpoint.path !== pagePath),
  ];
  const candidates =
    ordered.length > 0 ? ordered : [{ path: pagePath, url: joinUrl(run.target.baseUrl, pagePath) }];
  for (const endpoint of candidates) {
    const asked = await askGraphql(
      sendFor(run, undefined),
      endpoint.url,
      { query: "query QaasIde { __typename }", operationName: "QaasIde" },
      methodsFor(run),
    );
    const typename = (asked?.answer?.data as { __typename?: unknown } | null | undefined)?.__typename;
    if (asked && typeof typename === "string")
      return { path: endpoint.path, method: asked.method, exchange: asked.exchange };
  }
  return undefined;
}
