import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { DefectClass, Severity } from "../../envelope/taxonomy.ts";
import type { ToolContext } from "../../tools/context.ts";
import { buildFinding, candidateKey } from "../evidence/finding.ts";
import { maskedExchange } from "../http/exchange-record.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { QuietWindows } from "../http/quiet-window.ts";
import { quietWindowsOf } from "../http/quiet-window.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { baseStats, openProbeRun, untilBudget, usableUsers } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { ArrivalGate } from "./arrival-gate.ts";
import { arrivalGateOf } from "./arrival-gate.ts";
import type { ProbedChannel } from "./channels.ts";
import { channelsOf } from "./channels.ts";
import type { ObservedConnection, OpenOptions, RealtimeConnection } from "./connection.ts";
import { patientDelay } from "./connection.ts";
import { EventDriver } from "./event-driver.ts";
import { identityNeedles } from "./frames.ts";
import type { SocketCredential } from "./socket-auth.ts";
import { connectionRequest, describePlacement, socketUrl } from "./socket-auth.ts";
import { ObservedSocket } from "./socket-client.ts";
import { ObservedSocketIo } from "./socketio-client.ts";

// What every realtime probe shares: the live target and its sessions (through the HTTP probe run), the
// channels to probe (plain WebSocket or socket.io), a connection registry that guarantees every connection
// is closed, the event driver, and the evidence: a masked transcript of every connection plus the HTTP
// exchanges that caused and checked events.

export interface RealtimeInput {
  channel?: string;
  namespace?: string;
  wait_ms?: number;
  max_requests?: number;
}

export interface RealtimeRun {
  run: ProbeRun;
  context: ToolContext;
  clock: () => number;
  driver: EventDriver;
  waitMs: number;
  timeoutMs: number;
  sockets: RealtimeConnection[];
  channels: ProbedChannel[];
  /** Every known channel (the profile's, the map's and the source's), probed or not. */
  allChannels: ProbedChannel[];
  users: ProfileUser[];
  channelStats: Array<Record<string, unknown>>;
  /**
   * The run's measurement windows: a connection's handshake honours them like a request, and every wait
   * for the target's frames extends by the time spent measuring in them (`heldMs`).
   */
  windows: QuietWindows;
  /** The run's realtime probes share the target, but for measuring who learns that a user came online. */
  gate: ArrivalGate;
}

export interface Observer {
  label: string;
  /** Profile user name; undefined for the unauthenticated observers. */
  user?: string;
  socket: RealtimeConnection;
}

const DEFAULT_WAIT_MS = 700;

export async function openRealtimeRun(
  context: ToolContext,
  tool: string,
  input: RealtimeInput,
  options: { measuresArrival?: boolean } = {},
): Promise<RealtimeRun | string> {
  const run = openProbeRun(context, tool, { max_requests: input.max_requests ?? 400, timeout_ms: 5000 });
  if (typeof run === "string") return run;
  const { channels, skipped } = channelsOf(run, { channel: input.channel, namespace: input.namespace });
  for (const path of skipped)
    run.notes.push(`${path}: a channel per record is probed only when given concretely (channel input)`);
  if (channels.length === 0) {
    return "no WebSocket or socket.io channel to probe: none in the map, the profile (websocket.paths) or the source; give channel";
  }
  const started = performance.now();
  const clock = () => Math.round(performance.now() - started);
  const windows = quietWindowsOf(context);
  const realtime: RealtimeRun = {
    run,
    context,
    clock,
    driver: new EventDriver(run, clock),
    waitMs: input.wait_ms ?? DEFAULT_WAIT_MS,
    timeoutMs: 3000,
    sockets: [],
    channels,
    allChannels: [
      ...channels,
      ...channelsOf(run).channels.filter((other) => !channels.some((channel) => channel.name === other.name)),
    ],
    users: [],
    channelStats: [],
    windows,
    gate: arrivalGateOf(context, run.target.baseUrl),
  };
  // Claimed before the first wait, so the probes started beside it find the claim when they begin.
  if (options.measuresArrival) realtime.gate.reserve(realtime);
  try {
    await untilBudget(run, async () => {
      realtime.users = await usableUsers(run);
    });
  } catch (error) {
    realtime.gate.release(realtime);
    throw error;
  }
  if (!run.target.writesAllowed) {
    run.notes.push(
      "the target does not allow writes (external, allow_writes: false): no event can be caused, so no event-based check can conclude",
    );
  }
  return realtime;
}

