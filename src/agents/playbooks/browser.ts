import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { PlaybookSession } from "../playbook.ts";
import { definePlaybook } from "../playbook.ts";
import { bugBash } from "./bug-bash.ts";
import { emitCandidates } from "./emit-candidates.ts";

// BROWSER without a model: check that a map is pinned, run `probe_dom_xss` and `submit_forms`, then
// `browse_pages` over every mapped page and role, and emit every candidate. The tools confirm each
// candidate (a second load, a second journey) before answering; the playbook adds no judgement of its own.

const BROWSE_SECONDS = 90;

/** What a browser tool answers; each tool's stats are its own. */
interface PassAnswer<Stats> {
  candidates: EnvelopeDraft[];
  stats?: Stats;
}

type BrowseAnswer = PassAnswer<{
  templates?: number;
  roles?: Array<{ role: string; pages: number; error?: string }>;
  stretch?: number;
  overtimeSeconds?: number;
}>;

type FormsAnswer = PassAnswer<{
  forms_tried?: number;
  pages_opened?: number;
  pages_left?: number;
  forms_left?: number;
}>;

export default definePlaybook(async (session: PlaybookSession) => {
  // A bug bash walks charters in parallel sessions instead of the page checks (bug-bash.ts).
  if (session.task.mode === "bug-bash") return bugBash(session);
  const map = await session.call<{ pages: unknown[] }>("get_system_map", { section: "pages" });
  if (!map.ok) {
    session.log(`no system map (${map.error}); the pages to open come from the map`);
    return;
  }
  if (session.signal.aborted) return;
  // Two short passes first, side by side in tabs of their own (they mostly wait on pages). Journeys write
  // (records of the run's own); the tool refuses on targets that do not allow writes.
  const [xss, forms] = await Promise.all([
    session.call<PassAnswer<unknown>>("probe_dom_xss", { max_seconds: 30 }),
    session.call<FormsAnswer>("submit_forms", { max_seconds: 30 }),
  ]);
  // Emitted in a fixed order, whichever pass finished first.
  if (xss.ok) {
    const found = await emitCandidates(session, "probe_dom_xss", xss.data.candidates, new Set());
    session.log(`probe_dom_xss: ${xss.data.candidates.length} candidate(s), ${found} emitted`);
  } else session.log(`probe_dom_xss did not run: ${xss.error}`);
  if (forms.ok) {
    const found = await emitCandidates(session, "submit_forms", forms.data.candidates, new Set());
    const { forms_tried = 0, pages_opened = 0, pages_left = 0, forms_left = 0 } = forms.data.stats ?? {};
    session.log(
      `submit_forms: ${forms_tried} form(s) tried on ${pages_opened} page(s), out of time for ${pages_left} page(s) and ${forms_left} form(s); ${forms.data.candidates.length} candidate(s), ${found} emitted`,
    );
  } else session.log(`submit_forms did not run: ${forms.error}`);
  if (session.signal.aborted) return;
  // The page checks last: their bound stretches while pages load slowly and goes on while other agents
  // still work, so the pass ends with the phase rather than before it.
  const answer = await session.call<BrowseAnswer>("browse_pages", { max_seconds: BROWSE_SECONDS });
  if (!answer.ok) {
    session.log(`browse_pages did not run: ${answer.error}`);
    return;
  }
  const emitted = await emitCandidates(session, "browse_pages", answer.data.candidates, new Set());
  const roles = (answer.data.stats?.roles ?? [])
    .map((role) => `${role.role} ${role.pages}${role.error ? ` (${role.error})` : ""}`)
    .join(", ");
  const stretch = answer.data.stats?.stretch ?? 1;
  const overtime = answer.data.stats?.overtimeSeconds ?? 0;
  session.log(
    `${answer.data.stats?.templates ?? 0} page template(s) browsed (${roles || "no role"}); ${answer.data.candidates.length} candidate(s), ${emitted} emitted${stretch > 1 ? `; pages or the machine were slow, so the time bound was stretched ×${stretch}` : ""}${overtime > 0 ? `; went on ${overtime} s past its bound while other agents worked` : ""}`,
  );
});
