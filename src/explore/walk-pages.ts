import { wordsOfPath } from "./charter-goal.ts";
import type { StepCode } from "./step-codes.ts";
import { codeOfOpenedPage, type PageOpened } from "./step-outcome.ts";
import { blocked, evidence, findOne, type MoveOutcome, screenOf, type WalkState } from "./walk-state.ts";

// The page moves of a walk: open a page, find a way to the page the charter names, check a text it must
// show, and (with no goal at all) follow the entry page's links. A page that cannot be opened is the
// environment; a page that opens and is wrong is the product.

export async function openPage(state: WalkState, path: string): Promise<MoveOutcome> {
  const opened = await state.call("navigate", { path, as: state.persona });
  if (!opened.ok) {
    const outcome = blocked(opened.error);
    if (outcome.code === "ENVIRONMENT_UNAVAILABLE") state.unreachable = opened.error;
    return outcome;
  }
  const page = opened.data as PageOpened;
  state.url = page.url;
  const code = codeOfOpenedPage(page);
  if (code === "ENVIRONMENT_UNAVAILABLE") state.unreachable = page.error ?? `${path} did not answer`;
  if (code) return { status: "blocked", code, detail: page.error ?? `${path} answered ${page.status}` };
  state.unreachable = undefined;
  if ((page.status ?? 0) >= 400) return await pageFailed(state, path, page.status ?? 0);
  return { status: "passed", detail: `${page.status} ${page.title}`.trim() };
}

export async function reachPage(
  state: WalkState,
  page: { path?: string; words?: string },
): Promise<MoveOutcome> {
  const words = page.words ?? (page.path ? wordsOfPath(page.path) : undefined);
  let notes = "";
  if (words) {
    const link = await findOne(state, { role: "link", name: words });
    if (link.found) {
      const clicked = await state.call("act", { action: "click", target: link.found });
      if (!clicked.ok) return blocked(clicked.error);
      state.url = (clicked.data as { url_after: string }).url_after;
      if (page.path && !new URL(state.url).pathname.startsWith(page.path)) {
        return {
          status: "passed",
          detail: `the link "${words}" led to ${state.url} (the charter named ${page.path})`,
        };
      }
      return { status: "passed", detail: `followed the link "${words}" to ${state.url}` };
    }
    notes = link.why;
  }
  if (page.path) {
    const opened = await openPage(state, page.path);
    const how = `${notes ? `${notes}; ` : ""}opened ${page.path} directly`;
    return { ...opened, detail: opened.detail ? `${how}: ${opened.detail}` : how };
  }
  // Only words, and no link on this page: look for a page further in whose title or path carries them.
  const crawled = await state.call("crawl", { from: state.entry, as: state.persona, max_pages: 15 });
  if (!crawled.ok) return blocked(crawled.error);
  const pages = (crawled.data as { pages: Array<{ path: string; title: string }> }).pages;
  const wanted = words!.toLowerCase();
  const match = pages.find(
    (candidate) =>
      candidate.title.toLowerCase().includes(wanted) ||
      candidate.path.toLowerCase().includes(wanted.replace(/\s+/g, "-")),
  );
  if (!match)
    return {
      status: "blocked",
      code: link404(notes),
      detail: `${notes}; no page reached from ${state.entry} is titled "${words}"`,
    };
  const opened = await openPage(state, match.path);
  return { ...opened, detail: `${notes}; found ${match.path} ("${match.title}") by crawling` };
}

export async function expectText(state: WalkState, text: string): Promise<MoveOutcome> {
  const checked = await state.call("expect", { text, timeout_ms: 3000 });
  if (!checked.ok) return blocked(checked.error);
  const answer = checked.data as { verdict: string; code: string; detail: string };
  if (answer.verdict === "pass") return { status: "passed", detail: answer.detail };
  const screen = screenOf(state);
  return {
    status: "failed",
    code: "ASSERTION_FAILED",
    detail: `${answer.code}: ${answer.detail}`,
    finding: {
      kind: "issue",
      severity: 3,
      title: `"${text}" is not shown on ${screen}`,
      screen,
      expected: `the page shows "${text}"`,
      observed: answer.detail,
      evidence: await evidence(state, "missing-text"),
      check: { kind: "text-shown", page: screen, text },
    },
  };
}

/** With no goal in the charter: follow the entry page's links and report pages that fail to render. */
export async function followLinks(state: WalkState): Promise<MoveOutcome> {
  const crawled = await state.call("crawl", { from: state.entry, as: state.persona, max_pages: 15 });
  if (!crawled.ok) return blocked(crawled.error);
  const pages = (crawled.data as { pages: Array<{ path: string; status: number | null; error?: string }> })
    .pages;
  const broken = pages.find((page) => (page.status ?? 0) >= 500);
  if (broken) return pageFailed(state, broken.path, broken.status ?? 500, true);
  return { status: "passed", detail: `${pages.length} page(s) reached, none failed to render` };
}

/** A page answering an error status: a server error is an issue, a missing page a lesser one. */
export async function pageFailed(
  state: WalkState,
  path: string,
  status: number,
  navigate = false,
): Promise<MoveOutcome> {
  if (navigate) {
    const opened = await state.call("navigate", { path, as: state.persona });
    if (opened.ok) state.url = (opened.data as PageOpened).url;
  }
  return {
    status: "failed",
    code: "ASSERTION_FAILED",
    detail: `${path} answered ${status}`,
    finding: {
      kind: "issue",
      severity: status >= 500 ? 4 : 3,
      title: `${path} answers ${status}`,
      screen: path,
      expected: `${path} opens`,
      observed: `the server answered ${status}`,
      evidence: await evidence(state, "error-page"),
      check: { kind: "page-status", page: path, status },
    },
  };
}

/** A locator with no match is LOCATOR_NOT_FOUND; one that stayed ambiguous is LOCATOR_AMBIGUOUS. */
function link404(notes: string): StepCode {
  return /ambiguous|match \d+/.test(notes) ? "LOCATOR_AMBIGUOUS" : "LOCATOR_NOT_FOUND";
}
