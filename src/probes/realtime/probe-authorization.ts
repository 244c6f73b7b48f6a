import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isAdminLike, outsidersOf } from "../session/roles.ts";
import type { ProbedChannel } from "./channels.ts";
import { describeChannel } from "./channels.ts";
import type { Frame } from "./connection.ts";
import { causeObservedEvents, type EventSource, MAX_FAMILIES, whoReceived } from "./event-source.ts";
import { canRead } from "./privacy.ts";
import { hiddenCredentialsFinding } from "./probe-exposure.ts";
import type { Observer, RealtimeInput, RealtimeRun } from "./realtime-run.ts";
import { connect, credentialOf, probeEachChannel, realtimeFinding, writeTranscript } from "./realtime-run.ts";

// ws-authorization: signed-in users who should not see an owner's record (another tenant, a peer, a lower
// role) listen on the channel while the owner creates a record of the probe's own. A finding needs all of:
//   - the owner's socket received the event (the channel carries it: a broadcast nobody gets is nothing),
//   - another user's socket received a frame about the same record,
//   - the HTTP API refuses that user the record (401/403/404 on its read operation, or it is missing from
//     their list while the owner's list shows it).
// A user the API lets read the record (a teammate on shared data) receiving it is correct. Without a read
// or list operation to ask, only another tenant receiving it is kept, held for a person. The owner's own
// events are also read for credentials the API hides (probe-exposure.ts): those reach whoever listens.

export async function probeAuthorization(context: ToolContext, input: RealtimeInput) {
  return probeEachChannel(context, "ws_probe_authorization", input, (realtime, channel, candidates) =>
    probeChannel(realtime, channel, candidates),
  );
}

async function probeChannel(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  candidates: EnvelopeDraft[],
): Promise<void> {
  const stats: Record<string, unknown> = { channel: channel.name };
  realtime.channelStats.push(stats);
  const owner = realtime.users.find((user) => !isAdminLike(user.role)) ?? realtime.users[0];
  if (!owner) {
    realtime.run.notes.push(`${channel.name}: authorization needs a signed-in user (profile users)`);
    return;
  }
  const outsiders = outsidersOf(owner, realtime.users);
  const observers: Array<Observer & { relation: string }> = [];
  for (const outsider of outsiders.slice(0, 3)) {
    const { credential } = await credentialOf(realtime, outsider.user);
    const label = `${outsider.relation} (${outsider.user.name})`;
    observers.push({
      label,
      user: outsider.user.name,
      relation: outsider.relation,
      socket: await connect(realtime, channel, label, credential),
    });
  }
  const { credential } = await credentialOf(realtime, owner);
  const ownerSocket = await connect(realtime, channel, `owner (${owner.name})`, credential);
  await Promise.all(
    [...observers, { socket: ownerSocket }].map((observer) => observer.socket.settle(150, 600)),
  );
  stats.owner_accepted = ownerSocket.isOpen;
  stats.outsiders_accepted = observers
    .filter((observer) => observer.socket.isOpen)
    .map((observer) => observer.label);
  if (!ownerSocket.isOpen) return;

  const sources = await causeObservedEvents(
    realtime,
    channel,
    { user: owner.name, socket: ownerSocket },
    MAX_FAMILIES,
  );
  if (sources.length === 0) return;
  stats.events_caused = sources.map((candidate) => candidate.event.label);
  const exposure = await hiddenCredentialsFinding(
    realtime,
    channel,
    { user: owner.name, socket: ownerSocket },
    sources,
    stats,
  );
  if (exposure) candidates.push(exposure);
  if (observers.length === 0) {
    realtime.run.notes.push(
      `${channel.name}: who receives events needs two users who should not see each other's records (profile users with tenants or roles)`,
    );
    return;
  }
  let source: EventSource = sources[0]!;
  const leaked: Array<{
    observer: Observer & { relation: string };
    frame: Frame;
    how: string;
    confidence: number;
  }> = [];
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [];
  // Every family is checked and the strongest leak is the finding: a weak one (only an id matched) on an
  // early family must not hide a leak of the data itself on a later one.
  // The families are checked at once (each waits for frames that may never come), then weighed in order.
  const checked = await Promise.all(
    sources.map(async (candidate) => ({
      candidate,
      found: await leaksOf(realtime, channel, observers, candidate),
    })),
  );
  let best = 0;
  for (const { candidate, found } of checked) {
    if (found.leaked.length === 0) continue;
    const strength = Math.max(...found.leaked.map((leak) => leak.confidence));
    if (strength <= best) continue;
    best = strength;
    source = candidate;
    leaked.splice(0, leaked.length, ...found.leaked);
    exchanges.splice(
      0,
      exchanges.length,
      { label: "owner-causes-event", exchange: candidate.event.exchange },
      ...found.exchanges,
    );
  }
  stats.received_by = leaked.map((leak) => leak.observer.label);
  if (leaked.length === 0) return;

  const transcriptUri = writeTranscript(
    realtime,
    channel,
    "authorization",
    [...observers, { label: `owner (${owner.name})`, user: owner.name, socket: ownerSocket }],
    exchanges,
    {
      owner_received_at: source.frame.at,
      leaked_to: leaked.map((leak) => ({ observer: leak.observer.label, at: leak.frame.at, api: leak.how })),
    },
  );
  const [first] = leaked;
  candidates.push(
    realtimeFinding(realtime, {
      defectClass: "ws-authorization",
      channel,
      title: `${describeChannel(channel)} sends users events about records they may not read`,
      summary:
        `${owner.name} created a ${source.family.collection} record; its event reached ${owner.name}'s socket and also ` +
        `${leaked.map((leak) => `${leak.observer.label} (${leak.how})`).join(", ")}. The channel must deliver an event only to ` +
        "sockets whose user may read the record it is about, as the HTTP API already decides.",
      impact:
        "Signed-in users receive other users' or tenants' data live, bypassing the API's access checks.",
      severity: "high",
      confidence: Math.max(...leaked.map((leak) => leak.confidence)),
      transcriptUri,
      exchanges,
      steps: [
        `Connect ${first!.observer.user} and ${owner.name} to ${channel.name} with their own tokens.`,
        `As ${owner.name}, ${source.event.exchange.request.method} ${source.family.collection} (a record of the probe's own).`,
        `${owner.name}'s socket receives the event, and so does ${first!.observer.user}'s: ${realtime.run.masker.maskText(first!.frame.text.slice(0, 300))}`,
        `Yet for ${first!.observer.user}, ${first!.how}.`,
      ],
    }),
  );
}

