import type { Channel } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { findWebSocketPaths } from "../routes/find-source-routes.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ChannelProtocol } from "./connection.ts";
import { type FoundChannel, scanChannels } from "./find-channels.ts";
import type { Placement } from "./socket-auth.ts";
import { parsePlacement, parsePlacements } from "./socket-auth.ts";

// The channels a realtime probe connects to, each with its protocol and where its credential goes. They
// come from the profile (`websocket.paths`), the pinned map (with protocol, namespaces and events) and the
// target's source (socket.io servers, always; plain WebSocket endpoints when nothing else lists any), so a
// target whose profile says nothing about sockets still gets its channels probed. A socket.io server is
// one channel per namespace.

export interface ProbedChannel {
  /** How notes, stats and titles name it: the path, plus the namespace for a socket.io namespace. */
  name: string;
  path: string;
  protocol: ChannelProtocol;
  /** socket.io namespace; `/` for plain WebSocket. */
  namespace: string;
  /** socket.io event names the source or map lists (words that say what the channel carries). */
  events: string[];
  placements: Placement[];
}

export interface ChannelRequest {
  channel?: string;
  namespace?: string;
}

/** Where a socket.io server usually reads a token, tried all at once when nothing says which. */
const SOCKET_IO_DEFAULTS: Placement[] = [
  { kind: "auth", field: "token" },
  { kind: "query", name: "token" },
  { kind: "header", name: "Authorization" },
];
const AUTH_EVENT = /^(auth|authenticate|authentication|authorize|login|identify)$/i;

export function channelName(path: string, protocol: ChannelProtocol, namespace: string): string {
  return protocol === "socket.io" && namespace !== "/" ? `${path} namespace ${namespace}` : path;
}

/** How a title names the channel: `WebSocket /ws/x`, `socket.io /socket.io`, `socket.io namespace /chat`. */
export function describeChannel(channel: ProbedChannel): string {
  if (channel.protocol === "websocket") return `WebSocket ${channel.path}`;
  return channel.namespace === "/"
    ? `socket.io ${channel.path}`
    : `socket.io namespace ${channel.namespace} (${channel.path})`;
}

/**
 * Words that may say what a channel carries, as paths for the event driver to match against resource
 * names: the channel's own (its path; for socket.io the namespace), and weaker hints (socket.io event
 * names, `note:created` → `note/created`: a server's events are listed for all its namespaces at once, so
 * they tell which collection a namespace carries only when its own name does not).
 */
export function channelWords(channel: ProbedChannel): { words: string; hints: string } {
  if (channel.protocol === "websocket") return { words: channel.path, hints: "" };
  const split = (texts: readonly string[]) =>
    `/${texts
      .flatMap((text) => text.split(/[^A-Za-z0-9_-]+/))
      .filter(Boolean)
      .join("/")}`;
  return { words: split([channel.namespace]), hints: split(channel.events) };
}

/** A socket.io Engine.IO path (`/socket.io`, `/app/socket.io/`) when nothing else says the protocol. */
export function looksLikeSocketIo(path: string): boolean {
  return /(^|\/)socket\.io\/?$/.test(path);
}

function normalize(path: string): string {
  return path.trim().replace(/\/+$/, "") || "/";
}

/**
 * The channels to probe: the one asked for, else every known one. Templated paths (`/ws/projects/{id}`)
 * need a record of the probe's own and are skipped unless given concretely.
 */
export function channelsOf(
  run: ProbeRun,
  wanted: ChannelRequest = {},
): { channels: ProbedChannel[]; skipped: string[] } {
  const source = sourceChannels(run.context);
  const known = knownChannels(run, source);
  let listed: Channel[];
  if (wanted.channel) {
    const asked = normalize(wanted.channel);
    const matching = known.filter(
      (channel) => channel.path === asked || (channel.namespaces ?? []).includes(asked),
    );
    listed =
      matching.length > 0
        ? matching.map((channel) => (channel.path === asked ? channel : { ...channel, namespaces: [asked] }))
        : [{ path: asked, seen_in: ["input"] }];
  } else listed = known;

  const channels: ProbedChannel[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  for (const channel of listed) {
    const path = normalize(channel.path);
    if (/\{[^}]+\}|\/:[A-Za-z_]|<[^>]+>/.test(path)) {
      skipped.push(path);
      continue;
    }
    const protocol = channel.protocol ?? (looksLikeSocketIo(path) ? "socket.io" : "websocket");
    const namespaces = protocol === "socket.io" ? (channel.namespaces ?? ["/"]) : ["/"];
    for (const namespace of namespaces) {
      if (wanted.namespace && namespace !== wanted.namespace) continue;
      const name = channelName(path, protocol, namespace);
      if (seen.has(name)) continue;
      seen.add(name);
      const events = channel.events ?? [];
      channels.push({
        name,
        path,
        protocol,
        namespace,
        events,
        placements: placementsFor(
          run,
          protocol,
          events,
          source.find((found) => found.channel.path === path),
        ),
      });
    }
  }
  return { channels, skipped };
}

