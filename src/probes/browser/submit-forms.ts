import { randomBytes } from "node:crypto";
import type { BrowserContext } from "playwright-core";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { SystemMap } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { guideFinding } from "../guide/guide-finding.ts";
import { pathOnly } from "../guide/path-templates.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { forbiddenRequests } from "../http/profile-endpoints.ts";
import { webRoles } from "../pages/web-session.ts";
import { openProbeRun, type ProbeRun } from "../session/probe-run.ts";
import { pagesFor } from "./browse-pages.ts";
import { type BrowsingRole, browserSessionFor, DESKTOP } from "./browser-session.ts";
import { RISKY_CONTROL } from "./dead-controls.ts";
import { describeForms, type FormDescription } from "./form-fill.ts";
import { type JourneyRecord, runJourney, type SentRequest } from "./form-journey.ts";
import { type JourneyVerdict, judgeJourney, showedNothing } from "./journey-judge.ts";
import { closePage, loadPage } from "./page-load.ts";

// submit_forms: the journeys of the pinned map's pages, those the crawl saw a form on first, three at once
// and two forms a page before the next page (a page's other forms wait for the end of the pass). Each form
// (once per name and action, as the first role that sees it) is filled with valid values and submitted in
// the run's Chromium; what the page said is compared with what the server answered. A verdict holds only
// when a second journey, on a fresh load with fresh values, reaches the same one. Only on targets whose
// profile allows writes, and never a form that signs in, uploads, deletes, pays or updates a record the
// run did not create.

/** Journeys mostly wait on the server and the page's quiet: a few side by side. */
const JOURNEYS_AT_ONCE = 3;
/** Forms tried on a page before the next page is opened; its other forms wait for the end of the pass. */
const FIRST_FORMS_PER_PAGE = 2;

export interface SubmitFormsOptions {
  roles?: string[];
  max_forms?: number;
  max_seconds?: number;
  /** Journeys side by side (default 3); not offered to agents. */
  at_once?: number;
}

interface Tried {
  role: string;
  template: string;
  form: string;
  verdict: string;
}