/** A signed-in user's socket credential and who they are (for identity-bearing events). */
export async function credentialOf(
  realtime: RealtimeRun,
  user: ProfileUser,
): Promise<{ credential: SocketCredential; identity: string[] }> {
  const credential = await realtime.run.sessions.signIn(user.name, realtime.run.client);
  return {
    credential: { token: credential.token ?? "", cookies: credential.cookies },
    identity: identityNeedles(user.username, credential.exchange?.response?.json),
  };
}

/**
 * What a reconnecting client sends to resume: query values (`since=12`; socket.io gets them in its
 * handshake auth too) and socket.io handshake auth values (a recovery session id and offset).
 */
export interface ResumeValues {
  query?: Record<string, string>;
  auth?: Record<string, unknown>;
}

/**
 * Opens (and registers) one observer's connection with `credential` where the channel reads it; a
 * credential placed in a message goes in the first frame (socket.io: the first event).
 */
export async function connect(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  label: string,
  credential: SocketCredential | undefined,
  resume: ResumeValues = {},
): Promise<RealtimeConnection> {
  const target = realtime.run.target;
  const url = socketUrl(target.baseUrl, channel.path);
  const request = connectionRequest(url, channel.placements, credential, target.profile);
  Object.assign(request.query, resume.query);
  const options = { label, headers: request.headers, timeoutMs: realtime.timeoutMs, clock: realtime.clock };
  // A handshake is a request: it waits outside others' windows, and a window waits for it to finish.
  const attempt = async () => {
    const leave = await realtime.windows.enter(realtime);
    try {
      return await open(channel, url, request, options, resume);
    } finally {
      leave();
    }
  };
  let socket = await attempt();
  // A handshake that timed out met a busy target, not an answer: it is tried once more.
  if (!socket.outcome.opened && socket.outcome.error === "timeout") socket = await attempt();
  socket.stalls = () => realtime.windows.heldMs();
  realtime.sockets.push(socket);
  if (socket.outcome.opened && request.firstMessage)
    socket.send(request.firstMessage.payload, request.firstMessage.event);
  return socket;
}

/** The connection itself, plain WebSocket or socket.io, with the resume values where each reads them. */
function open(
  channel: ProbedChannel,
  url: string,
  request: ReturnType<typeof connectionRequest>,
  options: OpenOptions,
  resume: ResumeValues,
): Promise<ObservedConnection> {
  if (channel.protocol === "socket.io") {
    const engine = new URL(url);
    return ObservedSocketIo.open(`${engine.protocol === "wss:" ? "https:" : "http:"}//${engine.host}`, {
      ...options,
      path: engine.pathname,
      namespace: channel.namespace,
      query: request.query,
      auth: resume.query || resume.auth ? { ...request.auth, ...resume.query, ...resume.auth } : request.auth,
    });
  }
  const query = Object.entries(resume.query ?? {})
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join("&");
  const separator = request.url.includes("?") ? "&" : "?";
  return ObservedSocket.open(query ? `${request.url}${separator}${query}` : request.url, options);
}

/** Waits `ms` for the target's events, longer by the measurement windows held meanwhile. */
export function waitForEvents(realtime: RealtimeRun, ms: number): Promise<void> {
  return patientDelay(ms, () => realtime.windows.heldMs());
}

export async function closeAll(realtime: RealtimeRun): Promise<void> {
  await Promise.all(realtime.sockets.map((socket) => socket.close()));
}

/** Runs `body` with every socket closed afterwards, whatever happens; a spent budget ends it quietly. */
export async function withSockets(realtime: RealtimeRun, body: () => Promise<void>): Promise<void> {
  try {
    await untilBudget(realtime.run, body);
  } finally {
    await closeAll(realtime);
  }
}

/** What every realtime probe does around its channel check: open the run, probe each channel with its
 * sockets closed afterwards, and answer the candidates with the run's stats. */
export async function probeEachChannel(
  context: ToolContext,
  tool: string,
  input: RealtimeInput,
  probeChannel: (realtime: RealtimeRun, channel: ProbedChannel, candidates: EnvelopeDraft[]) => Promise<void>,
  options: { measuresArrival?: boolean } = {},
): Promise<string | { candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const realtime = await openRealtimeRun(context, tool, input, options);
  if (typeof realtime === "string") return realtime;
  const candidates: EnvelopeDraft[] = [];
  try {
    for (const channel of realtime.channels) {
      await realtime.gate.share(realtime, () =>
        withSockets(realtime, () => probeChannel(realtime, channel, candidates)),
      );
    }
  } finally {
    realtime.gate.release(realtime);
  }
  return answer(realtime, candidates);
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 60) || "root"
  );
}

