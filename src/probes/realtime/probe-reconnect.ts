import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isAdminLike } from "../session/roles.ts";
import type { ProbedChannel } from "./channels.ts";
import { describeChannel } from "./channels.ts";
import type { Frame } from "./connection.ts";
import { delay } from "./connection.ts";
import type { DrivenEvent } from "./event-driver.ts";
import { causeObservedEvent } from "./event-source.ts";
import { detectSequenceField, mentions, sequenceOf } from "./frames.ts";
import type { RealtimeInput, RealtimeRun, ResumeValues } from "./realtime-run.ts";
import {
  connect,
  credentialOf,
  probeEachChannel,
  realtimeFinding,
  waitForEvents,
  writeTranscript,
} from "./realtime-run.ts";
import { ObservedSocketIo } from "./socketio-client.ts";

// ws-reconnect: only for channels that promise to resume. The promise is read from the first messages of a
// connection (`resume: { param: "since" }`, a `last_event_id` field), from the API document (`?since=`
// next to the channel), given by the caller, or (socket.io) made by a server with connection state
// recovery, which gives each session an id. Then: receive one event, drop the connection, cause a few
// more, reconnect with the last seen number (socket.io: the session id and last offset in the handshake)
// and expect exactly the missed ones. Missed events not replayed, or the already seen one sent again, is a
// finding. A channel that promises nothing is not judged.

export interface ReconnectInput extends RealtimeInput {
  resume_param?: string;
  missed_events?: number;
}

const RESUME_NAMES =
  /^(last[_-]?event[_-]?id|lastEventId|since|cursor|resume[_-]?from|from[_-]?seq|after[_-]?seq|after|last[_-]?seq|lastSeq|offset)$/;
const RESUME_KEY = /resume|replay|reconnect/i;
const PARAM_KEYS = ["param", "parameter", "query", "query_param", "queryParam", "name", "field"];

/** The query parameter a channel says resumes it, from its greeting frames. */
export function resumeHintFromFrames(frames: readonly Frame[]): string | undefined {
  for (const frame of frames) {
    const json = frame.json;
    if (!json || typeof json !== "object" || Array.isArray(json)) continue;
    for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
      if (RESUME_KEY.test(key)) {
        if (typeof value === "string" && /^[A-Za-z_][\w-]{0,40}$/.test(value)) return value;
        if (value && typeof value === "object") {
          for (const name of PARAM_KEYS) {
            const inner = (value as Record<string, unknown>)[name];
            if (typeof inner === "string" && /^[A-Za-z_][\w-]{0,40}$/.test(inner)) return inner;
          }
        }
      }
    }
    for (const key of Object.keys(json as Record<string, unknown>)) if (RESUME_NAMES.test(key)) return key;
  }
  return undefined;
}

/** A resume parameter the API document shows on the channel's URL (`/ws/x?since=…`). */
export function resumeHintFromDocument(document: unknown, channel: string): string | undefined {
  if (!document) return undefined;
  const text = JSON.stringify(document);
  const escaped = channel.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const near = new RegExp(`${escaped}\\?([A-Za-z_][\\w-]*)=`).exec(text);
  if (near && RESUME_NAMES.test(near[1]!)) return near[1];
  return undefined;
}

export async function probeReconnect(context: ToolContext, input: ReconnectInput) {
  const missedCount = Math.min(Math.max(input.missed_events ?? 3, 1), 10);
  return probeEachChannel(context, "ws_probe_reconnect", input, (realtime, channel, candidates) =>
    probeChannel(realtime, channel, input.resume_param, missedCount, candidates),
  );
}

/** What the channel promised, and how the probe holds it to that promise. */
interface ResumePromise {
  advertised: string;
  seen: string;
  how: string;
  resume: ResumeValues;
}

