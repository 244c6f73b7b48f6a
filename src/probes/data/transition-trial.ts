import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isSafeWrite, operationKey } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { OwnedRecord, RecordCreator } from "./record-creator.ts";
import { changedWords, type Snapshot, sendOnRecord, snapshot, snapshotDeltas } from "./state-reads.ts";

// One-shot state transitions (CWE-841, CWE-837, CWE-362): an action under an item (`POST /loans/{id}/return`)
// that moves the record's state and adds to one of its numbers. On a record of the probe's own it does the
// action once, reads the record back (a state word and a number must both have moved: a workflow step, not
// a plain counter like a "like"), then repeats it. A repeat that is accepted and moves the number by the
// same amount again, twice over, is a broken one-shot transition. When the repeat is refused, the same
// action is sent several times at once to a fresh record: a number moved by a multiple of the one-shot
// amount means the state check runs before the write and not in it (check-then-act). Every judgement is
// on numbers read back through the record's own read operation.

const CONCURRENT = 6;
const RACE_ROUNDS = 3;

export interface TransitionOutcome {
  target: string;
  result: string;
}

/** Actions under an item path that take no required input: `POST {item}/{verb}`. */
export function transitionOperations(family: ResourceFamily): Operation[] {
  if (!family.item) return [];
  const item = toTemplateForm(family.item);
  return family.children.filter((operation) => {
    if (operation.method.toUpperCase() !== "POST" || !isSafeWrite(operation)) return false;
    const rest = toTemplateForm(operation.path).slice(item.length);
    if (!/^\/[A-Za-z][A-Za-z0-9_-]*$/.test(rest)) return false;
    const schema = requestSchema(operation) as { required?: unknown } | undefined;
    const required = Array.isArray(schema?.required) ? schema.required.length : 0;
    return !(operation.request_body?.required && required > 0);
  });
}

interface Step {
  label: string;
  exchange: HttpExchange | undefined;
}

export async function trialTransition(
  run: ProbeRun,
  creator: RecordCreator,
  createFamily: ResourceFamily,
  operation: Operation,
  users: ReadonlyArray<string | undefined>,
  /** The owner's summaries (see `summaryReads`), read beside the record in the repeat trial. */
  summaries: readonly Operation[] = [],
): Promise<EnvelopeDraft | string> {
  const fresh = async (): Promise<OwnedRecord | undefined> => {
    for (const user of users) {
      const record = (await creator.create(createFamily, user)).record;
      if (record) return record;
    }
    return undefined;
  };
  const record = await fresh();
  if (!record) return "no record of the probe's own could be created";
  const before = await snapshot(creator, record, summaries);
  if (!before) return "the created record cannot be read back";
  const first = await sendOnRecord(run, record, operation);
  if (!first.exchange || !isSuccess(first.exchange))
    return `the first transition answered ${statusOf(first.exchange)}`;
  const afterFirst = await snapshot(creator, record, summaries);
  if (!afterFirst) return "the record cannot be read after the transition";
  const moved = changedWords(before.state, afterFirst.state);
  const deltas = snapshotDeltas(before, afterFirst, { summaries: true });
  if (moved.length === 0) return "no state word changed: not a workflow step";
  if (!isOneShot(operation, moved))
    return "the new state does not name the action and no 409 is documented: it may repeat by design";
  if (Object.keys(deltas).length === 0) return "no number changed: nothing a repeat could corrupt";
  const steps: Step[] = [
    { label: "create", exchange: record.exchange },
    ...reads("read-before", before),
    { label: "transition", exchange: first.exchange },
    ...reads("read-after-transition", afterFirst),
  ];
  const repeat = await sendOnRecord(run, record, operation);
  steps.push({ label: "repeat", exchange: repeat.exchange });
  if (repeat.exchange && isSuccess(repeat.exchange)) {
    const afterRepeat = await snapshot(creator, record, summaries);
    if (!afterRepeat) return "the record cannot be read after the repeat";
    steps.push(...reads("read-after-repeat", afterRepeat));
    const again = sameMoves(deltas, snapshotDeltas(afterFirst, afterRepeat, { summaries: true }));
    const stillThere = changedWords(afterFirst.state, afterRepeat.state).length === 0;
    if (again.length > 0 && stillThere) {
      // A third time rules out a number that moves on its own: the same step once more.
      const third = await sendOnRecord(run, record, operation);
      const afterThird = await snapshot(creator, record, summaries);
      if (!third.exchange || !isSuccess(third.exchange) || !afterThird)
        return "the third attempt was refused";
      const confirmed = sameMoves(deltas, snapshotDeltas(afterRepeat, afterThird, { summaries: true }));
      if (confirmed.length === 0) return "the repeated effect did not recur";
      steps.push({ label: "third", exchange: third.exchange }, ...reads("read-after-third", afterThird));
      return repeatedFinding(run, operation, moved[0]!, confirmed, deltas, steps);
    }
  }
  // A repeat in turn is refused or changes nothing: does that hold when the requests arrive together?
  for (let round = 1; round <= RACE_ROUNDS; round += 1) {
    const target = await fresh();
    if (!target) return "no fresh record for the concurrent trial";
    const start = await snapshot(creator, target);
    if (!start) return "the fresh record cannot be read back";
    const answers = await run.client.together(
      () => Promise.all(Array.from({ length: CONCURRENT }, () => sendOnRecord(run, target, operation))),
      CONCURRENT,
    );
    const accepted = answers.filter((answer) => answer.exchange && isSuccess(answer.exchange));
    const end = await snapshot(creator, target);
    if (!end) return "the fresh record cannot be read after the concurrent trial";
    const together = snapshotDeltas(start, end);
    const multiplied = Object.entries(deltas)
      .map(([field, once]) => ({ field, once, times: Math.round((together[field] ?? 0) / once) }))
      .filter((entry) => nearly(entry.times * entry.once, together[entry.field] ?? 0))
      .filter((entry) => entry.times >= 2 && entry.times <= accepted.length);
    if (multiplied.length === 0) continue;
    return raceFinding(run, operation, moved[0]!, multiplied, {
      steps: [
        ...steps,
        ...reads("concurrent-read-before", start),
        ...accepted
          .slice(0, 2)
          .map((answer, index) => ({ label: `concurrent-${index + 1}`, exchange: answer.exchange })),
        ...reads("concurrent-read-after", end),
      ],
      sent: CONCURRENT,
      accepted: accepted.length,
      round,
      refusedStatus: statusOf(repeat.exchange),
    });
  }
  return `a repeat in turn answers ${statusOf(repeat.exchange)} without a second effect, also with ${CONCURRENT} at once (${RACE_ROUNDS} rounds)`;
}

