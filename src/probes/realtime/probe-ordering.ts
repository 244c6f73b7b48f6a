import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { isAdminLike } from "../session/roles.ts";
import type { ProbedChannel } from "./channels.ts";
import { describeChannel } from "./channels.ts";
import type { Frame, RealtimeConnection } from "./connection.ts";
import { delay } from "./connection.ts";
import type { DrivenEvent } from "./event-driver.ts";
import { causeObservedEvent } from "./event-source.ts";
import type { SequenceProblem } from "./frames.ts";
import { detectSequenceField, isControlFrame, mentions, sequenceProblems } from "./frames.ts";
import type { RealtimeInput, RealtimeRun } from "./realtime-run.ts";
import {
  connect,
  credentialOf,
  probeEachChannel,
  realtimeFinding,
  waitForEvents,
  writeTranscript,
} from "./realtime-run.ts";

// ws-ordering, for one subscriber (the owner's socket) and a bounded burst of events the probe causes:
//   - when frames carry a numbering field (seq, sequence, offset, version…), it must only go up: a value
//     that goes back or repeats is a finding; a gap counts only together with an event that never arrived;
//     `version`/`revision` are per record, so only frames about the probe's one record are compared;
//   - without one, updates sent one after another (each answered before the next) must arrive in that order.
// The first burst is sequential; when it is clean and the frames are numbered, concurrent bursts follow
// (an out-of-order send shows under concurrency), a second when the first is clean: a race needs changes to
// overlap on the server, and a busy server (or one that adds workers only once it is loaded) can still
// handle one burst's changes one by one. A problem is reported once the same burst shows it again (or,
// after a sequential one, a concurrent burst does).

export interface OrderingInput extends RealtimeInput {
  events?: number;
}

const PER_RECORD_FIELDS = new Set(["version", "revision", "rev"]);
const CONCURRENT_TRIES = 2;

interface BurstResult {
  kind: "sequential" | "concurrent";
  events: DrivenEvent[];
  problems: string[];
  sequence: SequenceProblem[];
}

export async function probeOrdering(context: ToolContext, input: OrderingInput) {
  const count = Math.min(Math.max(input.events ?? 12, 3), 20);
  return probeEachChannel(context, "ws_probe_ordering", input, (realtime, channel, candidates) =>
    probeChannel(realtime, channel, count, candidates),
  );
}

async function probeChannel(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  count: number,
  candidates: EnvelopeDraft[],
): Promise<void> {
  const stats: Record<string, unknown> = { channel: channel.name };
  realtime.channelStats.push(stats);
  const owner = realtime.users.find((user) => !isAdminLike(user.role)) ?? realtime.users[0];
  const credential = owner ? (await credentialOf(realtime, owner)).credential : undefined;
  const socket = await connect(realtime, channel, `subscriber (${owner?.name ?? "anonymous"})`, credential);
  await socket.settle(150, 600);
  if (!socket.isOpen) return;
  const source = await causeObservedEvent(realtime, channel, { user: owner?.name, socket });
  if (!source) return;
  await delay(100);
  const field = detectSequenceField(socket.received());
  stats.sequence_field = field ?? null;
  const mode = realtime.driver.updateOf(source.family) ? "update" : "create";
  stats.events_per_burst = count;
  stats.burst_of =
    mode === "update"
      ? `updates of one ${source.family.collection} record`
      : `${source.family.collection} creations`;

  const burst = async (kind: BurstResult["kind"]): Promise<BurstResult> => {
    const since = realtime.clock();
    const events: Array<DrivenEvent | undefined> = [];
    if (kind === "sequential") {
      // One burst, as a client making changes back to back would, with the target to itself: a server that
      // reorders only what arrives close together (batching, racing) looks in order when other probes'
      // requests space the changes out, and the order of changes without a number is known only from
      // sending them one after another.
      await realtime.run.client.quietly(async () => {
        for (let index = 0; index < count; index += 1) {
          events.push(await realtime.driver.another(source.event, owner?.name, `${kind} ${index + 1}`, mode));
        }
      });
    } else {
      events.push(
        ...(await realtime.run.client.together(
          () =>
            mapConcurrent([...Array(count).keys()], count, (index) =>
              realtime.driver.another(source.event, owner?.name, `${kind} ${index + 1}`, mode),
            ),
          count,
        )),
      );
    }
    await waitForEvents(realtime, realtime.waitMs);
    await socket.settle(150, realtime.waitMs);
    const caused = events.filter((event): event is DrivenEvent => event !== undefined);
    const record = { id: source.event.resource.id, foreign: source.event.needles.foreign };
    return { kind, events: caused, ...judge(socket, since, caused, field, kind, record) };
  };

  const bursts: BurstResult[] = [];
  let first = await burst("sequential");
  bursts.push(first);
  for (let tries = 0; first.problems.length === 0 && field && tries < CONCURRENT_TRIES; tries += 1) {
    first = await burst("concurrent");
    bursts.push(first);
  }
  stats.bursts = bursts.map(burstStats);
  if (first.problems.length === 0) return;
  let again = await burst(first.kind);
  bursts.push(again);
  // A numbering problem a sequential burst showed once is confirmed just as well by a concurrent burst,
  // which stresses the same sending path harder (events racing each other on the server).
  if (again.problems.length === 0 && first.kind === "sequential" && field) {
    again = await burst("concurrent");
    bursts.push(again);
  }
  stats.bursts = bursts.map(burstStats);
  const reproduced = again.problems.length > 0;
  // Two different events under one number is proof on its own; one event sent twice is not.
  const conclusive = first.sequence.some((problem) => problem.kind === "repeat" && problem.distinct);

  const transcriptUri = writeTranscript(
    realtime,
    channel,
    "ordering",
    [{ label: `subscriber (${owner?.name ?? "anonymous"})`, user: owner?.name, socket }],
    [{ label: "first-event", exchange: source.event.exchange }],
    { sequence_field: field ?? null, bursts: stats.bursts },
  );
  candidates.push(
    realtimeFinding(realtime, {
      defectClass: "ws-ordering",
      channel,
      title: `${describeChannel(channel)} delivers events out of order`,
      summary:
        `During a ${first.kind} burst of ${first.events.length} ${mode === "update" ? "updates of one record" : "creations"}, ` +
        `one subscriber saw: ${first.problems.slice(0, 4).join("; ")}` +
        (reproduced
          ? `; a second burst showed it again (${again.problems.slice(0, 2).join("; ")})`
          : conclusive
            ? "; the frames sharing a number are different events, so the numbering itself is broken (a second burst did not show it again)"
            : "; a second burst did not show it") +
        ". Clients that apply events in arrival order end up with stale or wrong state; events must be sent in the order they are numbered.",
      impact:
        "Users see outdated or inconsistent data until they reload; later updates can be overwritten by earlier ones.",
      severity: "medium",
      confidence: reproduced ? 0.85 : conclusive ? 0.8 : 0.6,
      transcriptUri,
      exchanges: [{ label: "first-event", exchange: source.event.exchange }],
      steps: [
        `Connect to ${channel.name}${owner ? ` as ${owner.name}` : ""}.`,
        `Cause ${count} events ${first.kind === "sequential" ? "one after another" : "at once"}: ${mode === "update" ? `update one ${source.family.collection} record` : `create ${source.family.collection} records`}.`,
        `Compare the order of the frames received${field ? ` (field ${field})` : ""} with the order of the changes.`,
      ],
      notes: [`${first.kind} burst: ${first.problems.join("; ")}`],
    }),
  );
}

