import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildFinding } from "../evidence/finding.ts";
import { isAccountStep } from "../http/account-guard.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { missingFieldsNamed } from "../http/missing-fields.ts";
import type { Credential } from "../session/credential.ts";
import { formPostingTo, loadForm } from "../session/form-submission.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, submitForm } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { stepOf } from "./credential-attempt.ts";
import type { Prior, Snapshot } from "./csrf-effect.ts";
import { priorValues, readBackPlaces, showing, snapshot } from "./csrf-effect.ts";
import type { ForgedRequest, ForgeryShape, ForgeryTemplate } from "./csrf-requests.ts";
import {
  forge,
  forgeable,
  forgeryShapes,
  linkable,
  templateFromBody,
  templateFromForm,
  withMissingFields,
} from "./csrf-requests.ts";
import { sessionCookies, setAtSignIn } from "./session-cookie.ts";

// Cross-site request forgery, judged by effect. Only where the browser sends the session by itself (a
// cookie without SameSite=Lax/Strict): a state-changing POST is sent as another site's form would send it
// (no CSRF token or a wrong one, a foreign Origin, a content type a form can produce) with the user's
// cookies and an inert marker in its free-text fields. It counts only when (1) it was answered as a success
// AND (2) the user's own read of the collection or page shows the marker; the same request without the
// cookies must change nothing (else the flaw is missing authentication, not CSRF). A record the forged
// request changed is put back afterwards through the application's own form.

const MAX_OPERATIONS = 40;
/** Posts that read or sign in rather than change stored state: tried last, since a forgery there shows nothing. */
const READ_OR_SIGN_IN_WORDS =
  /search|query|find|lookup|filter|preview|session|log-?in|sign-?in|password|reset|token|verify/i;

export interface CsrfStats {
  session: "cookie" | "header" | "none";
  same_site?: string;
  operations_tried: number;
  forged: Record<string, string>;
}

export async function checkCsrf(
  run: ProbeRun,
  users: readonly ProfileUser[],
  operations: readonly Operation[],
): Promise<{ candidates: EnvelopeDraft[]; stats: CsrfStats }> {
  const stats: CsrfStats = { session: "none", operations_tried: 0, forged: {} };
  const user = users[0];
  if (!user) return { candidates: [], stats };
  const credential = await run.sessions.signIn(user.name, run.client);
  const cookies = sessionCookies(run, credential);
  if (cookies.length === 0) {
    stats.session = "header";
    return { candidates: [], stats };
  }
  stats.session = "cookie";
  const guarded = sameSiteGuard(credential, cookies);
  stats.same_site = guarded ?? "not declared (or None)";
  if (guarded === "Strict") {
    run.notes.push("the session cookie declares SameSite=Strict: browsers do not send it cross-site");
    return { candidates: [], stats };
  }
  if (guarded)
    run.notes.push(
      "the session cookie declares SameSite=Lax: only a top-level GET (a link) carries it cross-site, so only links are forged",
    );
  const candidates: EnvelopeDraft[] = [];
  // A forged sign-in or sign-up is login CSRF, which a marker cannot show; and it would sign the session in
  // as another account.
  const forgeables = operations.filter(
    (operation) => forgeable(operation) && !isAccountStep(operation.method, operation.path),
  );
  for (const operation of byForgeryValue(forgeables).slice(0, MAX_OPERATIONS)) {
    const verdict = await probeOperation(run, user.name, operation, guarded);
    stats.forged[operationKey(operation)] = verdict.outcome;
    if (verdict.outcome !== "not judged") stats.operations_tried += 1;
    candidates.push(...verdict.findings);
  }
  return { candidates, stats };
}

/**
 * What a forger would copy first: posts a page's form makes (what a browser really sends with the cookie),
 * then the rest; posts that search or sign in after those that change data. Stable within each rank.
 */
