import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import { send } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import type { ProbedChannel } from "./channels.ts";
import { describeChannel } from "./channels.ts";
import { delay } from "./connection.ts";
import { causeObservedEvent } from "./event-source.ts";
import type { RealtimeInput, RealtimeRun } from "./realtime-run.ts";
import {
  connect,
  credentialOf,
  probeEachChannel,
  realtimeFinding,
  waitForEvents,
  writeTranscript,
} from "./realtime-run.ts";

// ws-backpressure: a subscriber that stops reading (its socket paused) while a bounded burst of events
// flows, next to one that reads normally. Server memory cannot be seen from outside, so only two clear
// signs count:
//   - unbounded buffering: the traffic was large (≥ min_backlog_bytes, 8 MiB by default, far beyond what
//     kernel socket buffers hold), the stalled subscriber was never dropped, and once it read again it got
//     all of it: the server queued every byte for a client that read nothing;
//   - collateral damage: the health endpoint failed or slowed sharply (≥ 10× and +1 s over its baseline)
//     while the stalled subscriber was connected.
// A server that drops the slow client (any close) or skips messages for it is bounded. Events too small to
// fill buffers prove nothing either way: healthy, small-event servers yield no finding.

export interface BackpressureInput extends RealtimeInput {
  events?: number;
  min_backlog_bytes?: number;
}

const HEALTH_SAMPLE_MS = 100;
/** A burst is sent only when its events, at the first one's size, could come within this factor of the backlog. */
const PROJECTION_MARGIN = 4;

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function probeBackpressure(context: ToolContext, input: BackpressureInput) {
  const count = Math.min(Math.max(input.events ?? 40, 5), 60);
  const minBacklog = input.min_backlog_bytes ?? 8 * 1024 * 1024;
  return probeEachChannel(context, "ws_probe_backpressure", input, (realtime, channel, candidates) =>
    probeChannel(realtime, channel, count, minBacklog, candidates),
  );
}