/** What a burst showed, with the median time between two of its changes leaving (what batching must beat). */
function burstStats(result: BurstResult): Record<string, unknown> {
  const gaps = result.events
    .slice(1)
    .map((event, index) => event.at - (result.events[index] as DrivenEvent).at)
    .sort((a, b) => a - b);
  return {
    kind: result.kind,
    events: result.events.length,
    problems: result.problems,
    ...(gaps.length > 0 ? { median_gap_ms: Math.round(gaps[Math.floor(gaps.length / 2)] as number) } : {}),
  };
}

function judge(
  socket: RealtimeConnection,
  since: number,
  events: readonly DrivenEvent[],
  field: string | undefined,
  kind: BurstResult["kind"],
  record: { id: string; foreign?: (text: string) => boolean },
): { problems: string[]; sequence: SequenceProblem[] } {
  const frames = socket.received(since).filter((frame) => !isControlFrame(frame));
  const arrival = events.map((event) => frames.findIndex((frame) => mentions(frame, event.needles)));
  const problems: string[] = [];
  const lost = arrival
    .map((index, position) =>
      index < 0 && arrival.slice(position + 1).some((later) => later >= 0) ? position : -1,
    )
    .filter((position) => position >= 0);
  let sequence: SequenceProblem[] = [];
  if (field) {
    // Only frames about this burst's own events: one socket may carry several independently numbered streams.
    const ours = frames.filter((frame) => events.some((event) => mentions(frame, event.needles)));
    const compared: Frame[] = PER_RECORD_FIELDS.has(field)
      ? ours.filter((frame) => mentions(frame, { markers: [], id: record.id, foreign: record.foreign }))
      : ours;
    sequence = sequenceProblems(compared, field).filter(
      (problem) => problem.kind !== "gap" || lost.length > 0,
    );
    const described = sequence.map((problem) =>
      problem.kind === "gap"
        ? `${field} jumped from ${problem.previous} to ${problem.value} while event ${lost.map((position) => position + 1).join(", ")} never arrived`
        : problem.kind === "repeat"
          ? `${field} ${problem.value} came on more than one frame`
          : `${field} ${problem.value} arrived after ${field} ${problem.previous} (backwards)`,
    );
    problems.push(...[...new Set(described)].slice(0, 5));
  } else if (kind === "sequential") {
    // Each change was answered before the next was sent: arrival must follow that order.
    const seen = arrival.map((index, position) => ({ index, position })).filter((entry) => entry.index >= 0);
    for (let step = 1; step < seen.length; step += 1) {
      if (seen[step]!.index < seen[step - 1]!.index) {
        problems.push(
          `change ${seen[step]!.position + 1} arrived before change ${seen[step - 1]!.position + 1}`,
        );
      }
    }
  }
  return { problems, sequence };
}
