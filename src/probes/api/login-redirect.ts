import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import { creationSteps, idStepsFor, NO_CREATION, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { statusOf } from "../http/http-types.ts";
import { hasPasswordField, isHtml, parseHtmlPage } from "../session/html-forms.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { operationKey } from "./operation-index.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import { clonePrepared } from "./request-builder.ts";
import type { ValidObservation } from "./status-oracles.ts";

// Session middleware written for pages (Flask-Login's login_required, Django's login_required, an Express
// `ensureAuthenticated`) answers every anonymous request with a redirect to the sign-in page. On a JSON
// endpoint that is the wrong status: a script or client library gets a 302 (or, following it, a 200 HTML
// page) where it needs a 401 it can act on. Three signals together: the signed-in answer is JSON, the
// anonymous one — asked for JSON explicitly, so content negotiation had its chance — is a redirect, and the
// page it points at is a sign-in form (a password field).

const REDIRECT = new Set([301, 302, 303, 307, 308]);

interface Redirected {
  observation: ValidObservation;
  anonymous: HttpExchange;
  loginPage: HttpExchange;
}

/** Whether a signed-in read answered JSON (a 2xx, or a 4xx the endpoint itself phrased in JSON). */
export function answersJson(observation: ValidObservation): boolean {
  const { operation, exchange } = observation;
  const method = operation.method.toUpperCase();
  if (method !== "GET" && method !== "HEAD") return false;
  if (observation.user === undefined || operation.security === "public") return false;
  const status = statusOf(exchange);
  if (status < 200 || status >= 500 || REDIRECT.has(status) || status === 401 || status === 403) return false;
  const response = exchange.response;
  return Boolean(response?.contentType.includes("json") && response.json !== undefined);
}

/**
 * One finding for every JSON read whose anonymous caller is sent to the sign-in page: the session layer is
 * configured once for the whole application, so the operations share one cause and one fix.
 */
export async function loginRedirectsForApi(
  run: ProbeRun,
  observations: readonly ValidObservation[],
): Promise<EnvelopeDraft[]> {
  const loginPages = new Map<string, Promise<HttpExchange | undefined>>();
  const redirected: Redirected[] = [];
  for (const observation of observations.filter(answersJson)) {
    const anonymous = clonePrepared(observation.prepared);
    anonymous.headers.accept = "application/json";
    const answer = await sendPrepared(run, undefined, anonymous);
    const location = answer?.response?.headers.location;
    if (!answer || !REDIRECT.has(statusOf(answer)) || !location) continue;
    const target = sameOriginTarget(answer.request.url, location);
    if (!target) continue;
    const key = target.split("?")[0]!;
    if (!loginPages.has(key)) loginPages.set(key, signInFormAt(run, target));
    const loginPage = await loginPages.get(key);
    if (loginPage) redirected.push({ observation, anonymous: answer, loginPage });
  }
  const first = redirected[0];
  if (!first) return [];
  const keys = redirected.map(({ observation }) => operationKey(observation.operation));
  const loginPath = new URL(first.loginPage.request.url).pathname;
  const created = first.observation.resource ? creationSteps(first.observation.resource) : NO_CREATION;
  const anonymousStep = stepFromPrepared(
    "anonymous",
    first.observation.prepared,
    undefined,
    idStepsFor(first.observation.prepared, created),
  );
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "wrong-status",
      title: `JSON endpoints redirect an anonymous caller to the sign-in page ${loginPath} instead of answering 401 (${keys.length} operation${keys.length === 1 ? "" : "s"})`,
      summary: `Signed in, ${keys.join(", ")} answer JSON. Without credentials (asking for application/json) each answers ${statusOf(first.anonymous)} to ${loginPath}, an HTML page with a password form, instead of 401.`,
      impact:
        "Scripts and client libraries cannot tell an expired session from a success: they follow the redirect and try to parse a sign-in page as data.",
      location: endpointLocation(first.observation.operation),
      related: redirected.slice(1).map(({ observation }) => endpointLocation(observation.operation)),
      severity: severityFor("wrong-status"),
      confidence: 0.85,
      discriminator: "anonymous-login-redirect",
      exchanges: [
        { label: "anonymous", exchange: first.anonymous },
        { label: "signed-in", exchange: first.observation.exchange },
        { label: "sign-in-page", exchange: first.loginPage },
        ...redirected.slice(1, 6).map(({ observation, anonymous }) => ({
          label: `anonymous ${operationKey(observation.operation)}`,
          exchange: anonymous,
        })),
      ],
      notes: redirected.map(
        ({ observation, anonymous }) =>
          `${operationKey(observation.operation)}: signed in ${statusOf(observation.exchange)} JSON, anonymous ${statusOf(anonymous)} → ${anonymous.response?.headers.location ?? ""}`,
      ),
      repro: {
        title: `${keys[0]} answers 401 to an anonymous caller`,
        steps: [...created.steps, anonymousStep],
        assertions: [
          {
            kind: "status_in",
            step: "anonymous",
            values: [401, 403],
            message: `${keys[0]} must refuse an anonymous caller with 401, not a redirect to the sign-in page`,
          },
        ],
      },
    }),
  ];
}

/** The absolute URL a Location points at, when it stays on the request's origin. */
function sameOriginTarget(requestUrl: string, location: string): string | undefined {
  try {
    const target = new URL(location, requestUrl);
    return target.origin === new URL(requestUrl).origin ? target.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** The anonymous answer at `url` when it is an HTML page holding a form with a password field. */
async function signInFormAt(run: ProbeRun, url: string): Promise<HttpExchange | undefined> {
  const exchange = await send(run, undefined, { method: "GET", url });
  const response = exchange?.response;
  if (!exchange || !response || response.status !== 200) return undefined;
  if (!isHtml(response.contentType, response.body)) return undefined;
  const page = parseHtmlPage(response.body, url);
  return page.forms.some(hasPasswordField) ? exchange : undefined;
}
