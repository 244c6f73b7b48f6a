import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isAdminLike, outsidersOf } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { ProbedChannel } from "./channels.ts";
import { describeChannel } from "./channels.ts";
import type { Frame } from "./connection.ts";
import { causeObservedEvent, whoReceived } from "./event-source.ts";
import { canRead } from "./privacy.ts";
import type { Observer, RealtimeInput, RealtimeRun } from "./realtime-run.ts";
import {
  connect,
  credentialOf,
  probeEachChannel,
  realtimeFinding,
  waitForEvents,
  writeTranscript,
} from "./realtime-run.ts";
import type { SocketCredential } from "./socket-auth.ts";
import { expiredToken, forgedTokens, garbageToken } from "./socket-auth.ts";

// ws-unauthenticated: sockets with no token, a random token and an expired one (and, when sessions are
// JWTs, the owner's own claims under a forged signature and unsigned with `alg: none`: what a server that
// reads claims without verifying them takes) listen while a signed-in owner connects and then causes an
// event through the API. A finding needs all of:
//   - an unauthenticated socket received a frame about the event (a unique marker or the created id),
//   - the owner's own socket received it too (the channel really carries it),
//   - the data is private: the HTTP API refuses it to anonymous readers (401/403/404), or failing a read
//     operation, a signed-in user of another tenant does not receive it (the server scopes it).
// A public channel carrying public data, a socket accepted and then closed, or a socket that receives only
// greetings and heartbeats is no finding. Events about users (presence) count when a frame names the
// owner (login, email, name from the sign-in answer) right after the owner connected, and never before.

interface Leak {
  observers: Array<{ label: string; frame: Frame }>;
  kind: "event" | "identity";
}

