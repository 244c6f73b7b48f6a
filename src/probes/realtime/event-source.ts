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
  const stats: string[] = [];
  if (!realtime.driver.writesAllowed) return [];
  const preferred = realtime.context.shared.get(cacheKey(realtime, channel)) as string | undefined;
  // Each try waits for a frame that never comes: a channel no write made speak is not tried again.
  if (preferred === SILENT) {
    realtime.run.notes.push(
      `${channel.name}: no write the probe may send made the owner's socket receive an event (tried by an earlier realtime probe of this run)`,
    );
    return [];
  }
  const { words, hints } = channelWords(channel);
  const families = realtime.driver.families(words, preferred, hints).slice(0, Math.max(limit, MAX_TRIES));
  const sources: EventSource[] = [];
  // The likeliest family alone first (usually the one that spoke before); then the others at once, so that
  // a channel none of them makes speak costs one wait rather than one per family.
  for (const batch of [families.slice(0, 1), families.slice(1)]) {
    if (!owner.socket.isOpen || sources.length >= limit || batch.length === 0) break;
    const heard = await Promise.all(
      batch.map(async (family) => {
        const event = await realtime.driver.create(family, owner.user);
        if (!event) return { family, failed: true as const };
        const frame = await owner.socket.waitFor(
          (candidate) => mentions(candidate, event.needles),
          realtime.waitMs,
          event.at,
        );
        return { family, event, frame };
      }),
    );
    for (const entry of heard) {
      if ("failed" in entry) stats.push(`${entry.family.collection}: create failed`);
      else if (!entry.frame) stats.push(`${entry.family.collection}: ${NO_FRAME}`);
      else if (sources.length < limit) {
        if (sources.length === 0)
          realtime.context.shared.set(cacheKey(realtime, channel), entry.family.collection);
        sources.push({ family: entry.family, event: entry.event, frame: entry.frame });
      }
    }
  }
  if (sources.length === 0) {
    // Only writes that were made and went unheard say the channel is silent; failed creates say nothing.
    if (stats.some((entry) => entry.endsWith(NO_FRAME)))
      realtime.context.shared.set(cacheKey(realtime, channel), SILENT);
    realtime.run.notes.push(
      `${channel.name}: no write the probe may send made the owner's socket receive an event (${stats.join("; ") || "no creatable resource"})`,
    );
  }
  return sources;
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