async function probeChannel(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  count: number,
  minBacklog: number,
  candidates: EnvelopeDraft[],
): Promise<void> {
  const stats: Record<string, unknown> = { channel: channel.name };
  realtime.channelStats.push(stats);
  const owner = realtime.users.find((user) => !isAdminLike(user.role)) ?? realtime.users[0];
  const credential = owner ? (await credentialOf(realtime, owner)).credential : undefined;
  const reader = await connect(realtime, channel, "reading subscriber", credential);
  const stalled = await connect(realtime, channel, "stalled subscriber", credential);
  await Promise.all([reader.settle(150, 600), stalled.settle(150, 600)]);
  if (!reader.isOpen || !stalled.isOpen) return;
  const healthUrl = joinUrl(
    realtime.run.target.baseUrl,
    realtime.run.target.profile?.environment.health_path ?? "/health",
  );
  const health = async (): Promise<{ ms: number; ok: boolean; exchange?: HttpExchange }> => {
    const exchange = await send(realtime.run, undefined, { method: "GET", url: healthUrl, timeoutMs: 3000 });
    const status = exchange?.response?.status ?? 0;
    return { ms: exchange?.durationMs ?? 0, ok: status > 0 && status < 500, exchange };
  };
  const baseline = [await health(), await health(), await health()];
  const baselineOk = baseline.every((sample) => sample.ok);
  const baselineMs = median(baseline.map((sample) => sample.ms));

  const source = await causeObservedEvent(realtime, channel, { user: owner?.name, socket: reader });
  if (!source) return;
  // Events far too small to fill buffers at this count prove nothing: the burst is not worth its writes
  // (nor the request budget other channels need).
  const projected = source.frame.bytes * count;
  if (projected * PROJECTION_MARGIN < minBacklog) {
    stats.projected_bytes = projected;
    realtime.run.notes.push(
      `${channel.name}: ${count} events of about ${source.frame.bytes} bytes are too little to fill a stalled client's buffers (needs ${minBacklog}): not judged`,
    );
    return;
  }
  stalled.pause();
  const readerBytes = reader.bytesReceived;
  const stalledBytes = stalled.bytesReceived;
  let driving = true;
  const during: Array<{ ms: number; ok: boolean; exchange?: HttpExchange }> = [];
  // The sampler runs beside the burst: whatever stops it (a spent budget) is kept for after the burst, so
  // it never rejects with nobody listening.
  let samplerError: unknown;
  const sampler = (async () => {
    try {
      while (driving) {
        during.push(await health());
        await delay(HEALTH_SAMPLE_MS);
      }
    } catch (error) {
      samplerError = error;
    }
  })();
  try {
    // One burst, never split by another agent's measurement window: both would measure each other.
    await realtime.run.client.together(async () => {
      await mapConcurrent([...Array(count).keys()], 4, (index) =>
        realtime.driver.create(source.family, owner?.name, `burst ${index + 1}`),
      );
      await waitForEvents(realtime, realtime.waitMs);
    });
  } finally {
    driving = false;
    await sampler;
  }
  if (samplerError !== undefined) throw samplerError;
  const traffic = reader.bytesReceived - readerBytes;
  const droppedWhilePaused = stalled.outcome.closedByServerAt !== undefined;
  stalled.resume();
  await stalled.settle(300, 5000);
  const backlog = stalled.bytesReceived - stalledBytes;
  const dropped = droppedWhilePaused || !stalled.isOpen;
  const failures = during.filter((sample) => !sample.ok).length;
  const duringMs = median(during.filter((sample) => sample.ok).map((sample) => sample.ms));
  const degraded =
    baselineOk &&
    during.length >= 3 &&
    (failures * 2 >= during.length || duringMs >= Math.max(10 * baselineMs, baselineMs + 1000));
  const unbounded = !dropped && traffic >= minBacklog && backlog >= traffic * 0.95;
  Object.assign(stats, {
    events: count,
    traffic_bytes: traffic,
    stalled_backlog_bytes: backlog,
    stalled_dropped: dropped,
    stalled_close_code: stalled.outcome.closeCode ?? null,
    health_baseline_ms: baselineMs,
    health_during_ms: duringMs,
    health_failures: `${failures}/${during.length}`,
  });
  if (traffic < minBacklog && !degraded) {
    realtime.run.notes.push(
      `${channel.name}: ${traffic} bytes of events is too little to fill a stalled client's buffers (needs ${minBacklog}): not judged`,
    );
    return;
  }
  if (!unbounded && !degraded) return;

  const signs = [
    ...(unbounded
      ? [
          `the server kept the stalled subscriber connected and queued all ${traffic} bytes of events for it (it received ${backlog} bytes once it read again)`,
        ]
      : []),
    ...(degraded
      ? [
          `the health endpoint ${failures > 0 ? `failed ${failures} of ${during.length} times` : `slowed from ${baselineMs} ms to ${duringMs} ms`} while the stalled subscriber was connected`,
        ]
      : []),
  ];
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [
    { label: "first-event", exchange: source.event.exchange },
  ];
  const slowest = [...during].sort((left, right) => right.ms - left.ms)[0];
  if (degraded && slowest?.exchange)
    exchanges.push({ label: "health-during-burst", exchange: slowest.exchange });
  const transcriptUri = writeTranscript(
    realtime,
    channel,
    "backpressure",
    [
      { label: "reading subscriber", user: owner?.name, socket: reader },
      { label: "stalled subscriber", user: owner?.name, socket: stalled },
    ],
    exchanges,
    { ...stats, signs },
  );
  candidates.push(
    realtimeFinding(realtime, {
      defectClass: "ws-backpressure",
      channel,
      title: `${describeChannel(channel)} buffers without bound for a client that stops reading`,
      summary:
        `A subscriber of ${channel.name} stopped reading while ${count} events (${traffic} bytes) were sent: ${signs.join("; ")}. ` +
        "A server should cap what it queues per connection (check the buffered amount, drop or close slow consumers), " +
        "or a few stalled clients exhaust its memory.",
      impact:
        "Slow or malicious clients make the server hold unbounded memory, degrading or crashing it for everyone.",
      severity: "medium",
      confidence: unbounded && degraded ? 0.8 : unbounded ? 0.75 : 0.7,
      transcriptUri,
      exchanges,
      steps: [
        `Connect two subscribers to ${channel.name}; stop reading on one (pause its socket).`,
        `Cause ${count} events (${source.family.collection} creations).`,
        `Resume the stalled socket: ${backlog} bytes arrive and it was never closed; health ${baselineMs} ms before, ${duringMs} ms during.`,
      ],
    }),
  );
}
