import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { type CreationSteps, creationSteps, NO_CREATION } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { statusOf } from "../http/http-types.ts";
import { fillPath, joinUrl, pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, untilBudget, usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { operationKey, selectOperations } from "./operation-index.ts";
import { endpointLocation } from "./probe-support.ts";
import { ResourceFactory, uniqueSeed } from "./resource-factory.ts";

export interface UndocumentedOptions {
  operation?: string;
}

// Endpoints every framework or host serves, documents about the API itself, and probes of liveness: their
// absence from the document is expected. Debug and metrics routes are the security probe's business.
const INFRASTRUCTURE_SEGMENT =
  /^(openapi(\.json|\.ya?ml)?|swagger(-ui)?(\.json|\.ya?ml)?|api-docs|docs|redoc|graphiql|static|assets|public|dist|build|favicon\.ico|robots\.txt|sitemap\.xml|manifest\.json|health|healthz|healthcheck|ready|readyz|readiness|live|livez|liveness|ping|metrics|_next|__webpack_hmr|\.well-known|debug|_debug|__debug__|env|actuator|phpinfo(\.php)?|server-status|trace|heapdump|_profiler)$/i;

function shape(path: string): string {
  return (
    toTemplateForm(path)
      .replace(/\{[^}]+\}/g, "{}")
      .replace(/\/+$/, "")
      .toLowerCase() || "/"
  );
}

/** The first path segments every documented operation shares (`/api`), if any. */
function documentedPrefix(operations: readonly Operation[]): string {
  // Health checks and the document itself often sit outside the API's own prefix: they do not count.
  const documented = operations
    .filter((operation) => operation.documented)
    .map((operation) => toTemplateForm(operation.path).split("/").filter(Boolean))
    .filter((segments) => !segments.some((segment) => INFRASTRUCTURE_SEGMENT.test(segment)));
  if (documented.length === 0) return "";
  const first = documented[0]!;
  let length = 0;
  while (
    length < first.length &&
    !first[length]!.startsWith("{") &&
    documented.every((segments) => segments[length] === first[length])
  )
    length += 1;
  return length > 0 ? `/${first.slice(0, length).join("/")}` : "";
}

export function undocumentedCandidates(operations: readonly Operation[]): Operation[] {
  const documented = new Set(
    operations
      .filter((operation) => operation.documented)
      .map((operation) => `${operation.method.toUpperCase()} ${shape(operation.path)}`),
  );
  const prefix = documentedPrefix(operations);
  const seen = new Set<string>();
  return operations.filter((operation) => {
    if (operation.documented) return false;
    const method = operation.method.toUpperCase();
    if (method === "HEAD" || method === "OPTIONS" || method === "ALL" || method === "*") return false;
    const key = `${method} ${shape(operation.path)}`;
    if (documented.has(key) || seen.has(key)) return false;
    seen.add(key);
    const segments = toTemplateForm(operation.path).split("/").filter(Boolean);
    if (segments.some((segment) => INFRASTRUCTURE_SEGMENT.test(segment))) return false;
    if (segments.length === 0) return false;
    // With a documented API prefix, routes outside it are pages of the UI, not API endpoints.
    if (prefix && !`/${segments.join("/")}`.toLowerCase().startsWith(`${prefix.toLowerCase()}/`))
      return false;
    return true;
  });
}

/**
 * find_undocumented: operations MAPPER saw in source or while crawling that the OpenAPI document does not
 * list. A GET is confirmed live (it must answer something other than 404/405 and other than what an
 * unknown path answers); a write is never sent and is reported from source alone, with lower confidence.
 */
export async function findUndocumented(
  run: ProbeRun,
  options: UndocumentedOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  // Without a document nothing claims to describe the API: every operation is "undocumented", none a defect.
  if (!run.map.openapi) {
    return {
      candidates,
      stats: { skipped: "the target has no OpenAPI document: nothing claims to list its operations" },
    };
  }
  const wanted = options.operation ? new Set(selectOperations(run.map, options.operation)) : undefined;
  const suspects = undocumentedCandidates(run.map.operations).filter(
    (operation) => !wanted || wanted.has(operation),
  );
  const stats = {
    undocumented_seen: run.map.operations.filter((operation) => !operation.documented).length,
    candidates: suspects.length,
    confirmed: 0,
    unconfirmed: 0,
  };
  const exhausted = await untilBudget(run, async () => {
    const users = await usableUsers(run);
    const user = users[0]?.name;
    const factory = new ResourceFactory(run);
    const fallbackCache = new Map<string, Promise<HttpExchange | undefined>>();
    const fallbackFor = (path: string) => {
      const parent = path.split("/").slice(0, -1).join("/");
      let pending = fallbackCache.get(parent);
      if (!pending) {
        pending = send(run, user, {
          method: "GET",
          url: joinUrl(run.target.baseUrl, `${parent}/qaas-no-such-route-${uniqueSeed()}`),
          headers: { accept: "application/json, text/html;q=0.9" },
        });
        fallbackCache.set(parent, pending);
      }
      return pending;
    };
    await mapConcurrent(suspects, 8, async (operation) => {
      const route = run.map.routes.find(
        (candidate) =>
          shape(candidate.path) === shape(operation.path) &&
          candidate.method.toUpperCase() === operation.method.toUpperCase(),
      );
      const source = route ? { file: route.file, ...(route.line ? { line: route.line } : {}) } : undefined;
      if (operation.method.toUpperCase() !== "GET") {
        if (!operation.seen_in.includes("source")) return;
        stats.unconfirmed += 1;
        candidates.push(fromSource(run, operation, source));
        return;
      }
      const values: Record<string, string> = {};
      const names = pathParameterNames(operation.path);
      let created = NO_CREATION;
      if (names.length > 0) {
        const located = await factory.pathValuesFor(operation, user).catch(() => undefined);
        for (const name of names) values[name] = located?.values[name] ?? "1";
        if (located?.resource) created = creationSteps(located.resource);
      }
      const url = joinUrl(run.target.baseUrl, fillPath(toTemplateForm(operation.path), values));
      const [answer, fallback] = await Promise.all([
        send(run, user, { method: "GET", url, headers: { accept: "application/json, text/html;q=0.9" } }),
        fallbackFor(toTemplateForm(operation.path)),
      ]);
      if (!answer?.response) return;
      const status = statusOf(answer);
      if (status === 404 || status === 405 || status === 501) return;
      // An HTML answer is a page of the UI, which the API document is not meant to describe.
      if (answer.response.contentType.includes("text/html")) return;
      if (
        fallback?.response &&
        statusOf(fallback) === status &&
        fallback.response.body === answer.response.body
      )
        return;
      stats.confirmed += 1;
      const repro = reproPath(operation, answer.request.url, created);
      candidates.push(confirmed(run, operation, answer, source, user, repro));
    });
  });
  return { candidates, stats: { ...stats, budget_exhausted: exhausted } };
}