function reads(label: string, seen: Snapshot): Step[] {
  return seen.exchanges.map((exchange, index) => ({
    label: index === 0 ? label : `${label}-parent`,
    exchange,
  }));
}

/**
 * Whether the action is a one-shot step rather than one meant to repeat (`add`, `like`, `deposit`): the state
 * it sets names it (`return` → returned, `pay` → paid, `mark-shipped` → shipped), or its document promises a
 * 409 for a repeat.
 */
export function isOneShot(operation: Operation, moved: Array<{ to: string }>): boolean {
  if (Object.keys(operation.responses ?? {}).includes("409")) return true;
  const segment = toTemplateForm(operation.path).split("/").pop() ?? "";
  const words = segment
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((word) => word.length >= 3);
  return moved.some(({ to }) => {
    const state = to.toLowerCase().replace(/[^a-z]/g, "");
    return words.some((word) => {
      let shared = 0;
      while (shared < word.length && word[shared] === state[shared]) shared += 1;
      return shared >= Math.min(word.length - 1, 4);
    });
  });
}

/** Fields that moved by the one-shot amount again (money in floating point: to a millionth). */
function sameMoves(once: Record<string, number>, now: Record<string, number>): string[] {
  return Object.keys(once).filter((field) => now[field] !== undefined && nearly(now[field]!, once[field]!));
}

function nearly(left: number, right: number): boolean {
  return Math.abs(left - right) <= 1e-6 * Math.max(1, Math.abs(right));
}

function exchangesOf(steps: Step[]): Array<{ label: string; exchange: HttpExchange }> {
  return steps.flatMap((step) => (step.exchange ? [{ label: step.label, exchange: step.exchange }] : []));
}

function repeatedFinding(
  run: ProbeRun,
  operation: Operation,
  moved: { field: string; from: string; to: string },
  fields: string[],
  deltas: Record<string, number>,
  steps: Step[],
): EnvelopeDraft {
  const key = operationKey(operation);
  const field = fields[0]!;
  return buildFinding(run, {
    domain: "data",
    defectClass: "data-integrity",
    title: `${key} can be repeated: each repeat changes ${field} again`,
    summary: [
      `${key} moved a record of the probe's own from ${moved.field} "${moved.from}" to "${moved.to}" and changed ${field} by ${deltas[field]}.`,
      `Sent again (and a third time) on the same record, it was accepted each time and ${field}, read back through the record, moved by ${deltas[field]} again while ${moved.field} stayed "${moved.to}".`,
      "The transition never checks the state it starts from, so a retry, a double click or a replay applies its effect again.",
      `Fix: make the state part of the write (\`UPDATE … WHERE id = ? AND ${moved.field} = '${moved.from}'\`) and refuse (409) or ignore a repeat.`,
    ].join(" "),
    impact: `${field} no longer matches the record's history: every repeat of one ${moved.to} step counts again.`,
    location: { kind: "endpoint", value: key },
    severity: "high",
    confidence: 0.9,
    discriminator: `repeat:${field}`,
    exchanges: exchangesOf(steps),
  });
}

function raceFinding(
  run: ProbeRun,
  operation: Operation,
  moved: { field: string; from: string; to: string },
  multiplied: Array<{ field: string; once: number; times: number }>,
  seen: { steps: Step[]; sent: number; accepted: number; round: number; refusedStatus: number },
): EnvelopeDraft {
  const key = operationKey(operation);
  const { field, once, times } = multiplied[0]!;
  return buildFinding(run, {
    domain: "data",
    defectClass: "data-integrity",
    title: `Race: simultaneous ${key} requests all pass its state check and change ${field} ${times} times`,
    summary: [
      `${key} is a one-shot step: it moved ${moved.field} from "${moved.from}" to "${moved.to}" and changed ${field} by ${once}, and a repeat one after another had no second effect (answered ${seen.refusedStatus}).`,
      `${seen.sent} identical requests sent at once to a fresh record of the probe's own were accepted ${seen.accepted} times (round ${seen.round}), and ${field}, read back through the record, had moved ${times} × ${once}.`,
      "The state is checked in a read before the write and the write does not repeat it (check-then-act), so requests inside that window all pass.",
      `Fix: put the state in the write itself (\`UPDATE … SET ${moved.field} = '${moved.to}' … WHERE id = ? AND ${moved.field} = '${moved.from}'\` and act only when it changed a row), or lock the row for the whole step.`,
    ].join(" "),
    impact: `${field} is changed once per simultaneous request: a double submission pays, refunds or credits more than once.`,
    location: { kind: "endpoint", value: key },
    severity: "high",
    confidence: 0.85,
    discriminator: `race:${field}`,
    exchanges: exchangesOf(seen.steps),
  });
}