export function byForgeryValue(operations: readonly Operation[]): Operation[] {
  const rank = (operation: Operation) =>
    (operation.form ? 0 : 2) + (READ_OR_SIGN_IN_WORDS.test(operation.path) ? 1 : 0);
  return operations
    .map((operation, index) => ({ operation, index }))
    .sort((a, b) => rank(a.operation) - rank(b.operation) || a.index - b.index)
    .map(({ operation }) => operation);
}

interface Verdict {
  outcome: string;
  findings: EnvelopeDraft[];
}

async function probeOperation(
  run: ProbeRun,
  user: string,
  operation: Operation,
  sameSite: string | undefined,
): Promise<Verdict> {
  const template = await templateFor(run, user, operation);
  if (!template) return { outcome: "not judged", findings: [] };
  const places = readBackPlaces(run.map, operation);
  // A form post goes cross-site only with a cookie that does not say SameSite; a link (a top-level GET)
  // also with a Lax one.
  const shapes = [
    ...(sameSite ? [] : forgeryShapes(template)),
    ...(sameSite !== "Strict" && linkable(template) ? (["get-link"] as const) : []),
  ];
  const outcomes: string[] = [];
  const findings: EnvelopeDraft[] = [];
  let posted = false;
  let before: Snapshot[] = [];
  for (const shape of shapes) {
    // One post that lands is the finding; a link that lands is another (a GET that changes data), even then.
    if (posted && shape !== "get-link") continue;
    // Read once, and again after a forgery landed (its restore may not have taken). A busy server may
    // fail a read: one more look before the operation counts as unjudgeable.
    if (before.length === 0 || findings.length > 0) before = await snapshot(run, user, places);
    if (before.length === 0) before = await snapshot(run, user, places);
    if (before.length === 0) return { outcome: "not judged", findings };
    const judged = await judgeShape(run, user, operation, template, shape, before, places);
    if (judged === "anonymous") {
      run.notes.push(
        `${operationKey(operation)}: the forged request changed data without any session too (missing authentication, not CSRF)`,
      );
      return { outcome: "changes data anonymously", findings };
    }
    if (!judged) continue;
    findings.push(judged.finding);
    outcomes.push(`${shape}: accepted and applied`);
    if (shape !== "get-link") posted = true;
  }
  return { outcome: outcomes.join("; ") || "refused or without effect", findings };
}

async function judgeShape(
  run: ProbeRun,
  user: string,
  operation: Operation,
  template: ForgeryTemplate,
  shape: ForgeryShape,
  before: Snapshot[],
  places: readonly string[],
): Promise<{ finding: EnvelopeDraft } | "anonymous" | undefined> {
  const landed = await forgeUntilShown(run, user, template, shape, places);
  if (!landed) return undefined;
  // The control and the restore send what the forgery sent, fields an answer asked for included.
  const { forged, exchange, shown, template: complete } = landed;
  const earlier = before.find((item) => item.place === shown.place);
  const read = priorValues(earlier, shown, forged.marker);
  const prior: Prior =
    read.kind === "unknown" && template.current ? { kind: "changed", values: template.current } : read;
  const anonymous = await anonymousControl(run, user, complete, shape, places);
  const restored = await restore(run, user, complete, shape, prior, places, [
    forged.marker,
    anonymous.marker,
  ]);
  if (anonymous.changed) return "anonymous";
  return {
    finding: csrfFinding(run, { user, operation, forged, exchange, shown, earlier, anonymous, restored }),
  };
}

const ATTEMPTS = 3;

/**
 * Sends one forgery shape and reads its effect back. Other clients may write the same record between the
 * forged request and the read (overwriting the marker), or a busy server may fail one request: a shape
 * that was not refused is tried again, each time with a fresh marker, before it counts as without effect.
 */
async function forgeUntilShown(
  run: ProbeRun,
  user: string,
  template: ForgeryTemplate,
  shape: ForgeryShape,
  places: readonly string[],
): Promise<
  { forged: ForgedRequest; exchange: HttpExchange; shown: Snapshot; template: ForgeryTemplate } | undefined
