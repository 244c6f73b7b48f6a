import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { DefectClass, Severity } from "../../envelope/taxonomy.ts";
import type { ToolContext } from "../../tools/context.ts";
import { buildFinding, candidateKey } from "../evidence/finding.ts";
import { maskedExchange } from "../http/exchange-record.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { findWebSocketPaths } from "../routes/find-source-routes.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { baseStats, openProbeRun, untilBudget, usableUsers } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { EventDriver } from "./event-driver.ts";
import { identityNeedles } from "./frames.ts";
import type { Placement, SocketCredential } from "./socket-auth.ts";
import { connectionRequest, describePlacement, parsePlacement, socketUrl } from "./socket-auth.ts";
import { ObservedSocket } from "./socket-client.ts";

// What every realtime probe shares: the live target and its sessions (through the HTTP probe run), the
// channels to probe, a socket registry that guarantees every socket is closed, the event driver, and the
// evidence: a masked transcript of every socket plus the HTTP exchanges that caused and checked events.

export interface RealtimeInput {
  channel?: string;
  wait_ms?: number;
  max_requests?: number;
}

export interface RealtimeRun {
  run: ProbeRun;
  context: ToolContext;
  placement: Placement;
  clock: () => number;
  driver: EventDriver;
  waitMs: number;
  timeoutMs: number;
  sockets: ObservedSocket[];
  channels: string[];
  /** Every known channel (the profile's and the map's), probed or not. */
  allChannels: string[];
  users: ProfileUser[];
  channelStats: Array<Record<string, unknown>>;
}

export interface Observer {
  label: string;
  /** Profile user name; undefined for the unauthenticated observers. */
  user?: string;
  socket: ObservedSocket;
}

const DEFAULT_WAIT_MS = 700;

/**
 * The channels to probe: the one asked for, else the profile's paths and the map's channels, else (when
 * neither lists any) the WebSocket endpoints the target's source declares.
 */
export function channelsOf(
  run: ProbeRun,
  wanted: string | undefined,
): { channels: string[]; skipped: string[] } {
  let listed = wanted
    ? [wanted]
    : [...(run.target.profile?.websocket?.paths ?? []), ...run.map.channels.map((channel) => channel.path)];
  if (listed.length === 0) listed = sourceChannels(run.context);
  const seen = new Set<string>();
  const channels: string[] = [];
  const skipped: string[] = [];
  for (const raw of listed) {
    const path = raw.trim().replace(/\/+$/, "") || "/";
    if (seen.has(path)) continue;
    seen.add(path);
    // A channel per record (`/ws/projects/{id}`) needs a record of the probe's own: given by the caller.
    if (/\{[^}]+\}|\/:[A-Za-z_]|<[^>]+>/.test(path)) skipped.push(path);
    else channels.push(path);
  }
  return { channels, skipped };
}

function sourceChannels(context: ToolContext): string[] {
  const root = context.target?.root;
  if (root === undefined) return [];
  const key = `realtime:source-channels:${root}`;
  let paths = context.shared.get(key) as string[] | undefined;
  if (!paths) {
    const exclude = context.target?.goldenLedger ? [context.target.goldenLedger] : [];
    paths = [...new Set(findWebSocketPaths(root, { exclude }).map((channel) => channel.path))];
    context.shared.set(key, paths);
  }
  return paths;
}

export async function openRealtimeRun(
  context: ToolContext,
  tool: string,
  input: RealtimeInput,
): Promise<RealtimeRun | string> {
  const run = openProbeRun(context, tool, { max_requests: input.max_requests ?? 400, timeout_ms: 5000 });
  if (typeof run === "string") return run;
  const { channels, skipped } = channelsOf(run, input.channel);
  for (const path of skipped)
    run.notes.push(`${path}: a channel per record is probed only when given concretely (channel input)`);
  if (channels.length === 0) {
    return "no WebSocket channel to probe: list websocket.paths in the target profile, or give channel";
  }
  const started = performance.now();
  const clock = () => Math.round(performance.now() - started);
  const realtime: RealtimeRun = {
    run,
    context,
    placement: parsePlacement(run.target.profile?.websocket?.auth),
    clock,
    driver: new EventDriver(run, clock),
    waitMs: input.wait_ms ?? DEFAULT_WAIT_MS,
    timeoutMs: 3000,
    sockets: [],
    channels,
    allChannels: [...new Set([...channels, ...channelsOf(run, undefined).channels])],
    users: [],
    channelStats: [],
  };
  await untilBudget(run, async () => {
    realtime.users = await usableUsers(run);
  });
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

/** Opens (and registers) one observer's socket; message-placed credentials go in the first frame. */
export async function connect(
  realtime: RealtimeRun,
  channel: string,
  label: string,
  credential: SocketCredential | undefined,
  query = "",
): Promise<ObservedSocket> {
  const base = socketUrl(realtime.run.target.baseUrl, channel) + query;
  const request = connectionRequest(base, realtime.placement, credential, realtime.run.target.profile);
  const socket = await ObservedSocket.open(request.url, {
    label,
    headers: request.headers,
    timeoutMs: realtime.timeoutMs,
    clock: realtime.clock,
  });
  realtime.sockets.push(socket);
  if (socket.outcome.opened && request.firstMessage) socket.send(request.firstMessage);
  return socket;
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
  probeChannel: (realtime: RealtimeRun, channel: string, candidates: EnvelopeDraft[]) => Promise<void>,
): Promise<string | { candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const realtime = await openRealtimeRun(context, tool, input);
  if (typeof realtime === "string") return realtime;
  const candidates: EnvelopeDraft[] = [];
  for (const channel of realtime.channels) {
    await withSockets(realtime, () => probeChannel(realtime, channel, candidates));
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
  channel: string,
  name: string,
  observers: readonly Observer[],
  exchanges: ReadonlyArray<{ label: string; exchange: HttpExchange }>,
  verdict: Record<string, unknown>,
): string {
  const masker = realtime.run.masker;
  const transcript = {
    channel,
    token_placement: describePlacement(realtime.placement),
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
        bytes: frame.bytes,
        text: masker.maskText(frame.text.length > 4000 ? `${frame.text.slice(0, 4000)}…` : frame.text),
      })),
    })),
    http: exchanges.map(({ label, exchange }) => ({ label, ...maskedExchange(exchange, masker) })),
    verdict,
  };
  return realtime.context.putArtifact(
    `${realtime.run.tool}/${slug(channel)}-${name}.json`,
    `${JSON.stringify(transcript, null, 2)}\n`,
  );
}

export interface RealtimeFindingInput {
  defectClass: Extract<DefectClass, `ws-${string}`>;
  channel: string;
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

/** An envelope draft at `channel: <path>` with the transcript first among its evidence. */
export function realtimeFinding(realtime: RealtimeRun, input: RealtimeFindingInput): EnvelopeDraft {
  const draft = buildFinding(realtime.run, {
    domain: "realtime",
    defectClass: input.defectClass,
    title: input.title,
    summary: input.summary,
    impact: input.impact,
    location: { kind: "channel", value: input.channel },
    severity: input.severity,
    confidence: input.confidence,
    discriminator: input.discriminator,
    exchanges: input.exchanges,
    steps: input.steps,
    notes: input.notes,
    suggestedFixArea: input.channel,
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
      token_placement: describePlacement(realtime.placement),
      events_caused: realtime.driver.events.length,
      sockets_opened: realtime.sockets.length,
      sockets_left_open: realtime.sockets.filter((socket) => socket.isOpen).length,
    }),
  };
}