/** Writes the masked transcript of `observers` and `exchanges`; answers its URI. */
export function writeTranscript(
  realtime: RealtimeRun,
  channel: ProbedChannel,
  name: string,
  observers: readonly Observer[],
  exchanges: ReadonlyArray<{ label: string; exchange: HttpExchange }>,
  verdict: Record<string, unknown>,
): string {
  const masker = realtime.run.masker;
  const transcript = {
    channel: channel.name,
    protocol: channel.protocol,
    ...(channel.protocol === "socket.io" ? { namespace: channel.namespace } : {}),
    token_placement: describePlacement(channel.placements),
    clock: "milliseconds since the probe started",
    observers: observers.map((observer) => ({
      label: observer.label,
      user: observer.user ?? null,
      url: masker.maskUrl(observer.socket.url),
      outcome: observer.socket.outcome,
      bytes_received: observer.socket.bytesReceived,
      frames: observer.socket.frames.slice(0, 300).map((frame) => ({
        at: frame.at,
        direction: frame.direction,
        ...(frame.event !== undefined ? { event: frame.event } : {}),
        bytes: frame.bytes,
        text: masker.maskText(frame.text.length > 4000 ? `${frame.text.slice(0, 4000)}…` : frame.text),
      })),
    })),
    http: exchanges.map(({ label, exchange }) => ({ label, ...maskedExchange(exchange, masker) })),
    verdict,
  };
  return realtime.context.putArtifact(
    `${realtime.run.tool}/${slug(channel.name)}-${name}.json`,
    `${JSON.stringify(transcript, null, 2)}\n`,
  );
}

export interface RealtimeFindingInput {
  defectClass: Extract<DefectClass, `ws-${string}`>;
  channel: ProbedChannel;
  title: string;
  summary: string;
  impact: string;
  severity: Severity;
  confidence: number;
  transcriptUri: string;
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  steps: string[];
  notes?: string[];
  discriminator?: string;
}

/**
 * An envelope draft at `channel: <path>` with the transcript first among its evidence. A socket.io namespace
 * is a related place of its server's path (and tells findings on two namespaces apart).
 */
export function realtimeFinding(realtime: RealtimeRun, input: RealtimeFindingInput): EnvelopeDraft {
  const channel = input.channel;
  const namespaced = channel.protocol === "socket.io" && channel.namespace !== "/";
  const discriminator = [namespaced ? channel.namespace : undefined, input.discriminator]
    .filter(Boolean)
    .join(" ");
  const draft = buildFinding(realtime.run, {
    domain: "realtime",
    defectClass: input.defectClass,
    title: input.title,
    summary: input.summary,
    impact: input.impact,
    location: { kind: "channel", value: channel.path },
    ...(namespaced ? { related: [{ kind: "channel" as const, value: channel.namespace }] } : {}),
    severity: input.severity,
    confidence: input.confidence,
    ...(discriminator ? { discriminator } : {}),
    exchanges: input.exchanges,
    steps: input.steps,
    notes: input.notes,
    suggestedFixArea: channel.name,
  });
  draft.evidence.unshift({
    kind: "artifact",
    description:
      "socket transcript: every frame each observer sent and received, with times (credentials masked)",
    uri: input.transcriptUri,
  });
  return draft;
}

/** Candidates without repeats (one per class, channel and discriminator), and the probe's stats. */
export function answer(
  realtime: RealtimeRun,
  candidates: EnvelopeDraft[],
): { candidates: EnvelopeDraft[]; stats: Record<string, unknown> } {
  const seen = new Set<string>();
  const unique = candidates.filter((draft) => {
    const key = candidateKey(draft);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return {
    candidates: unique,
    stats: baseStats(realtime.run, {
      channels: realtime.channelStats,
      users: realtime.users.map((user) => user.name),
      token_placement: Object.fromEntries(
        realtime.channels.map((channel) => [channel.name, describePlacement(channel.placements)]),
      ),
      events_caused: realtime.driver.events.length,
      sockets_opened: realtime.sockets.length,
      sockets_left_open: realtime.sockets.filter((socket) => socket.isOpen).length,
    }),
  };
}