/** The profile's paths, the map's channels and the source's socket.io servers, merged by path. */
function knownChannels(run: ProbeRun, source: readonly FoundChannel[]): Channel[] {
  const byPath = new Map<string, Channel>();
  const merge = (channel: Channel): void => {
    const path = normalize(channel.path);
    const existing = byPath.get(path);
    if (!existing) {
      byPath.set(path, { ...channel, path });
      return;
    }
    const union = (left?: string[], right?: string[]) =>
      left || right ? [...new Set([...(left ?? []), ...(right ?? [])])] : undefined;
    byPath.set(path, {
      ...existing,
      protocol: existing.protocol ?? channel.protocol,
      namespaces: union(existing.namespaces, channel.namespaces),
      events: union(existing.events, channel.events),
      seen_in: [...new Set([...existing.seen_in, ...channel.seen_in])],
    });
  };
  for (const path of run.target.profile?.websocket?.paths ?? []) merge({ path, seen_in: ["profile"] });
  for (const channel of run.map.channels) merge(channel);
  for (const found of source) merge(found.channel);
  if (byPath.size === 0)
    for (const path of plainSourcePaths(run.context)) merge({ path, seen_in: ["source"] });
  return [...byPath.values()];
}

/**
 * Where a plain WebSocket server usually reads a credential, tried all at once when the profile does not
 * say (a server reads the one it knows and ignores the others): the credential as the HTTP API takes it
 * (the login recipe's header or cookie: servers that reuse their HTTP authentication on the upgrade, as
 * Django Channels, ActionCable and Spring do), the usual query parameters (`?token=`, `?access_token=`),
 * and a first message carrying it under the same names. An API key sent in `X-API-Key` is also offered
 * under that header's name (`api_key`).
 */
export function plainWebSocketDefaults(profile: ProbeRun["target"]["profile"]): Placement[] {
  const applyAs = profile?.auth?.login?.apply_as ?? "header:Authorization";
  const header = /^header:(.+)$/i.exec(applyAs)?.[1]?.trim();
  const names = ["token", "access_token"];
  if (header && header.toLowerCase() !== "authorization") {
    const named = header
      .replace(/^x-/i, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_");
    if (named && !names.includes(named)) names.push(named);
  }
  return [
    { kind: "header", name: header ?? (/^cookie:/i.test(applyAs) ? "Cookie" : "Authorization") },
    ...names.map((name): Placement => ({ kind: "query", name })),
    ...names.map((field): Placement => ({ kind: "message", field })),
  ];
}

/**
 * Plain WebSocket: the profile's `websocket.auth`, else the usual places (`plainWebSocketDefaults`).
 * socket.io: every place the source reads a credential,
 * the profile's placement, and the usual places (handshake auth, query, Authorization header) at once: a
 * server reads the one it knows and ignores the others.
 */
function placementsFor(
  run: ProbeRun,
  protocol: ChannelProtocol,
  events: readonly string[],
  found: FoundChannel | undefined,
): Placement[] {
  const declared = run.target.profile?.websocket?.auth;
  const profile = parsePlacements(declared);
  if (protocol === "websocket") return declared ? profile : plainWebSocketDefaults(run.target.profile);
  const fromSource = (found?.credentials ?? [])
    .map((text) => parsePlacement(text))
    .filter((placement): placement is Placement => placement !== undefined);
  const authEvent = events.find((event) => AUTH_EVENT.test(event));
  const fromEvents: Placement[] =
    authEvent && !fromSource.some((placement) => placement.kind === "event")
      ? [{ kind: "event", event: authEvent, field: "token" }]
      : [];
  const placements: Placement[] = [];
  const keys = new Set<string>();
  for (const placement of [...fromSource, ...profile, ...SOCKET_IO_DEFAULTS, ...fromEvents]) {
    const key = JSON.stringify(placement).toLowerCase();
    if (keys.has(key)) continue;
    keys.add(key);
    placements.push(placement);
  }
  return placements;
}

/** The target's source read once per run: socket.io servers and other channels the route scanner misses. */
function sourceChannels(context: ToolContext): FoundChannel[] {
  return cachedScan(context, "found", (root, exclude) => scanChannels(root, { exclude }).channels);
}

/** Plain `ws` paths from the route scanner: only asked for when nothing else lists a channel (it is slow). */
function plainSourcePaths(context: ToolContext): string[] {
  return cachedScan(context, "plain", (root, exclude) => [
    ...new Set(findWebSocketPaths(root, { exclude }).map((channel) => channel.path)),
  ]);
}

function cachedScan<Value>(
  context: ToolContext,
  name: string,
  scan: (root: string, exclude: string[]) => Value[],
): Value[] {
  const root = context.target?.root;
  if (root === undefined) return [];
  const key = `realtime:source-channels:${name}:${root}`;
  let value = context.shared.get(key) as Value[] | undefined;
  if (!value) {
    value = scan(root, context.target?.goldenLedger ? [context.target.goldenLedger] : []);
    context.shared.set(key, value);
  }
  return value;
}