export async function submitForms(
  context: ToolContext,
  options: SubmitFormsOptions = {},
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const run = openProbeRun(context, "submit_forms", { max_requests: 50 });
  if (typeof run === "string") return run;
  const map = context.systemMap();
  if (!map) return "no system map is pinned for this run yet: MAPPER runs first";
  if (!run.target.writesAllowed)
    return "the target's profile does not allow writes: no form is submitted (journeys create records)";
  const maxForms = options.max_forms ?? 20;
  const origin = new URL(run.target.baseUrl).origin;
  const session = browserSessionFor(context);
  const started = Date.now();
  // Stretched while pages load slowly (browse-pace.ts): a busy machine would otherwise try one form.
  const deadline = () => session.pace.deadline(started, (options.max_seconds ?? 45) * 1000);
  const refuse = forbiddenRequests(run.target.profile);
  const load = { writesAllowed: true, refuse };
  const { roles, users } = webRoles(context, run.target, options.roles);
  const entry = run.target.profile?.ui?.entry ?? "/";
  const tried: Tried[] = [];
  const formsDone = new Set<string>();
  const templatesDone = new Set<string>();

  const contexts = new Map<string, Promise<BrowserContext | undefined>>();
  const contextOf = (role: BrowsingRole): Promise<BrowserContext | undefined> => {
    let browsing = contexts.get(role.role);
    if (!browsing) {
      browsing = session.context(role, origin, DESKTOP).catch(() => undefined);
      contexts.set(role.role, browsing);
    }
    return browsing;
  };
  const visits = formPagesFirst(
    roles.flatMap((role) => pagesFor(map, role.role, entry).map((page) => ({ role, ...page }))),
    map,
  );
  const outOfTime = () => Date.now() > deadline() || context.signal.aborted || tried.length >= maxForms;
  const found: Array<{ order: number; draft: EnvelopeDraft }> = [];
  // Journeys side by side can disturb each other where a form's anti-forgery token is renewed on every
  // page load: a failure seen then is confirmed later, by a journey that runs alone.
  const toConfirm: Array<{
    form: FormAt;
    first: JourneyRecord;
    verdict: Exclude<JourneyVerdict, { kind: "none" }>;
    entry: Tried;
  }> = [];
  const journey = async (form: FormAt): Promise<void> => {
    const { role, template, described } = form;
    const first = await runJourney(session, form.browsing, form.url, described.index, token(), load);
    const verdict = judgeJourney(first);
    const entry: Tried = { role: role.role, template, form: described.name, verdict: describe(verdict) };
    tried.push(entry);
    if (verdict.kind !== "none") toConfirm.push({ form, first, verdict, entry });
  };
  // A page's first forms, then the next page: one page with a dozen forms does not take the whole pass.
  const later: FormAt[] = [];
  const atOnce = options.at_once ?? JOURNEYS_AT_ONCE;
  let pagesOpened = 0;
  let pagesLeft = 0;
  await mapConcurrent(visits, atOnce, async ({ role, path, template }, visitIndex) => {
    if (templatesDone.has(template)) return;
    templatesDone.add(template);
    if (outOfTime()) {
      pagesLeft += 1;
      return;
    }
    const browsing = await contextOf(role);
    if (!browsing) return void templatesDone.delete(template);
    const url = new URL(path, origin).href;
    pagesOpened += 1;
    const loaded = await loadPage(session, browsing, url, { ...load, writesAllowed: false });
    const forms = loaded.error || (loaded.status ?? 0) >= 400 ? [] : await describeForms(loaded.page);
    await closePage(session, loaded);
    const untried = forms.filter((form) => {
      const key = `${form.name}|${pathOnly(new URL(form.action, origin).pathname)}`;
      if (form.skip || formsDone.has(key) || RISKY_CONTROL.test(`${form.name} ${form.submitLabel}`))
        return false;
      formsDone.add(key);
      return true;
    });
    const here = untried.map((described, index) => ({
      role,
      browsing,
      url,
      template,
      described,
      order: visitIndex * 1000 + index,
    }));
    later.push(...here.slice(FIRST_FORMS_PER_PAGE));
    for (const form of here.slice(0, FIRST_FORMS_PER_PAGE)) {
      if (outOfTime()) return later.push(form);
      await journey(form);
    }
  });
  later.sort((a, b) => a.order - b.order);
  let formsLeft = 0;
  await mapConcurrent(later, atOnce, async (form) => {
    if (outOfTime()) formsLeft += 1;
    else await journey(form);
  });
  toConfirm.sort((a, b) => a.form.order - b.form.order);
  for (const { form, first, verdict, entry } of toConfirm) {
    if (context.signal.aborted) break;
    const { role, template, described } = form;
    let again = await runJourney(session, form.browsing, form.url, described.index, token(), load);
    let second = judgeJourney(again);
    // A confirming journey in which nothing at all happened, after a first that sent its request, most
    // likely lost its click to a busy machine rather than meeting another application: a third decides.
    if (second.kind !== verdict.kind && showedNothing(again) && first.sent.length > 0) {
      again = await runJourney(session, form.browsing, form.url, described.index, token(), load);
      second = judgeJourney(again);
    }
    if (second.kind !== verdict.kind) {
      entry.verdict += `; not confirmed: ${describe(second)}`;
      continue;
    }
    const where = { role: role.role, user: users[role.role], template, form: described.name };
    found.push({ order: form.order, draft: draftFor(run, where, first, again, verdict) });
  }
  return {
    candidates: found.sort((a, b) => a.order - b.order).map((each) => each.draft),
    stats: {
      pages_opened: pagesOpened,
      pages_left: pagesLeft,
      forms_tried: tried.length,
      forms_left: formsLeft,
      tried,
    },
  };
}

/**
 * The pages to open, those the map saw a form on first (a crawl reads the served HTML, so a form a script
 * builds is not among them): on a busy machine the pass's time goes to journeys, not to formless pages.
 * Otherwise in the order given, which keeps each role's pages in the map's order.
 */
export function formPagesFirst<Visit extends { path: string }>(visits: Visit[], map: SystemMap): Visit[] {
  const withForms = new Set(map.pages.filter((page) => page.forms.length > 0).map((page) => page.path));
  return [
    ...visits.filter((visit) => withForms.has(visit.path)),
    ...visits.filter((visit) => !withForms.has(visit.path)),
  ];
}

/** A form found on a page, waiting for its journey. */
interface FormAt {
  role: BrowsingRole;
  browsing: BrowserContext;
  url: string;
  template: string;
  described: FormDescription;
  /** Where its page and place on the page put it: candidates are answered in this order. */
  order: number;
}

function token(): string {
  return randomBytes(4).toString("hex");
}

