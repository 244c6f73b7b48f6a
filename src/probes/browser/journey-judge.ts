import type { JourneyRecord, SentRequest } from "./form-journey.ts";

// What a form journey shows, judged by comparing what the page said with what the server answered:
//   - misleading-copy: the page announces success while the request it sent failed (4xx/5xx or no answer);
//   - broken-journey: the server failed (5xx) behind the scenes or the browser landed on an error page, or
//     the submission did nothing at all (no request, no navigation, no change on the page).
// A request refused with a 4xx while the page honestly says it failed is not judged: the values a probe
// chose may break a rule of the application the form does not state. Nor is landing on a 4xx page other
// than "no such address" (404, 405, 410): a refused anti-forgery token (renewed by a page load elsewhere
// in the run), a permission or an unstated rule all answer that way, and none proves the journey broken.

export type JourneyVerdict =
  | { kind: "misleading-copy"; failed: SentRequest; claim: string }
  | { kind: "broken-journey"; reason: string; failed?: SentRequest }
  | { kind: "none"; reason: string };

const SUCCESS =
  /\b(?:success(?:ful(?:ly)?)?|saved|created|sent|submitted|thank(?:s| you)|updated|added|posted|received|subscribed|registered|reserved|booked|scheduled|confirmed|all set|we(?:'ll| will) (?:get back|reply|respond|be in touch|contact you))\b/i;
// A line that names success only to deny it ("Not saved: …", "Nothing was sent", "wasn't created") admits
// the failure: it is the honest answer, not a claim.
const FAILURE =
  /\b(?:error|failed|failure|unsuccessful|could ?n[o']t|cannot|can't|unable|invalid|required|problem|wrong|denied|forbidden|not found|not allowed|try again|rejected|declined|refused|already (?:taken|exists|in use|registered)|(?:is|was|are|were) taken|unavailable|not|never|nothing|(?:was|were|is|are|has|have|did|does|do)n't)\b/i;
/** A form that posts where nothing answers: the journey is broken whatever values it carried. */
const NO_SUCH_ADDRESS = new Set([404, 405, 410]);
const ERROR_TITLE = /\b(?:error|exception|traceback|internal server|bad gateway|not found|\d{3})\b/i;

/** Lines the page shows after the journey that it did not show before. */
export function addedLines(before: string, after: string): string[] {
  const known = new Set(
    before
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean),
  );
  return after
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !known.has(line));
}

export function judgeJourney(record: JourneyRecord): JourneyVerdict {
  if (record.skipped) return { kind: "none", reason: record.skipped };
  if (record.refused.length > 0)
    return {
      kind: "none",
      reason: `the journey would change what the run did not create (${record.refused[0]})`,
    };
  const writes = record.sent.filter((each) => each.method !== "GET");
  const failed = writes.find((each) => each.failure !== undefined || (each.status ?? 0) >= 400);
  const added = addedLines(record.textBefore, record.textAfter);
  const claim = added.find((line) => SUCCESS.test(line) && !FAILURE.test(line));
  const admitsFailure = added.some((line) => FAILURE.test(line));
  if (failed && claim && !admitsFailure) return { kind: "misleading-copy", failed, claim };
  const serverError = record.sent.find((each) => (each.status ?? 0) >= 500);
  if (serverError)
    return {
      kind: "broken-journey",
      reason: `the server answered ${serverError.status}`,
      failed: serverError,
    };
  const landedStatus = record.landed?.status ?? 0;
  if (landedStatus >= 400 && landedStatus < 500 && !NO_SUCH_ADDRESS.has(landedStatus))
    return { kind: "none", reason: `the submission was refused (${landedStatus}); not judged` };
  if (record.landed && (landedStatus >= 400 || ERROR_TITLE.test(record.landed.title)))
    return {
      kind: "broken-journey",
      reason: `the browser landed on an error page (${record.landed.status ?? record.landed.title})`,
    };
  if (showedNothing(record))
    return {
      kind: "broken-journey",
      reason: `submitting did nothing: no request, no navigation, no change on the page${record.exceptions[0] ? ` (the handler threw: ${record.exceptions[0].split("\n")[0]})` : ""}`,
    };
  return { kind: "none", reason: failed ? `the request failed and the page says so` : "the journey worked" };
}

/** Nothing observable followed the submission: no request, no navigation, no change on the page. */
export function showedNothing(record: JourneyRecord): boolean {
  return record.sent.length === 0 && !record.landed && !record.domChanged;
}

/** Two journeys agree when they reach the same verdict kind (with fresh values each time). */
export function sameVerdict(first: JourneyVerdict, second: JourneyVerdict): boolean {
  return first.kind === second.kind;
}
