import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { FormInput, Operation, Page, SystemMap } from "../../map/system-map.ts";
import { withEveryFormField } from "../auditor/form-body.ts";
import { get } from "../auditor/misconfig-support.ts";
import { namedLikeAction } from "../auditor/sqli-point.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { operationKey } from "./operation-index.ts";
import { postingForms, SESSION_FIELD } from "./posting-forms.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { clonePrepared } from "./request-builder.ts";
import { looksLikeErrorPayload } from "./value-tools.ts";

// A price the page fixes and the server takes from the request (CWE-602, business logic): the form shows a
// price, total or fee the user cannot change — a hidden or read-only control — and the request that
// submits it carries it. The probe sends the operation once more, on the probe's own behalf, with that
// field set to a six-digit number no page showed, then reads the pages the user sees: one that shows the
// number now stored what the client said. A server that computes the price itself stores its own figure,
// and one that checks it refuses; neither shows the number.

// Figures a shop works out. Not `amount`: a hidden amount is as often what a donor or a payer chose on the
// page (a script copies it there), which the server rightly takes as sent.
export const MONEY_FIELD =
  /^(price|unit_?price|total|sub_?total|grand_?total|cost|fee|charge|discount)$|[_-](price|total|cost|fee)$|(?<=[a-z])(Price|Total|Cost|Fee)$/;
const MAX_WATCHED_PAGES = 10;
const SIGN_OUT = /(^|[/_-])(log|sign)[-_]?(out|off)([/_.?-]|$)/i;

/** An operation's request as a probe prepared it, and whom it is sent as. */
export interface Submission {
  operation: Operation;
  user: string | undefined;
  prepared: PreparedRequest;
}

interface FixedPrice {
  control: FormInput & { value: string };
  page: Page;
}

/** Hidden or read-only money controls, with a number in their value, of the forms that send this operation. */
export function fixedPrices(map: SystemMap, operation: Operation): FixedPrice[] {
  const found = new Map<string, FixedPrice>();
  for (const { page, form } of postingForms(map, operation))
    for (const control of form.inputs ?? []) {
      const fixed = control.type === "hidden" || control.readonly === true;
      if (
        !fixed ||
        !MONEY_FIELD.test(control.name) ||
        !/\d/.test(control.value ?? "") ||
        found.has(control.name)
      )
        continue;
      found.set(control.name, { control: control as FixedPrice["control"], page });
    }
  return [...found.values()];
}

/** A number written plain or grouped by thousands (123,456 · 123.456 · 123 456), not inside a longer one. */
export function numberPattern(digits: string): RegExp {
  const groups = digits.match(/\d{1,3}(?=(?:\d{3})*$)/g) ?? [digits];
  return new RegExp(`(?<!\\d)${groups.join("[,.'\\s\\u00a0\\u202f]?")}(?!\\d)`);
}

/** GET pages the user reaches, without side effects: those the form's page links to first. */
function watchedPages(map: SystemMap, formPage: Page, role: string): string[] {
  const reachable = map.pages.filter(
    (page) =>
      page.html !== false &&
      (page.status ?? 200) < 400 &&
      (page.roles === undefined || page.roles.includes(role)) &&
      !namedLikeAction(page.path.split("?")[0] ?? page.path) &&
      !SIGN_OUT.test(page.path),
  );
  const linked = new Set(formPage.links);
  const rank = (page: Page) => (linked.has(page.path) ? 0 : page.path.includes("?") ? 2 : 1);
  return [...new Set(reachable.sort((a, b) => rank(a) - rank(b)).map((page) => page.path))].slice(
    0,
    MAX_WATCHED_PAGES,
  );
}

async function readPages(run: ProbeRun, user: string | undefined, paths: string[]) {
  const read: Array<{ path: string; exchange: HttpExchange }> = [];
  for (const path of paths) {
    const exchange = await get(run, user, path);
    const status = exchange ? statusOf(exchange) : 0;
    if (exchange && status >= 200 && status < 300) read.push({ path, exchange });
  }
  return read;
}

function shows(exchange: HttpExchange | undefined, digits: string): boolean {
  return numberPattern(digits).test(exchange?.response?.body ?? "");
}

/** A six-digit number none of these answers shows. */
export function freshNumber(answers: Array<HttpExchange | undefined>): string {
  for (;;) {
    const digits = String(100000 + Math.floor(Math.random() * 900000));
    if (!answers.some((answer) => shows(answer, digits))) return digits;
  }
}

/** Sets a field where the request carries it: the body (a form's fields), else the query. */
function setField(prepared: PreparedRequest, name: string, value: string): boolean {
  if (prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body)) {
    prepared.body = { ...(prepared.body as Record<string, unknown>), [name]: value };
    if (name in prepared.query) prepared.query[name] = value;
    return true;
  }
  if (!prepared.operation.parameters.some((parameter) => parameter.name === name)) return false;
  prepared.query[name] = value;
  return true;
}

/**
 * The request as a browser sends the form: every field (an address any validator takes), and the values
 * the page filled in, the fixed price among them.
 */