function describe(verdict: JourneyVerdict): string {
  if (verdict.kind === "misleading-copy")
    return `misleading-copy: "${verdict.claim}" while ${verdict.failed.method} answered ${verdict.failed.status ?? verdict.failed.failure}`;
  return `${verdict.kind}: ${verdict.reason}`;
}

/** The browser's request as an exchange a person can replay with curl. */
function exchangeOf(sent: SentRequest, user: string | undefined): HttpExchange {
  const json = (() => {
    try {
      return sent.responseBody ? (JSON.parse(sent.responseBody) as unknown) : undefined;
    } catch {
      return undefined;
    }
  })();
  return {
    sequence: 0,
    startedAt: new Date().toISOString(),
    request: {
      method: sent.method,
      url: sent.url,
      headers: sent.body?.trim().startsWith("{") ? { "content-type": "application/json" } : {},
      ...(sent.body ? { body: sent.body } : {}),
    },
    response:
      sent.status === undefined
        ? undefined
        : {
            status: sent.status,
            headers: {},
            setCookies: [],
            contentType: json === undefined ? "text/html" : "application/json",
            body: sent.responseBody ?? "",
            truncated: false,
            json,
          },
    ...(sent.failure ? { error: sent.failure } : {}),
    durationMs: 0,
    ...(user ? { user } : {}),
  };
}

function draftFor(
  run: ProbeRun,
  where: { role: string; user: string | undefined; template: string; form: string },
  journey: JourneyRecord,
  again: JourneyRecord,
  verdict: Exclude<JourneyVerdict, { kind: "none" }>,
): EnvelopeDraft {
  const failed = verdict.failed;
  const page = new URL(journey.page).pathname;
  const open = `Open ${page} as ${where.role}, fill "${where.form}" with valid values and submit it.`;
  const facts = {
    role: where.role,
    form: where.form,
    verdict,
    journeys: [journey, again].map((each) => ({ ...each, screenshot: undefined })),
  };
  const exchanges = failed
    ? [{ label: "the-request-the-form-sent", exchange: exchangeOf(failed, where.user) }]
    : [];
  const repro = failed
    ? {
        title: `${failed.method} sent by "${where.form}" on ${where.template} succeeds`,
        steps: [
          {
            name: "submit",
            ...(where.user ? { as: where.user } : {}),
            method: failed.method,
            path: `${new URL(failed.url).pathname}${new URL(failed.url).search}`,
            ...(failed.body ? { body: failed.body, contentType: "application/json" } : {}),
          },
        ],
        assertions: [
          {
            kind: "status_below" as const,
            step: "submit",
            value: verdict.kind === "misleading-copy" ? 400 : 500,
            message: `the request "${where.form}" sends should succeed`,
          },
        ],
      }
    : undefined;
  if (verdict.kind === "misleading-copy")
    return guideFinding(run, {
      defectClass: "misleading-copy",
      template: where.template,
      discriminator: where.form,
      title: `"${where.form}" on ${where.template} says it worked while the request failed`,
      summary: `Submitting "${where.form}" on ${page} as ${where.role} with valid values shows "${verdict.claim}", but the ${verdict.failed.method} ${new URL(verdict.failed.url).pathname} it sent answered ${verdict.failed.status ?? verdict.failed.failure}; a second submission with fresh values did the same.`,
      impact:
        "People are told their action succeeded when it did not: what they entered is lost without a word.",
      severity: "medium",
      confidence: 0.8,
      exchanges,
      facts,
      ...(journey.screenshot ? { screenshot: journey.screenshot } : {}),
      steps: [
        open,
        `The page shows "${verdict.claim}".`,
        `The request behind it answered ${verdict.failed.status ?? verdict.failed.failure}.`,
      ],
      ...(repro ? { repro } : {}),
      suggestedFixArea: "the form's submit handler: check the answer before announcing success",
    });
  return guideFinding(run, {
    domain: "ui",
    defectClass: "broken-journey",
    template: where.template,
    discriminator: where.form,
    title: `Submitting "${where.form}" on ${where.template} fails: ${verdict.reason}`,
    summary: `Submitting "${where.form}" on ${page} as ${where.role} with valid values: ${verdict.reason}; a second submission with fresh values did the same.`,
    impact: "People cannot complete this journey: what the form is for does not happen.",
    severity: "medium",
    confidence: 0.75,
    exchanges,
    facts,
    ...(journey.screenshot ? { screenshot: journey.screenshot } : {}),
    steps: [open, verdict.reason],
    ...(repro ? { repro } : {}),
    suggestedFixArea: "the form's submit handler and the operation it calls",
  });
}