> {
  let complete = template;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const forged = forge(complete, shape);
    const exchange = await send(run, user, forged.spec, { csrf: false });
    const status = exchange?.response?.status ?? 0;
    if (!exchange || status === 0 || status >= 500) continue;
    if (!accepted(run, exchange)) {
      // Refused for a field the request lacked, not for its origin: sent again with that field.
      const sent = complete.fields.map(([name]) => name);
      const completed = withMissingFields(complete, missingFieldsNamed(exchange, sent).slice(0, 3));
      if (!completed) return undefined;
      complete = completed;
      continue;
    }
    const shown = showing(await snapshot(run, user, places), forged.marker);
    if (shown) return { forged, exchange, shown, template: complete };
  }
  return undefined;
}

/** The form the signed-in page shows (fresh fields), else the operation's documented or inferred body. */
async function templateFor(
  run: ProbeRun,
  user: string,
  operation: Operation,
): Promise<ForgeryTemplate | undefined> {
  if (operation.form) {
    const sender = (spec: HttpRequestSpec) => run.sessions.send(run.client, user, spec);
    const { loaded } = await loadForm(sender, run.target.baseUrl, [operation.form.page], (forms) =>
      formPostingTo(forms, operation.path, "POST"),
    );
    if (loaded?.form) return templateFromForm(operation, loaded.form);
  }
  return templateFromBody(run.target.baseUrl, operation);
}

interface AnonymousControl {
  marker: string;
  exchange: HttpExchange | undefined;
  changed: boolean;
}

/** The same forged request without the session's cookies: it must change nothing. */
async function anonymousControl(
  run: ProbeRun,
  user: string,
  template: ForgeryTemplate,
  shape: ForgeryShape,
  places: readonly string[],
): Promise<AnonymousControl> {
  const forged = forge(template, shape);
  const exchange = await send(run, undefined, forged.spec);
  const after = await snapshot(run, user, places);
  return { marker: forged.marker, exchange, changed: showing(after, forged.marker) !== undefined };
}

/**
 * Puts back what the forged request changed: through the application's own form (fresh token) when there
 * is one, else by the request shape that just worked, now carrying the earlier values (and whatever CSRF
 * header the application's scripts would add). Answers what happened, for the evidence.
 */
async function restore(
  run: ProbeRun,
  user: string,
  template: ForgeryTemplate,
  shape: ForgeryShape,
  prior: Prior,
  places: readonly string[],
  markers: readonly string[],
): Promise<string> {
  if (prior.kind === "created")
    return "the forged request created a new record (the probe's own); nothing to put back";
  if (prior.kind === "unknown") return "what the changed record said before could not be read: not put back";
  const values = requestValues(template, prior.values);
  if (!values) return "the changed fields do not map to the request's fields: not put back";
  if (template.kind === "form") {
    await submitForm(run, user, template.operation, values, { csrf: "fresh", followRedirects: false });
  } else {
    await send(run, user, forge(template, shape, values).spec);
  }
  const after = await snapshot(run, user, places);
  const left = markers.some((marker) => showing(after, marker));
  return left
    ? "putting the earlier values back did not take"
    : `the earlier values were put back (${Object.keys(values).join(", ")})`;
}

/** Record properties → the request fields that set them (same name, or the only marked field). */
function requestValues(
  template: ForgeryTemplate,
  prior: Record<string, string>,
): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  const entries = Object.entries(prior);
  for (const field of template.textFields) {
    const same = prior[field];
    if (same !== undefined) values[field] = same;
  }
  if (Object.keys(values).length === 0 && template.textFields.length === 1 && entries.length === 1) {
    values[template.textFields[0]!] = entries[0]![1];
  }
  return Object.keys(values).length > 0 ? values : undefined;
}

function accepted(run: ProbeRun, exchange: HttpExchange): boolean {
  const status = exchange.response?.status ?? 0;
  return status >= 200 && status < 400 && run.sessions.endedSession(exchange) === undefined;
}