async function probeChannel(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  given: string | undefined,
  missedCount: number,
  candidates: EnvelopeDraft[],
): Promise<void> {
  const stats: Record<string, unknown> = { channel: channel.name };
  realtime.channelStats.push(stats);
  const owner = realtime.users.find((user) => !isAdminLike(user.role)) ?? realtime.users[0];
  const credential = owner ? (await credentialOf(realtime, owner)).credential : undefined;
  const label = `first connection (${owner?.name ?? "anonymous"})`;
  const first = await connect(realtime, channel, label, credential);
  await first.settle(150, 600);
  if (!first.isOpen) return;
  const param =
    given ??
    resumeHintFromFrames(first.received()) ??
    resumeHintFromDocument(realtime.run.map.openapi?.document, channel.path);
  // A socket.io server with connection state recovery gives each session an id when it connects.
  const recovers = first instanceof ObservedSocketIo && first.recovery !== undefined;
  stats.resume_param = param ?? (recovers ? "socket.io connection state recovery" : null);
  if (!param && !recovers) {
    realtime.run.notes.push(
      `${channel.name}: the channel does not say it can resume (no resume parameter in its greeting or the API document): not judged`,
    );
    return;
  }
  const source = await causeObservedEvent(realtime, channel, { user: owner?.name, socket: first });
  if (!source) return;
  await delay(100);
  let promise: ResumePromise;
  if (param) {
    const field = detectSequenceField(first.received());
    const lastSeen = field ? sequenceOf(source.frame, field)?.value : undefined;
    stats.sequence_field = field ?? null;
    if (field === undefined || lastSeen === undefined) {
      realtime.run.notes.push(
        `${channel.name}: its events carry no sequence number to resume from: not judged`,
      );
      return;
    }
    promise = {
      advertised: `resuming with ${param}`,
      seen: `event ${field} ${lastSeen}`,
      how: `?${param}=${lastSeen}`,
      resume: { query: { [param]: String(lastSeen) } },
    };
  } else {
    const state = (first as ObservedSocketIo).recovery!;
    promise = {
      advertised: "socket.io connection state recovery (a session id on connecting)",
      seen: `the event at offset ${state.offset ?? "(none)"}`,
      how: "its session id and last offset in the handshake",
      resume: { auth: { pid: state.pid, ...(state.offset ? { offset: state.offset } : {}) } },
    };
  }
  // Whatever arrived on the first connection counts as seen, up to the last frame before the drop.
  await first.drop();

  const missed: DrivenEvent[] = [];
  for (let index = 0; index < missedCount; index += 1) {
    const event = await realtime.driver.create(source.family, owner?.name, `missed ${index + 1}`);
    if (event) missed.push(event);
  }
  if (missed.length === 0) return;
  const second = await connect(
    realtime,
    channel,
    `reconnection (${owner?.name ?? "anonymous"})`,
    credential,
    promise.resume,
  );
  await waitForEvents(realtime, realtime.waitMs);
  await second.settle(150, realtime.waitMs);
  const frames = second.received();
  const replayed = missed.filter((event) => frames.some((frame) => mentions(frame, event.needles)));
  const duplicate = frames.find((frame) => mentions(frame, source.event.needles));
  stats.missed = missed.length;
  stats.replayed = replayed.length;
  stats.duplicated_seen_event = duplicate !== undefined;
  if (!second.isOpen && second.outcome.rejectedStatus) {
    realtime.run.notes.push(
      `${channel.name}: the reconnection was refused (${second.outcome.rejectedStatus})`,
    );
    return;
  }
  if (replayed.length === missed.length && !duplicate) return;

  const problems = [
    ...(replayed.length < missed.length
      ? [`${missed.length - replayed.length} of ${missed.length} missed events were not replayed`]
      : []),
    ...(duplicate ? ["the event seen before disconnecting was sent again"] : []),
  ];
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [
    { label: "seen-event", exchange: source.event.exchange },
    ...missed.map((event, index) => ({ label: `missed-${index + 1}`, exchange: event.exchange })),
  ];
  const transcriptUri = writeTranscript(
    realtime,
    channel,
    "reconnect",
    [
      { label, user: owner?.name, socket: first },
      { label: `reconnection (${owner?.name ?? "anonymous"})`, user: owner?.name, socket: second },
    ],
    exchanges,
    { promise: promise.advertised, resumed_with: promise.how, problems },
  );
  candidates.push(
    realtimeFinding(realtime, {
      defectClass: "ws-reconnect",
      channel,
      title: `${describeChannel(channel)} does not resume as it promises after a reconnect`,
      summary:
        `The channel promises ${promise.advertised}. After receiving ${promise.seen}, the client's connection dropped, ` +
        `${missed.length} more events happened, and it reconnected with ${promise.how}: ${problems.join(", and ")}. ` +
        "Clients relying on the promise silently lose (or double-apply) updates after every network drop.",
      impact:
        "Users who lose the connection briefly miss updates, or see them twice, without any sign of it.",
      severity: "medium",
      confidence: 0.8,
      transcriptUri,
      exchanges,
      steps: [
        `Connect to ${channel.name}${owner ? ` as ${owner.name}` : ""}; it promises ${promise.advertised}.`,
        `Cause one event (${source.event.label}); note ${promise.seen}; drop the connection.`,
        `Cause ${missed.length} more events while disconnected.`,
        `Reconnect with ${promise.how}: expected exactly the ${missed.length} missed events; ${problems.join(", ")}.`,
      ],
    }),
  );
}