type Leak = { observer: Observer & { relation: string }; frame: Frame; how: string; confidence: number };

/** Who of the observers received an event about this record although the API refuses them the record. */
async function leaksOf(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  observers: Array<Observer & { relation: string }>,
  source: EventSource,
): Promise<{ leaked: Leak[]; exchanges: Array<{ label: string; exchange: HttpExchange }> }> {
  const received = await whoReceived(
    observers.map((observer) => observer.socket),
    source.event.needles,
    source.event.at,
    realtime.waitMs,
  );
  const leaked: Leak[] = [];
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [];
  for (const observer of observers) {
    const frame = received.get(observer.socket);
    if (!frame) continue;
    const read = await canRead(realtime.run, source.event.resource, observer.user, source.event.listing);
    if (read.exchange) exchanges.push({ label: `${observer.user}-reads`, exchange: read.exchange });
    // Only the record's id (not its planted values) reaching them shows it exists, not what it holds.
    const carriesData = source.event.needles.markers.some(
      (marker) => marker.length >= 6 && frame.text.includes(marker),
    );
    if (read.verdict === "denied") {
      const confidence = !carriesData ? 0.6 : source.event.resource.family.read ? 0.9 : 0.8;
      leaked.push({ observer, frame, how: read.how, confidence });
    } else if (read.verdict === "unknown" && observer.relation === "other-tenant") {
      leaked.push({
        observer,
        frame,
        how: `${read.how}; another tenant should not receive it`,
        confidence: 0.6,
      });
    } else {
      realtime.run.notes.push(
        `${channel.name}: ${observer.label} receives ${source.family.collection} events and ${read.how}: allowed`,
      );
    }
  }
  return { leaked, exchanges };
}