function asTheFormSends(submission: Submission, fixed: FixedPrice): PreparedRequest {
  const prepared = withEveryFormField(clonePrepared(submission.prepared));
  const form = fixed.page.forms.find((candidate) => candidate.inputs?.includes(fixed.control));
  const body = prepared.body;
  if (form && body && typeof body === "object" && !Array.isArray(body)) {
    const filled: Record<string, unknown> = { ...(body as Record<string, unknown>) };
    for (const input of form.inputs ?? [])
      if (input.value !== undefined && !SESSION_FIELD.test(input.name)) filled[input.name] = input.value;
    prepared.body = filled;
  }
  setField(prepared, fixed.control.name, fixed.control.value);
  return prepared;
}

/** An answer that took the submission: 2xx or a redirect, not an error payload. */
export function taken(exchange: HttpExchange | undefined): exchange is HttpExchange {
  const status = exchange ? statusOf(exchange) : 0;
  return status >= 200 && status < 400 && !looksLikeErrorPayload(exchange?.response?.json);
}

/**
 * For each fixed price of the forms that send `submission`'s operation: whether a tampered one is stored.
 * At most 2 + 2 × watched pages requests per field, on the operation's baseline completed as the form
 * would send it (a baseline of only the required fields may lack the price altogether).
 */
export async function clientPriceStored(run: ProbeRun, submission: Submission): Promise<EnvelopeDraft[]> {
  const { operation, user } = submission;
  if (!["POST", "PUT", "PATCH"].includes(operation.method.toUpperCase())) return [];
  const role = run.target.profile?.users.find((candidate) => candidate.name === user)?.role ?? "anonymous";
  const findings: EnvelopeDraft[] = [];
  for (const fixed of fixedPrices(run.map, operation).slice(0, 2)) {
    const watched = watchedPages(run.map, fixed.page, role);
    const before = await readPages(run, user, watched);
    if (before.length === 0) continue;
    // The form as the page fills it must be taken first: a refusal of both says nothing of the price.
    const untouched = asTheFormSends(submission, fixed);
    if (!taken(await sendPrepared(run, user, untouched))) continue;
    const digits = freshNumber(before.map((page) => page.exchange));
    const tampered = fixed.control.value.replace(/\d+(?:[.,]\d+)?/, digits);
    const prepared = clonePrepared(untouched);
    if (!setField(prepared, fixed.control.name, tampered)) continue;
    const exchange = await sendPrepared(run, user, prepared);
    if (!taken(exchange)) continue;
    // Only pages read before too: a page not read then could have shown the number already.
    const after = await readPages(
      run,
      user,
      before.map((page) => page.path),
    );
    const shown = after.find((page) => shows(page.exchange, digits));
    if (shown)
      findings.push(findingOf(run, submission, fixed, { prepared, exchange, digits, tampered, shown }));
  }
  return findings;
}

function findingOf(
  run: ProbeRun,
  submission: Submission,
  fixed: FixedPrice,
  proof: {
    prepared: PreparedRequest;
    exchange: HttpExchange;
    digits: string;
    tampered: string;
    shown: { path: string; exchange: HttpExchange };
  },
): EnvelopeDraft {
  const { operation, user } = submission;
  const key = operationKey(operation);
  const field = fixed.control.name;
  const how = fixed.control.type === "hidden" ? "a hidden field" : "a read-only field";
  const step = stepFromPrepared("tampered", proof.prepared, user);
  const marked = (text: string | undefined) => text?.split(proof.digits).join("{{unique-number}}");
  step.path = marked(step.path) ?? step.path;
  if (step.body !== undefined) step.body = marked(step.body);
  return buildFinding(run, {
    domain: "api",
    defectClass: "validation-missing",
    title: `${key} takes ${field} from the client: ${JSON.stringify(proof.tampered)} was stored where ${fixed.page.path} fixes ${JSON.stringify(fixed.control.value)}`,
    summary: `${fixed.page.path} shows ${field} as ${how} (${JSON.stringify(fixed.control.value)}) in the form that sends ${key}. Sent again with ${field} = ${JSON.stringify(proof.tampered)}, ${key} answered ${statusOf(proof.exchange)}, and ${proof.shown.path}, which did not show ${proof.digits} before, shows it now: the server stored the ${field} the request named instead of working it out itself.`,
    impact:
      "Anyone can pay what they like: a price, total or fee the page presents as fixed is whatever the request says.",
    location: endpointLocation(operation),
    related: [
      { kind: "page", value: fixed.page.path },
      { kind: "page", value: proof.shown.path },
    ],
    severity: "high",
    confidence: 0.9,
    discriminator: `client-price:${field}`,
    exchanges: [
      { label: "tampered", exchange: proof.exchange },
      { label: "page-after", exchange: proof.shown.exchange },
    ],
    repro: {
      title: `${key} does not store a ${field} the client chose`,
      steps: [step, { name: "page", as: user, method: "GET", path: proof.shown.path }],
      assertions: [
        {
          kind: "number_lacks",
          step: "page",
          digits: "{{unique-number}}",
          message: `${proof.shown.path} must not show the ${field} the request named`,
        },
      ],
    },
  });
}
