import { z } from "zod";
import { scanExposure } from "../../probes/auditor/exposure-scan.ts";
import { checkMisconfiguration } from "../../probes/auditor/misconfiguration.ts";
import { probeInjection } from "../../probes/auditor/sql-injection.ts";
import { probeXss } from "../../probes/auditor/xss.ts";
import { probeUploadXss } from "../../probes/auditor/xss-upload.ts";
import { checkGraphql, GRAPHQL_CHECKS } from "../../probes/graphql/check-graphql.ts";
import { surfaceBudget } from "../../probes/http/run-http.ts";
import { probeActions, runProbeTool } from "../../probes/session/probe-run.ts";
import type { ToolDefinition } from "../tool.ts";
import { defineTool } from "../tool.ts";
import { checkAuthenticationTool } from "./auth-server.ts";
import { ProbeFilter } from "./contract-server.ts";
import { injectionTools } from "./injection-server.ts";

const ProbeInput = z.strictObject(ProbeFilter);

export const probeInjectionTool = defineTool({
  name: "probe_injection",
  server: "security",
  description:
    "SQL injection on every string and numeric input (query, path and body fields of operations; fields of crawled forms and links): error-based (a quote yields a database error a doubled quote does not), boolean differential (true/false condition pairs answer differently, twice, on a stable baseline), and only when those are inconclusive, time-based with a bounded 1-second delay against a 0-second control. Reports only confirmed differentials, with both exchanges.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_injection",
      { max_requests: input.max_requests ?? surfaceBudget(context, 1500), timeout_ms: 5000 },
      (run) => probeInjection(run, input),
    ),
});

export const probeXssTool = defineTool({
  name: "probe_xss",
  server: "security",
  description:
    "Reflected and stored XSS with a unique harmless marker (`<qaas-xss-…>`) in every string input: reported only when the marker comes back unescaped in a text/html answer (reflected: the same request; stored: a page fetched after creating data), confirmed by a second request. Markers saved but absent from every server page are then looked for in Chromium (at most 15 page loads, a minute): a page whose own script fetches the record (JSON, GraphQL) and inserts it as markup holds an element of the marker's tag; reported when a second load in a fresh browser context shows it again, with the request that delivered it. Multipart uploads get a small HTML file (an unknown tag, no script): reported when it is served back inline as HTML from the application's origin, twice.",
  input: z.strictObject({ ...ProbeFilter, max_pages: z.number().int().positive().max(200).optional() }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "probe_xss",
      { max_requests: input.max_requests ?? surfaceBudget(context, 1000) },
      async (run) => {
        const found = await probeXss(run, input);
        const uploads = await probeUploadXss(run);
        return {
          candidates: [...found.candidates, ...uploads.candidates],
          stats: { ...found.stats, uploads: uploads.stats },
        };
      },
    ),
});

export const scanExposureTool = defineTool({
  name: "scan_exposure",
  server: "security",
  description:
    "Sensitive data in answers and error bodies (item reads use ids the caller already sees — its own from sign-in and 'me' answers, others' from `<name>_id` references and lists — so other users' records are read too): password hashes (bcrypt/argon2/scrypt/sha-crypt/pbkdf2, password-named fields), secrets (known key shapes; secret-named fields with high Shannon entropy, when they belong to others or reach anonymous callers), other users' email addresses, environment values and stack traces. Values are masked in every artifact.",
  input: ProbeInput,
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "scan_exposure",
      { max_requests: input.max_requests ?? surfaceBudget(context, 800) },
      (run) => scanExposure(run, input),
    ),
});

export const checkMisconfigurationTool = defineTool({
  name: "check_misconfiguration",
  server: "security",
  description:
    "CORS reflecting an arbitrary Origin (or `*`) with credentials; debug/env/config/actuator/metrics routes (from the map, plus a few well-known paths) answering anonymously with environment values, secrets or internals; directory listings; server errors provoked with a zero, negative or overflowing count and quotes in text (query parameters of GETs the map lists) whose answer shows a stack trace or debug page that the normal request does not, twice; and, once per target at the entry page, missing security headers (CSP, X-Content-Type-Options, X-Frame-Options/frame-ancestors).",
  input: z.strictObject({ max_requests: ProbeFilter.max_requests, guess_paths: z.boolean().optional() }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "check_misconfiguration",
      { max_requests: input.max_requests ?? surfaceBudget(context, 600) },
      (run) => checkMisconfiguration(run, input),
    ),
});

export const checkGraphqlTool = defineTool({
  name: "check_graphql",
  server: "security",
  description:
    'GraphQL endpoints in the map: schema introspection answered to anonymous callers, field suggestions ("Did you mean") and an in-browser IDE (GraphiQL, Playground, Altair…) served to anonymous visitors (all three skipped when the profile says the API is public), batches of queries accepted without a cap (3, then 10 `__typename` queries), many aliases and duplicated fields executed in one query (`__typename` only), circular queries accepted without a depth limit (bounded by the projected answer size), stack traces in GraphQL errors, and JWT arguments (`me(token:)`) whose signature is not verified (two users\' real tokens, then forged ones). Each confirmed by two requests, with a generated test.',
  input: z.strictObject({
    max_requests: ProbeFilter.max_requests,
    endpoint: z.string().min(1).optional(),
    checks: z.array(z.enum(GRAPHQL_CHECKS)).optional(),
  }),
  actions: (_input, context) => probeActions(context),
  run: (input, context) =>
    runProbeTool(
      context,
      "check_graphql",
      { max_requests: input.max_requests ?? surfaceBudget(context, 100) },
      (run) => checkGraphql(run, { ...input, api_public: context.target?.profile.api?.public ?? false }),
    ),
});

export const securityTools: ToolDefinition[] = [
  probeInjectionTool,
  probeXssTool,
  scanExposureTool,
  checkMisconfigurationTool,
  checkGraphqlTool,
  ...injectionTools,
  checkAuthenticationTool,
];