/** `Strict` or `Lax` when every session cookie declares it at sign-in; undefined when any goes cross-site. */
function sameSiteGuard(credential: Credential, cookies: readonly string[]): string | undefined {
  const declared = setAtSignIn(credential);
  const values = cookies.map(
    (cookie) =>
      declared
        .get(cookie)
        ?.line.match(/;\s*samesite\s*=\s*(\w+)/i)?.[1]
        ?.toLowerCase() ?? "none",
  );
  if (values.length === 0 || values.some((value) => value !== "strict" && value !== "lax")) return undefined;
  return values.includes("lax") ? "Lax" : "Strict";
}

function csrfFinding(
  run: ProbeRun,
  found: {
    user: string;
    operation: Operation;
    forged: ForgedRequest;
    exchange: HttpExchange;
    shown: Snapshot;
    earlier: Snapshot | undefined;
    anonymous: AnonymousControl;
    restored: string;
  },
): EnvelopeDraft {
  const { operation, forged, exchange, shown, anonymous } = found;
  const how = {
    "form-without-token": "a cross-site form post without any CSRF token",
    "form-with-wrong-token": "a cross-site form post carrying a wrong CSRF token",
    "text-plain-json": "a cross-site text/plain form post carrying a JSON body",
    "get-link": "a cross-site link: a GET carrying the form's fields in its query",
  }[forged.shape];
  const link = forged.shape === "get-link";
  // The flaw of a link is the GET that changes data: that is the operation a fix closes.
  const location = endpointLocation(link ? { method: "GET", path: operation.path } : operation);
  const key = location.value;
  const anonymousStatus = anonymous.exchange?.response?.status ?? "no answer";
  const exchanges = [
    { label: "forged cross-site request", exchange },
    { label: `read back ${shown.place}`, exchange: shown.exchange },
    ...(anonymous.exchange
      ? [{ label: "same request without the session", exchange: anonymous.exchange }]
      : []),
  ];
  return buildFinding(run, {
    domain: "security",
    defectClass: "csrf",
    title: `${key} accepts a forged cross-site request (${how.replace(/^a /, "")})`,
    summary: `Signed in as ${found.user}, ${how} (${link ? "Sec-Fetch-Site cross-site, no Origin, as a link sends it" : `Origin ${forged.spec.headers?.origin}`}, the session cookie sent as a browser sends it) was answered ${exchange.response?.status} and took effect: ${shown.place} then showed the inert marker it carried in ${forged.markedFields.join(", ")}. The same request without the session cookie was answered ${anonymousStatus} and changed nothing, so it is the ambient cookie that authorises it. Any site the user visits can make this change in their name${link ? ` by a link, an image or a redirect; SameSite=Lax cookies go with it, and CSRF tokens are not checked on GET by most frameworks. ${operationKey(operation)} should be the only way to make it` : ""}.`,
    impact: "Another site can change the signed-in user's data in their name, without their knowledge.",
    location,
    severity: "medium",
    confidence: 0.85,
    discriminator: `csrf-${forged.shape}`,
    exchanges,
    notes: [found.restored],
    repro: {
      title: `${key} refuses a cross-site request without a valid CSRF token`,
      steps: [
        { ...stepOf("forged", exchange), as: found.user, headers: forgedHeaders(forged.spec), csrf: false },
        { name: "read", as: found.user, method: "GET", path: shown.place },
      ],
      assertions: [
        {
          kind: "body_lacks",
          step: "read",
          text: forged.marker,
          message: `a cross-site request without a valid CSRF token must not change what ${shown.place} shows`,
        },
      ],
    },
    suggestedFixArea: "CSRF protection on state-changing requests",
  });
}

function forgedHeaders(spec: HttpRequestSpec): Record<string, string> {
  return Object.fromEntries(
    Object.entries(spec.headers ?? {}).filter(([name]) => /^(origin|sec-fetch-)/i.test(name)),
  );
}
