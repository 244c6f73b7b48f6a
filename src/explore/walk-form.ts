import { openPage } from "./walk-pages.ts";
import {
  blocked,
  evidence,
  findOne,
  type LocatorSpec,
  type MoveOutcome,
  screenOf,
  type WalkState,
} from "./walk-state.ts";

// The "complete a form" move: find a form (on the current page, else on a page reachable from the entry),
// fill its named text fields with values that say where they came from, submit it, and judge what the
// target did with it. A write the profile forbids is the setup; a server error is the product.

interface Located {
  count: number;
  elements: Array<{ name: string; visible: boolean; enabled: boolean }>;
}

interface Submitted {
  url_after: string;
  page_changed: boolean;
  requests: Array<{ method: string; url: string; status: number | null; failure: string | null }>;
}

export async function completeForm(state: WalkState, subject: string): Promise<MoveOutcome> {
  let fields = await textFields(state);
  if (typeof fields === "string") return blocked(fields);
  if (fields.length === 0) {
    const page = await pageWithForm(state, subject);
    if (typeof page !== "string") return page;
    const opened = await openPage(state, page);
    if (opened.status !== "passed") return opened;
    fields = await textFields(state);
    if (typeof fields === "string") return blocked(fields);
  }
  if (fields.length === 0) {
    return {
      status: "blocked",
      code: "LOCATOR_NOT_FOUND",
      detail: `no named text field to fill on ${screenOf(state)}`,
    };
  }

  const formPage = screenOf(state);
  const stamp = Date.now().toString(36);
  const values: string[] = [];
  for (const name of fields.slice(0, 6)) {
    const value = /e-?mail/i.test(name) ? `qaas+${stamp}@example.test` : `qaas ${subject} ${stamp}`;
    const filled = await state.call("act", {
      action: "fill",
      target: { role: "textbox", name, exact: true },
      value,
    });
    if (!filled.ok) return blocked(filled.error);
    values.push(value);
  }

  const submit = await submitButton(state, subject);
  if (!submit.found) return { status: "blocked", code: "LOCATOR_NOT_FOUND", detail: submit.why };
  const clicked = await state.call("act", { action: "click", target: submit.found });
  if (!clicked.ok) return blocked(clicked.error);
  const result = clicked.data as Submitted;
  state.url = result.url_after;
  const button = submit.found.name ?? subject;
  return judgeSubmission(state, subject, result, values, {
    page: formPage,
    fields: fields.slice(0, 6),
    button,
  });
}

/** The names of the visible, enabled text fields of the current page. */
async function textFields(state: WalkState): Promise<string[] | string> {
  const located = await state.call("locate", { target: { role: "textbox" } });
  if (!located.ok) return located.error;
  const { elements } = located.data as Located;
  return [
    ...new Set(
      elements.filter((field) => field.visible && field.enabled && field.name).map((field) => field.name),
    ),
  ];
}

/** A page reachable from the entry that has a form, preferring one whose path or title names the subject. */
async function pageWithForm(state: WalkState, subject: string): Promise<string | MoveOutcome> {
  const crawled = await state.call("crawl", { from: state.entry, as: state.persona, max_pages: 15 });
  if (!crawled.ok) return blocked(crawled.error);
  const pages = (
    crawled.data as { pages: Array<{ path: string; title: string; forms: number }> }
  ).pages.filter((page) => page.forms > 0);
  const wanted = subject.toLowerCase().split(/\s+/)[0] ?? "";
  const named = pages.find((page) => `${page.path} ${page.title}`.toLowerCase().includes(wanted));
  const page = named ?? pages[0];
  if (!page) {
    return {
      status: "blocked",
      code: "LOCATOR_NOT_FOUND",
      detail: `no page reached from ${state.entry} has a form`,
    };
  }
  return page.path;
}

async function submitButton(
  state: WalkState,
  subject: string,
): Promise<{ found?: LocatorSpec; why: string }> {
  const candidates = [
    `create ${subject}`,
    `add ${subject}`,
    `save ${subject}`,
    "create",
    "save",
    "submit",
    "add",
    subject,
  ];
  const reasons: string[] = [];
  for (const name of candidates) {
    const found = await findOne(state, { role: "button", name });
    if (found.found) return { found: found.found, why: "" };
    if (found.why.startsWith("ambiguous")) reasons.push(found.why);
  }
  return { why: reasons[0] ?? `no button to submit the ${subject} form on ${screenOf(state)}` };
}

async function judgeSubmission(
  state: WalkState,
  subject: string,
  result: Submitted,
  values: string[],
  form: { page: string; fields: string[]; button: string },
): Promise<MoveOutcome> {
  const writes = result.requests.filter((request) => request.method !== "GET");
  if (
    writes.some(
      (request) => request.failure === "net::ERR_BLOCKED_BY_CLIENT" || /blocked/i.test(request.failure ?? ""),
    )
  ) {
    return {
      status: "blocked",
      code: "ENVIRONMENT_UNAVAILABLE",
      detail: "the target profile does not allow writes (set environment.allow_writes to submit forms)",
    };
  }
  const serverError = writes.find((request) => (request.status ?? 0) >= 500);
  const screen = screenOf(state);
  if (serverError) {
    return {
      status: "failed",
      code: "ASSERTION_FAILED",
      detail: `${serverError.method} ${serverError.url} answered ${serverError.status}`,
      finding: {
        kind: "issue",
        severity: 4,
        title: `submitting the ${subject} form fails with ${serverError.status}`,
        screen,
        expected: `the ${subject} form is accepted`,
        observed: `${serverError.method} ${new URL(serverError.url).pathname} answered ${serverError.status}`,
        evidence: await evidence(state, "form-error"),
        check: { kind: "form-submit", ...form, status: serverError.status ?? 500 },
      },
    };
  }
  const refused = writes.find((request) => (request.status ?? 0) >= 400);
  if (refused) {
    // Generated values may break a rule the charter did not state: not enough to call it a defect.
    return {
      status: "failed",
      code: "ASSERTION_INCONCLUSIVE",
      detail: `the form was refused with ${refused.status}`,
    };
  }
  if (writes.length === 0 && !result.page_changed) {
    return {
      status: "failed",
      code: "ASSERTION_INCONCLUSIVE",
      detail: "submitting sent nothing and changed nothing",
      finding: {
        kind: "warning",
        severity: 2,
        title: `submitting the ${subject} form does nothing visible`,
        screen,
        expected: "the form is sent, or the page says what is missing",
        observed: "no request was sent and the page did not change",
        evidence: await evidence(state, "form-no-effect"),
      },
    };
  }
  const shown = await state.call("expect", { text: values[0]!, timeout_ms: 3000 });
  if (shown.ok && (shown.data as { verdict: string }).verdict === "pass") {
    return { status: "passed", detail: `submitted; ${screen} shows the new ${subject}` };
  }
  return {
    status: "passed",
    detail: `submitted (${writes.length} write(s)); ${screen} does not show the value entered`,
  };
}
