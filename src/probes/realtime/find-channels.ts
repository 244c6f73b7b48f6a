import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Channel } from "../../map/system-map.ts";
import { listSourceFiles, type SourceTreeOptions } from "../routes/source-tree.ts";
import { pythonInterpreter, pythonScriptFile } from "../source/python-script.ts";
import { readTreeFile } from "../source/walk-files.ts";
import { PYTHON_CHANNEL_SCRIPT } from "./python-channel-script.ts";
import type { SocketIoFileFacts } from "./socketio-javascript.ts";
import { DEFAULT_SOCKET_IO_PATH, socketIoFileFacts } from "./socketio-javascript.ts";

// Realtime channels a target's source declares beyond plain `ws` servers (which the route scanner
// reports): socket.io servers in Node and Python (Flask-SocketIO, python-socketio) with their Engine.IO
// path, namespaces and event names, and plain WebSocket endpoints of Python's `websockets`, Starlette and
// flask_sockets.
// Each channel also says where the server reads a client's credential, for the probes that connect.

export interface FoundChannel {
  channel: Channel;
  /** Placements the source reads (`auth:token`, `query:token`, `header:cookie`, `event:authenticate`). */
  credentials: string[];
  /** The server checks connections (middleware, a connect handler). */
  checksConnections: boolean;
  /** `file:line` of what declared it. */
  declaredIn: string[];
}

export interface ChannelScan {
  channels: FoundChannel[];
  notes: string[];
}

const JAVASCRIPT = new Set([".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"]);
const PYTHON = new Set([".py"]);

interface PythonFacts {
  socketio: boolean;
  servers: Array<{ path: string; line: number; explicit: boolean }>;
  namespaces: string[];
  events: string[];
  credentials: string[];
  channels: Array<{ path: string; line: number; framework: string }>;
  middleware: boolean;
  root_namespace: boolean;
}

/** What one file contributes to a socket.io server, whichever language it is in. */
interface SocketIoPart {
  file: string;
  servers: Array<{ path: string; line: number; explicitPath: boolean }>;
  namespaces: string[];
  events: string[];
  credentials: string[];
  middleware: boolean;
  rootNamespace: boolean;
}

/** The channels the source declares, in the system map's shape. */
export function findChannels(root: string, options: SourceTreeOptions = {}): Channel[] {
  return scanChannels(root, options).channels.map((found) => found.channel);
}

export function scanChannels(root: string, options: SourceTreeOptions = {}): ChannelScan {
  const notes: string[] = [];
  const javascript = javascriptParts(root, options);
  const python = pythonParts(root, options, notes);
  const channels = [...socketIoChannels([...javascript, ...python.parts])];
  for (const plain of python.plain) {
    if (channels.some((found) => found.channel.path === plain.channel.path)) continue;
    channels.push(plain);
  }
  return { channels, notes };
}

