import type { ResourceFamily } from "../api/operation-index.ts";
import type { ProbedChannel } from "./channels.ts";
import { channelWords } from "./channels.ts";
import type { Frame, RealtimeConnection } from "./connection.ts";
import type { DrivenEvent } from "./event-driver.ts";
import type { EventNeedles } from "./frames.ts";
import { mentions } from "./frames.ts";
import type { RealtimeRun } from "./realtime-run.ts";

// Which write makes a channel speak: creates of candidate resource families, one at a time, until the
// owner's own socket receives a frame about the created resource. The owner receiving it is the control
// every check needs: an event nobody receives proves nothing about who else receives it.

export interface EventSource {
  family: ResourceFamily;
  event: DrivenEvent;
  /** The owner's frame about it. */
  frame: Frame;
}

export const MAX_FAMILIES = 4;
/** Families tried to find those sources: some creates are refused to the owner (admin-only collections). */
const MAX_TRIES = 8;

/** The cached answer for a channel none of the tried writes made speak. */
const SILENT = "";
const NO_FRAME = "no frame about it";

function cacheKey(realtime: RealtimeRun, channel: ProbedChannel): string {
  return `realtime:source:${realtime.run.target.baseUrl}${channel.name}`;
}

/**
 * What the run learned of a channel's writes: the collection whose create it carried, SILENT when none of
 * the tried writes made it speak, undefined when nothing could be concluded (only failed creates). Kept as
 * a promise: realtime probes run at once, and one looking while another is still trying waits for that
 * answer rather than trying every write again (a silent channel costs each try a whole wait).
 */
type Learned = Promise<string | undefined>;

export async function causeObservedEvent(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  owner: { user: string | undefined; socket: RealtimeConnection },
): Promise<EventSource | undefined> {
  const [first] = await causeObservedEvents(realtime, channel, owner, 1);
  return first;
}

/**
 * Events of up to `limit` resource families the owner's socket receives, one per family: a channel may
 * scope one kind of event correctly and leak another, so checks of who receives what try several.
 */
export async function causeObservedEvents(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  owner: { user: string | undefined; socket: RealtimeConnection },
  limit: number,
): Promise<EventSource[]> {
  if (!realtime.driver.writesAllowed) return [];
  const shared = realtime.context.shared;
  const key = cacheKey(realtime, channel);
  let preferred: string | undefined;
  let learn: ((answer: string | undefined) => void) | undefined;
  for (;;) {
    const known = shared.get(key) as Learned | undefined;
    if (!known) {
      shared.set(
        key,
        new Promise<string | undefined>((resolve) => {
          learn = resolve;
        }),
      );
      break;
    }
    preferred = await known;
    if (preferred !== undefined) break;
    // The probe that tried concluded nothing: the key is free again, and the first to look tries next.
  }
  let answer: string | undefined;
  try {
    // Each try waits for a frame that never comes: a channel no write made speak is not tried again.
    if (preferred === SILENT) {
      realtime.run.notes.push(
        `${channel.name}: no write the probe may send made the owner's socket receive an event (tried by an earlier realtime probe of this run)`,
      );
      return [];
    }
    const found = await trySources(realtime, channel, owner, limit, preferred);
    answer = found.learned ?? preferred;
    // What a later probe learned replaces what an earlier one did (its socket heard, or did not, just now).
    if (!learn && found.learned !== undefined) shared.set(key, Promise.resolve(found.learned));
    return found.sources;
  } finally {
    if (learn) {
      if (answer === undefined) shared.delete(key);
      learn(answer);
    }
  }
}

const MAX_FRAME_WAIT_MS = 5000;

/**
 * How long the owner's socket is given to hear about a create: the run's wait, or twice as long as the
 * create's own answer took when the target is slow (an event usually leaves after the answer); three times
 * that for the write an earlier probe of the run already heard, so one slow moment does not mark a
 * channel known to speak as silent for every later probe.
 */
export function frameWait(waitMs: number, createMs: number, spokeBefore: boolean): number {
  const wait = Math.max(waitMs, 2 * createMs) * (spokeBefore ? 3 : 1);
  return Math.min(MAX_FRAME_WAIT_MS, wait);
}

/** Creates of the likeliest families until the owner's socket hears up to `limit` of them. */
async function trySources(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  owner: { user: string | undefined; socket: RealtimeConnection },
  limit: number,
  preferred: string | undefined,
): Promise<{ sources: EventSource[]; learned?: string }> {
  const stats: string[] = [];
  const { words, hints } = channelWords(channel);
  const families = realtime.driver.families(words, preferred, hints).slice(0, Math.max(limit, MAX_TRIES));
  const sources: EventSource[] = [];
  // The likeliest family alone first (usually the one that spoke before); then the others at once, so that
  // a channel none of them makes speak costs one wait rather than one per family.
  for (const batch of [families.slice(0, 1), families.slice(1)]) {
    if (!owner.socket.isOpen || sources.length >= limit || batch.length === 0) break;
    const heard = await Promise.all(
      batch.map(async (family) => {
        const sent = Date.now();
        const event = await realtime.driver.create(family, owner.user);
        if (!event) return { family, failed: true as const };
        const wait = frameWait(realtime.waitMs, Date.now() - sent, family.collection === preferred);
        const frame = await owner.socket.waitFor(
          (candidate) => mentions(candidate, event.needles),
          wait,
          event.at,
        );
        return { family, event, frame };
      }),
    );
    for (const entry of heard) {
      if ("failed" in entry) stats.push(`${entry.family.collection}: create failed`);
      else if (!entry.frame) stats.push(`${entry.family.collection}: ${NO_FRAME}`);
      else if (sources.length < limit)
        sources.push({ family: entry.family, event: entry.event, frame: entry.frame });
    }
  }
  if (sources.length > 0) return { sources, learned: sources[0]!.family.collection };
  realtime.run.notes.push(
    `${channel.name}: no write the probe may send made the owner's socket receive an event (${stats.join("; ") || "no creatable resource"})`,
  );
  // Only writes that were made and went unheard say the channel is silent; failed creates say nothing.
  return { sources, ...(stats.some((entry) => entry.endsWith(NO_FRAME)) ? { learned: SILENT } : {}) };
}

/** Waits (in parallel) until each socket received a frame about `needles`, or the wait ends. */
export async function whoReceived(
  sockets: readonly RealtimeConnection[],
  needles: EventNeedles,
  since: number,
  waitMs: number,
): Promise<Map<RealtimeConnection, Frame>> {
  const found = await Promise.all(
    sockets.map(
      async (socket) =>
        [socket, await socket.waitFor((frame) => mentions(frame, needles), waitMs, since)] as const,
    ),
  );
  const received = new Map<RealtimeConnection, Frame>();
  for (const [socket, frame] of found) if (frame) received.set(socket, frame);
  return received;
}