/**
 * The path the test reads, as the probe sent it (a base path included), but with the record the test
 * creates itself where the probe's record stood.
 */
export function reproPath(
  operation: Operation,
  sentUrl: string,
  created: CreationSteps,
): { steps: ReproStep[]; path: string } {
  const sent = new URL(sentUrl).pathname.split("/");
  const template = toTemplateForm(operation.path).split("/");
  const offset = sent.length - template.length;
  template.forEach((segment, index) => {
    const step = /^\{[^}/]+\}$/.test(segment)
      ? created.stepOfId[decodeURIComponent(sent[index + offset] ?? "")]
      : undefined;
    if (step && index + offset >= 0) sent[index + offset] = `{{${step}.id}}`;
  });
  return { steps: created.steps, path: sent.join("/") };
}

function confirmed(
  run: ProbeRun,
  operation: Operation,
  answer: HttpExchange,
  source: { file: string; line?: number } | undefined,
  user: string | undefined,
  repro: { steps: ReproStep[]; path: string },
): EnvelopeDraft {
  const key = operationKey(operation);
  const draft = buildFinding(run, {
    domain: "api",
    defectClass: "undocumented-endpoint",
    title: `${key} is served but not in the OpenAPI document`,
    summary: `${key} answered ${statusOf(answer)} (seen in ${operation.seen_in.join(", ")}${source ? ` at ${source.file}${source.line ? `:${source.line}` : ""}` : ""}), but the document does not list it.`,
    impact:
      "An endpoint nobody documented escapes review, client generation and contract tests; it may expose more than intended.",
    location: endpointLocation(operation),
    severity: severityFor("undocumented-endpoint"),
    confidence: 0.85,
    exchanges: [{ label: "undocumented", exchange: answer }],
    repro: {
      title: `${key} is either documented or not served`,
      steps: [...repro.steps, { name: "undocumented", as: user, method: "GET", path: repro.path }],
      assertions: [
        {
          kind: "status_in",
          step: "undocumented",
          values: [404, 405],
          message: `${key} is not in the document: document it or remove it`,
        },
      ],
    },
  });
  return source ? { ...draft, location: { ...draft.location, source } } : draft;
}

function fromSource(
  run: ProbeRun,
  operation: Operation,
  source: { file: string; line?: number } | undefined,
): EnvelopeDraft {
  const key = operationKey(operation);
  const uri = run.context.putArtifact(
    `${run.tool}/${key.replace(/[^A-Za-z0-9]+/g, "-")}-route.json`,
    `${JSON.stringify({ operation: key, seen_in: operation.seen_in, source: source ?? null, documented: false }, null, 2)}\n`,
  );
  const draft: EnvelopeDraft = {
    domain: "api",
    defect_class: "undocumented-endpoint",
    title: `${key} exists in the code but not in the OpenAPI document`,
    summary: `MAPPER found ${key} in source${source ? ` (${source.file}${source.line ? `:${source.line}` : ""})` : ""}; the document does not list it. It is a write, so it was not sent.`,
    location: { kind: "endpoint", value: key, ...(source ? { source } : {}) },
    evidence: [
      {
        kind: "artifact",
        description: "route record from the system map (not sent: a write of unknown effect)",
        uri,
      },
    ],
    reproduction: {
      steps: [
        `look for ${key} in ${source?.file ?? "the route table"}`,
        "compare with the OpenAPI document's paths",
      ],
    },
    impact: "An endpoint nobody documented escapes review, client generation and contract tests.",
    severity: severityFor("undocumented-endpoint"),
    confidence: 0.75,
    autonomy_eligible: false,
  };
  return draft;
}