function javascriptParts(root: string, options: SourceTreeOptions): SocketIoPart[] {
  const parts: Array<SocketIoPart & { facts: SocketIoFileFacts }> = [];
  for (const file of listSourceFiles(root, JAVASCRIPT, options).files) {
    const text = readTreeFile(root, file);
    // Only files that mention socket.io, a connected socket or a NestJS gateway are parsed.
    if (
      !text ||
      !/socket\.io|\.handshake|SubscribeMessage|\bsocket\.(on|emit)\(|\bio\.(on|of|emit|to)\(/.test(text)
    )
      continue;
    const facts = socketIoFileFacts(file, text);
    parts.push({
      file,
      facts,
      servers: facts.servers,
      namespaces: facts.namespaces,
      events: facts.events,
      credentials: facts.credentials,
      middleware: facts.middleware,
      rootNamespace: facts.rootNamespace,
    });
  }
  const project = parts.some((part) => part.facts.importsServer) || dependsOnSocketIo(root);
  // A file that imports no socket.io server speaks for one only in a project that has one, and only when
  // it is not a client or a plain `ws` server itself.
  return parts.filter((part) => part.facts.importsServer || (project && !part.facts.otherSocketLibrary));
}

function pythonParts(
  root: string,
  options: SourceTreeOptions,
  notes: string[],
): { parts: SocketIoPart[]; plain: FoundChannel[] } {
  const files = listSourceFiles(root, PYTHON, options).files.filter((file) =>
    /socketio|websockets|flask_sockets|WebSocketRoute|add_websocket_route|add_api_websocket_route/.test(
      readTreeFile(root, file) ?? "",
    ),
  );
  if (files.length === 0) return { parts: [], plain: [] };
  const result = spawnSync(pythonInterpreter(), [pythonScriptFile(PYTHON_CHANNEL_SCRIPT)], {
    input: JSON.stringify({ root, files }),
    encoding: "utf8",
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.error || result.status !== 0) {
    const reason = result.error?.message ?? result.stderr.trim().split("\n").pop() ?? `exit ${result.status}`;
    notes.push(`Python channels not read (python3 failed: ${reason})`);
    return { parts: [], plain: [] };
  }
  const output = JSON.parse(result.stdout) as { files: Record<string, PythonFacts>; errors: string[] };
  if (output.errors.length > 0) notes.push(`${output.errors.length} Python files did not parse`);
  const parts: SocketIoPart[] = [];
  const plain: FoundChannel[] = [];
  for (const [file, facts] of Object.entries(output.files)) {
    if (facts.socketio) {
      parts.push({
        file,
        servers: facts.servers.map((server) => ({ ...server, explicitPath: server.explicit })),
        namespaces: facts.namespaces,
        events: facts.events,
        credentials: facts.credentials,
        middleware: facts.middleware,
        rootNamespace: facts.root_namespace,
      });
    }
    for (const channel of facts.channels) {
      plain.push({
        channel: { path: channel.path, seen_in: ["source"], protocol: "websocket" },
        credentials: [],
        checksConnections: false,
        declaredIn: [`${file}:${channel.line}`],
      });
    }
  }
  return { parts, plain };
}

/**
 * One channel per Engine.IO path. What a file declares belongs to the server created in that file, else to
 * the project's main server (the first with an explicit path, else the first); events and namespaces of a
 * server created out of sight (a framework, another package) belong to the default path.
 */
function socketIoChannels(parts: SocketIoPart[]): FoundChannel[] {
  const servers = parts.flatMap((part) =>
    part.servers.map((server) => ({ ...server, in: `${part.file}:${server.line}` })),
  );
  const speaks = parts.some(
    (part) => part.events.length > 0 || part.namespaces.length > 0 || part.credentials.length > 0,
  );
  if (servers.length === 0 && !speaks) return [];
  const main = servers.find((server) => server.explicitPath) ?? servers[0];
  const byPath = new Map<string, FoundChannel & { rootNamespace: boolean }>();
  const channelAt = (serverPath: string): FoundChannel & { rootNamespace: boolean } => {
    let found = byPath.get(serverPath);
    if (!found) {
      found = {
        channel: { path: serverPath, seen_in: ["source"], protocol: "socket.io", namespaces: [], events: [] },
        credentials: [],
        checksConnections: false,
        declaredIn: [],
        rootNamespace: false,
      };
      byPath.set(serverPath, found);
    }
    return found;
  };
  for (const server of servers) channelAt(server.path).declaredIn.push(server.in);
  for (const part of parts) {
    const own = part.servers.find((server) => server.explicitPath) ?? part.servers[0];
    const found = channelAt(own?.path ?? main?.path ?? DEFAULT_SOCKET_IO_PATH);
    const add = (into: string[], values: readonly string[]): void => {
      for (const value of values) if (!into.includes(value)) into.push(value);
    };
    add(found.channel.namespaces!, part.namespaces);
    add(found.channel.events!, part.events);
    add(found.credentials, part.credentials);
    found.checksConnections ||= part.middleware;
    found.rootNamespace ||= part.rootNamespace;
  }
  return [...byPath.values()].map(({ rootNamespace, ...found }) => {
    const namespaces = found.channel.namespaces ?? [];
    // The main namespace always exists; it is worth probing when handlers use it or nothing else is named.
    const withRoot = rootNamespace || namespaces.length === 0 ? ["/", ...namespaces] : namespaces;
    const events = [...(found.channel.events ?? [])].sort();
    return { ...found, channel: { ...found.channel, namespaces: withRoot, events } };
  });
}

/** Whether the root package.json depends on a socket.io server (or NestJS's socket.io platform). */
function dependsOnSocketIo(root: string): boolean {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as Record<
      string,
      Record<string, string> | undefined
    >;
    const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
    return names.includes("socket.io") || names.includes("@nestjs/platform-socket.io");
  } catch {
    return false;
  }
}