export async function probeAuthentication(context: ToolContext, input: RealtimeInput) {
  return probeEachChannel(
    context,
    "ws_probe_auth",
    input,
    (realtime, channel, candidates) => probeChannel(realtime, channel, candidates),
    { measuresArrival: true },
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
  const ownerSession = owner ? await credentialOf(realtime, owner) : undefined;
  const outsider = owner
    ? outsidersOf(owner, realtime.users).find((entry) => entry.relation === "other-tenant")
    : undefined;
  // Who is told that the owner came online is measured with no other probe of the run connected or
  // writing meanwhile (see arrival-gate.ts); the event that follows needs no such quiet.
  const arrival = await realtime.gate.alone(realtime, () =>
    listenForArrival(realtime, channel, owner, ownerSession, outsider, stats),
  );
  if (!arrival || !owner) return;
  const { unauthenticated, observers, ownerSocket, ownerObserver, identityFrames } = arrival;

  const source = ownerSocket.isOpen
    ? await causeObservedEvent(realtime, channel, { user: owner.name, socket: ownerSocket })
    : undefined;
  const eventFrames = source
    ? await whoReceived(
        observers.map((observer) => observer.socket),
        source.event.needles,
        source.event.at,
        realtime.waitMs,
      )
    : new Map<never, Frame>();
  stats.event_caused = source ? source.event.label : null;

  const outsiderObserver = observers.find((observer) => observer.user !== undefined);
  const leaks: Leak[] = [];
  const eventLeak = unauthenticated.filter((observer) => eventFrames.has(observer.socket));
  if (eventLeak.length > 0) {
    leaks.push({
      kind: "event",
      observers: eventLeak.map((observer) => ({
        label: observer.label,
        frame: eventFrames.get(observer.socket)!,
      })),
    });
  }
  const identityLeak = unauthenticated.filter((observer) => identityFrames.has(observer));
  if (identityLeak.length > 0) {
    leaks.push({
      kind: "identity",
      observers: identityLeak.map((observer) => ({
        label: observer.label,
        frame: identityFrames.get(observer)!,
      })),
    });
  }
  stats.unauthenticated_received = leaks.flatMap((leak) =>
    leak.observers.map((item) => `${item.label}: ${leak.kind}`),
  );
  if (leaks.length === 0) return;

  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [];
  let eventConfidence = 0;
  let eventPrivacy = "";
  let severity: "critical" | "high" = "high";
  const eventLeakFound = leaks.find((leak) => leak.kind === "event");
  if (eventLeakFound && source) {
    exchanges.push({ label: "owner-causes-event", exchange: source.event.exchange });
    const read = await canRead(realtime.run, source.event.resource, undefined);
    if (read.exchange) exchanges.push({ label: "anonymous-read", exchange: read.exchange });
    // A frame with the record's planted values leaks data; one with only its id leaks that it exists.
    const carriesData = eventLeakFound.observers.some((item) =>
      source.event.needles.markers.some((marker) => marker.length >= 6 && item.frame.text.includes(marker)),
    );
    if (read.verdict === "allowed") {
      realtime.run.notes.push(
        `${channel.name}: unauthenticated sockets receive ${source.family.collection} events, but ${read.how}: public data, not a finding`,
      );
    } else if (read.verdict === "denied") {
      eventConfidence = eventLeakFound.observers.length >= 2 ? 0.9 : 0.85;
      eventPrivacy = `${read.how}, so the data is private`;
      severity = "critical";
    } else if (outsiderObserver && !eventFrames.has(outsiderObserver.socket)) {
      eventConfidence = 0.8;
      eventPrivacy = `a signed-in user of another tenant does not receive it, so the server scopes it (${read.how})`;
      severity = "critical";
    } else {
      eventConfidence = 0.6;
      eventPrivacy = `whether the data is private could not be shown (${read.how})`;
    }
    if (eventConfidence > 0 && !carriesData) {
      eventConfidence = Math.min(eventConfidence, 0.6);
      severity = "high";
      eventPrivacy += "; only the record's id reached them, not its content";
    }
  }
  let identityConfidence = 0;
  let identityPrivacy = "";
  if (leaks.some((leak) => leak.kind === "identity")) {
    const scoped = outsiderObserver !== undefined && !identityFrames.has(outsiderObserver);
    identityConfidence = scoped ? 0.85 : 0.6;
    identityPrivacy = scoped
      ? "a signed-in user of another tenant is not told, so the server treats it as private"
      : "whether the channel is public by design could not be shown";
  }
  if (eventConfidence === 0 && identityConfidence === 0) return;
  // Lead with the better-established leak.
  const leadKind: Leak["kind"] = eventConfidence >= identityConfidence ? "event" : "identity";
  const confidence = Math.max(eventConfidence, identityConfidence);
  const privacy = leadKind === "event" ? eventPrivacy : identityPrivacy;
  leaks.sort((left, right) => (left.kind === leadKind ? -1 : 0) - (right.kind === leadKind ? -1 : 0));

  const shown = leaks.flatMap((leak) => leak.observers.map((item) => ({ ...item, kind: leak.kind })));
  const transcriptUri = writeTranscript(
    realtime,
    channel,
    "unauthenticated",
    [...observers, ownerObserver],
    exchanges,
    {
      received_without_valid_token: shown.map((item) => ({
        observer: item.label,
        kind: item.kind,
        at: item.frame.at,
      })),
      privacy,
    },
  );
  const first = shown[0]!;
  const what =
    first.kind === "event"
      ? `events about ${source?.family.collection ?? "records"} created by ${owner.name}`
      : `that ${owner.name} connected, naming them`;
  candidates.push(
    realtimeFinding(realtime, {
      defectClass: "ws-unauthenticated",
      channel,
      title: `${describeChannel(channel)} accepts connections without a valid token and sends them private events`,
      summary:
        `Sockets opened on ${channel.name} with ${[...new Set(shown.map((item) => item.label))].join(", ")} were accepted and received ${what}; ` +
        `${privacy}. The channel must refuse the upgrade (401) or close the connection until a valid token is presented.`,
      impact:
        "Anyone who can reach the server can listen to other users' data in real time, without an account.",
      severity: first.kind === "event" ? severity : "high",
      confidence,
      transcriptUri,
      exchanges,
      steps: [
        `Open ${channel.name} with ${first.label === "no token" ? "no token" : `a token that is not valid (${first.label})`}: the server accepts the connection.`,
        first.kind === "event"
          ? `As ${owner.name}, ${source?.event.exchange.request.method} ${source?.family.collection} (a record of the probe's own).`
          : `Connect ${owner.name} (signed in) to the application's channels.`,
        `The unauthenticated socket receives: ${realtime.run.masker.maskText(first.frame.text.slice(0, 300))}`,
        ...(privacy ? [`Privacy check: ${privacy}.`] : []),
      ],
    }),
  );
}

/**
 * Opens the listeners (no token, invalid, expired and forged tokens, another tenant), then connects the
 * owner to every channel: what each listener received naming the owner that it had not seen before.
 */
async function listenForArrival(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  owner: ProfileUser | undefined,
  ownerSession: Awaited<ReturnType<typeof credentialOf>> | undefined,
  outsider: { user: ProfileUser } | undefined,
  stats: Record<string, unknown>,
) {
  const seed = uniqueSeed();
  const listeners: Array<{ label: string; user?: string; credential: SocketCredential | undefined }> = [
    { label: "no token", credential: undefined },
    { label: "invalid token", credential: { token: garbageToken(seed) } },
    {
      label: "expired token",
      credential: { token: expiredToken(ownerSession?.credential.token, Math.floor(Date.now() / 1000)) },
    },
    // A JWT session: the owner's own claims under a signature nobody made, and unsigned (`alg: none`).
    ...forgedTokens(ownerSession?.credential.token).map((forged) => ({
      label: `${forged.label} token`,
      credential: { token: forged.token },
    })),
  ];
  if (outsider) {
    const { credential } = await credentialOf(realtime, outsider.user);
    listeners.push({ label: `other tenant (${outsider.user.name})`, user: outsider.user.name, credential });
  }
  // Independent handshakes, opened at once: the quiet they are measured in is shared with nobody.
  const observers: Observer[] = await Promise.all(
    listeners.map(async (listener) => ({
      label: listener.label,
      ...(listener.user ? { user: listener.user } : {}),
      socket: await connect(realtime, channel, listener.label, listener.credential),
    })),
  );
  const unauthenticated = observers.filter((observer) => observer.user === undefined);
  await Promise.all(observers.map((observer) => observer.socket.settle(150, 600)));
  stats.accepted_without_valid_token = unauthenticated
    .filter((observer) => observer.socket.isOpen)
    .map((observer) => observer.label);
  stats.refused = unauthenticated
    .filter((observer) => !observer.socket.isOpen)
    .map(
      (observer) =>
        `${observer.label}: ${observer.socket.outcome.rejectedStatus ?? observer.socket.outcome.closeCode ?? observer.socket.outcome.error ?? observer.socket.outcome.closeReason ?? "closed"}`,
    );
  if (!owner || !ownerSession) {
    realtime.run.notes.push(`${channel.name}: no profile user could sign in, so no event could be caused`);
    return undefined;
  }

  const baseline = new Map(
    observers.map((observer) => [
      observer,
      observer.socket
        .received()
        .map((frame) => frame.text)
        .join("\n"),
    ]),
  );
  const connectedAt = realtime.clock();
  const ownerSocket = await connect(realtime, channel, `owner (${owner.name})`, ownerSession.credential);
  const ownerObserver: Observer = { label: `owner (${owner.name})`, user: owner.name, socket: ownerSocket };
  // Coming online may be announced by another channel than the one a client watches (presence).
  await Promise.all(
    realtime.allChannels
      .filter((known) => known.name !== channel.name)
      .map((other) =>
        connect(realtime, other, `owner (${owner.name}) on ${other.name}`, ownerSession.credential),
      ),
  );
  await waitForEvents(realtime, Math.min(realtime.waitMs, 400));
  stats.owner_accepted = ownerSocket.isOpen;

  // Who learned that the owner connected: frames naming the owner that no observer had seen before.
  const identityFrames = new Map<Observer, Frame>();
  for (const observer of observers) {
    const before = baseline.get(observer) ?? "";
    const needles = ownerSession.identity.filter((needle) => !before.includes(needle));
    const frame = observer.socket
      .received(connectedAt)
      .find((candidate) => needles.some((needle) => candidate.text.includes(needle)));
    if (frame) identityFrames.set(observer, frame);
  }
  return { unauthenticated, observers, ownerSocket, ownerObserver, identityFrames };
}
