import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import type { SystemMap } from "../../src/map/system-map.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";

// A small multi-tenant notes service written for these tests, with one WebSocket channel per behaviour:
// planted defects next to correct look-alikes.
//   /ws/open       no authentication, every tenant's notes to everyone            (ws-unauthenticated)
//   /ws/leaky      token required, but every tenant's notes to every socket       (ws-authorization)
//   /ws/secure     token required, tenant-scoped                                   correct
//   /ws/public     no authentication, public announcements only                    correct
//   /ws/closing    accepts the upgrade, then closes unauthenticated sockets 4401   correct
//   /ws/presence   who comes online: scoped for tokens, everyone for the rest      (ws-unauthenticated)
//   /ws/ordered    numbered, sent in order                                         correct
//   /ws/shuffled   numbered, every third event sent late                           (ws-ordering)
//   /ws/resumable  promises resume with last_event_id and replays                  correct
//   /ws/forgetful  promises resume with since but replays nothing                  (ws-reconnect)
//   /ws/firehose   256 KiB per event, never checks a slow client                   (ws-backpressure)
//   /ws/guarded    256 KiB per event, closes clients with over 1 MiB queued        correct
//   /ws/threads    notes tenant-scoped, but comments on notes to every socket     (ws-authorization)
//   /ws/discussions notes and comments both tenant-scoped (a teammate gets both)  correct
//   /ws/racy       numbers events from a counter read before an await and written after it: changes
//                  handled at the same time share a number; one early glitch repeats a number once (ws-ordering)
//   /ws/crowded    numbers changes one at a time until it is first handed several at once; from then on,
//                  changes handled together share a number (ws-ordering)
//   /ws/glitch     numbered in order, except that its third event reuses the second one's number  (ws-ordering)
//   /ws/echo       numbered in order, but its third event is delivered twice (same frame)          correct
//   /ws/chatty     tenant-scoped, but each note event embeds its author's whole account row: password
//                  hash and API key, which the API never shows                     (ws-authorization)
//   /ws/courteous  tenant-scoped, each note event embeds its author's id and name  correct
// Comments are created under a note (`POST /api/notes/{id}/comments`) and read by their own id
// (`GET /api/comments/{id}`), which answers `200 null` to a user who may not see them.

interface User {
  id: number;
  name: string;
  email: string;
  tenant: string;
  password: string;
}

interface Note {
  id: number;
  title: string;
  body: string;
  tenant: string;
}

interface Comment {
  id: number;
  note_id: number;
  text: string;
  tenant: string;
}

interface Client {
  socket: WebSocket;
  channel: string;
  user: User | undefined;
}

interface Outbound {
  type: string;
  tenant: string | undefined;
  data: Record<string, unknown>;
  /** The number /ws/racy gives the event (computed while the request was handled). */
  racySeq?: number;
  /** The number /ws/crowded gives the event. */
  crowdedSeq?: number;
  /** Who caused it (the account row /ws/chatty embeds whole). */
  author?: User;
}

export const PASSWORDS = { alice: "alice-pass-1", bob: "bob-pass-2", carol: "carol-pass-3" };
export const CHANNELS = [
  "/ws/open",
  "/ws/leaky",
  "/ws/secure",
  "/ws/public",
  "/ws/closing",
  "/ws/presence",
  "/ws/ordered",
  "/ws/shuffled",
  "/ws/resumable",
  "/ws/forgetful",
  "/ws/firehose",
  "/ws/guarded",
  "/ws/threads",
  "/ws/discussions",
  "/ws/racy",
  "/ws/crowded",
  "/ws/glitch",
  "/ws/echo",
  "/ws/chatty",
  "/ws/courteous",
];
const SNAPSHOT = "x".repeat(256 * 1024);

/** The account row as a careless serializer sees it: a bcrypt-shaped hash and an API key, per user. */
function accountRow(user: User): Record<string, unknown> {
  const digest = crypto.createHash("sha512").update(user.email).digest("base64").replace(/[+=]/g, ".");
  const key = crypto.createHash("sha256").update(`key:${user.email}`).digest("hex").slice(0, 32);
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    password_hash: `$2b$12$${digest.slice(0, 53)}`,
    api_key: `ak_${key}`,
  };
}

export interface FixtureApp {
  baseUrl: string;
  /** `METHOD /path` of every HTTP request received. */
  requests: string[];
  /** Sockets the server still holds open. */
  openSockets(): number;
  close(): Promise<void>;
}

export async function startFixtureApp(): Promise<FixtureApp> {
  const users: User[] = [
    { id: 1, name: "Alice Anders", email: "alice@tenant-a.test", tenant: "a", password: PASSWORDS.alice },
    { id: 2, name: "Bob Brennan", email: "bob@tenant-b.test", tenant: "b", password: PASSWORDS.bob },
    { id: 3, name: "Carol Cruz", email: "carol@tenant-a.test", tenant: "a", password: PASSWORDS.carol },
  ];
  const tokens = new Map<string, User>();
  const notes = new Map<number, Note>();
  const comments = new Map<number, Comment>();
  const announcements = new Map<number, { id: number; text: string }>();
  const clients = new Set<Client>();
  const perSocket = new WeakMap<Client, number>();
  const sequences = new Map<string, number>();
  const history = new Map<string, Array<Record<string, unknown>>>();
  const requests: string[] = [];
  let nextId = 1;
  let racyCounter = 0;
  let racyEvents = 0;
  /** /ws/racy's number for a change: read, a pause (as if writing elsewhere), then written back. */
  const racyNumber = async (): Promise<number | undefined> => {
    if (![...clients].some((client) => client.channel === "/ws/racy")) return undefined;
    const seq = racyCounter + 1;
    await new Promise((resolve) => setTimeout(resolve, 10));
    racyCounter = seq;
    racyEvents += 1;
    // One glitch early on: the third change repeats the second one's number.
    return racyEvents === 3 ? seq - 1 : seq;
  };
  let crowdedCounter = 0;
  let crowdedAtOnce = 0;
  let crowdedLoaded = false;
  let crowdedGrows = false;
  let crowdedQueue: Promise<unknown> = Promise.resolve();
  /**
   * /ws/crowded's number: one change at a time until it has once been handed several at once; after that
   * (more workers) each change reads the counter before a pause, so changes handled together share a number.
   */
  const crowdedNumber = async (): Promise<number | undefined> => {
    if (![...clients].some((client) => client.channel === "/ws/crowded")) return undefined;
    crowdedAtOnce += 1;
    try {
      if (crowdedLoaded) {
        const seq = crowdedCounter + 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        crowdedCounter = seq;
        return seq;
      }
      if (crowdedAtOnce > 1) crowdedGrows = true;
      const turn = crowdedQueue.then(async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        crowdedCounter += 1;
        return crowdedCounter;
      });
      crowdedQueue = turn;
      return await turn;
    } finally {
      crowdedAtOnce -= 1;
      if (crowdedAtOnce === 0 && crowdedGrows) crowdedLoaded = true;
    }
  };
  /** The numbers the racing channels give a change to a note. */
  const raceNumbers = async (): Promise<Pick<Outbound, "racySeq" | "crowdedSeq">> => {
    const [racySeq, crowdedSeq] = await Promise.all([racyNumber(), crowdedNumber()]);
    return { ...(racySeq ? { racySeq } : {}), ...(crowdedSeq ? { crowdedSeq } : {}) };
  };

  const userOf = (token: string | null | undefined): User | undefined =>
    token ? tokens.get(token) : undefined;
  const nextSeq = (key: string): number => {
    const value = (sequences.get(key) ?? 0) + 1;
    sequences.set(key, value);
    return value;
  };
  const sendTo = (client: Client, message: Record<string, unknown>): void => {
    if (client.socket.readyState === WebSocket.OPEN) client.socket.send(JSON.stringify(message));
  };

  function publish(event: Outbound): void {
    const isNote = event.type.startsWith("note.");
    const isComment = event.type.startsWith("comment.");
    const numbered = new Map<string, number>();
    const seqFor = (channel: string): number => {
      const key = `${channel}:${event.tenant}`;
      if (!numbered.has(key)) {
        numbered.set(key, nextSeq(key));
        if (channel === "/ws/resumable" || channel === "/ws/forgetful") {
          const list = history.get(key) ?? [];
          list.push({ type: event.type, seq: numbered.get(key), data: event.data });
          history.set(key, list);
        }
      }
      return numbered.get(key)!;
    };
    for (const channel of [
      "/ws/ordered",
      "/ws/shuffled",
      "/ws/resumable",
      "/ws/forgetful",
      "/ws/glitch",
      "/ws/echo",
    ])
      if (isNote) seqFor(channel);
    for (const client of clients) {
      const sameTenant = client.user?.tenant === event.tenant;
      switch (client.channel) {
        case "/ws/open":
        case "/ws/leaky":
          if (isNote) sendTo(client, { type: event.type, data: event.data });
          break;
        case "/ws/public":
          if (!isNote && !isComment) sendTo(client, { type: event.type, data: event.data });
          break;
        case "/ws/threads":
          // Planted: comments skip the tenant check the notes get.
          if ((isNote && sameTenant) || isComment) sendTo(client, { type: event.type, data: event.data });
          break;
        case "/ws/discussions":
          if ((isNote || isComment) && sameTenant) sendTo(client, { type: event.type, data: event.data });
          break;
        case "/ws/glitch":
        case "/ws/echo":
          if (isNote && sameTenant) {
            // Counted per socket, so the one-off happens on every subscriber's third event.
            const sent = (perSocket.get(client) ?? 0) + 1;
            perSocket.set(client, sent);
            const seq = seqFor(client.channel);
            const message = {
              type: event.type,
              seq: client.channel === "/ws/glitch" && sent === 3 ? seq - 1 : seq,
              data: event.data,
            };
            sendTo(client, message);
            if (client.channel === "/ws/echo" && sent === 3) sendTo(client, message);
          }
          break;
        case "/ws/racy":
          if (isNote && sameTenant && event.racySeq !== undefined)
            sendTo(client, { type: event.type, seq: event.racySeq, data: event.data });
          break;
        case "/ws/crowded":
          if (isNote && sameTenant && event.crowdedSeq !== undefined)
            sendTo(client, { type: event.type, seq: event.crowdedSeq, data: event.data });
          break;
        case "/ws/chatty":
        case "/ws/courteous":
          if (isNote && sameTenant && event.author) {
            const author =
              client.channel === "/ws/chatty"
                ? accountRow(event.author)
                : { id: event.author.id, name: event.author.name };
            sendTo(client, { type: event.type, data: { ...event.data, author } });
          }
          break;
        case "/ws/secure":
        case "/ws/closing":
          if (isNote && sameTenant) sendTo(client, { type: event.type, data: event.data });
          break;
        case "/ws/ordered":
        case "/ws/resumable":
        case "/ws/forgetful":
          if (isNote && sameTenant)
            sendTo(client, { type: event.type, seq: seqFor(client.channel), data: event.data });
          break;
        case "/ws/shuffled":
          if (isNote && sameTenant) {
            const seq = seqFor(client.channel);
            setTimeout(
              () => sendTo(client, { type: event.type, seq, data: event.data }),
              seq % 3 === 0 ? 40 : 0,
            );
          }
          break;
        case "/ws/firehose":
        case "/ws/guarded":
          if (!isNote || !sameTenant) break;
          if (client.channel === "/ws/guarded" && client.socket.bufferedAmount > 1024 * 1024) {
            client.socket.close(1013, "client too slow");
            break;
          }
          sendTo(client, { type: event.type, data: event.data, snapshot: SNAPSHOT });
          break;
      }
    }
  }

  function announcePresence(user: User): void {
    for (const client of clients) {
      if (client.channel !== "/ws/presence") continue;
      // Planted: a watcher without a (valid) token is shown everyone.
      if (client.user && client.user.tenant !== user.tenant) continue;
      sendTo(client, { type: "presence.join", user: { id: user.id, name: user.name } });
    }
  }

  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    requests.push(`${request.method} ${url.pathname}`);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body =
        chunks.length > 0
          ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>)
          : {};
    } catch {
      body = {};
    }
    const reply = (status: number, value: unknown): void => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const user = userOf(request.headers.authorization?.replace(/^Bearer /, ""));
    const noteId = /^\/api\/notes\/(\d+)$/.exec(url.pathname)?.[1];
    const threadId = /^\/api\/notes\/(\d+)\/comments$/.exec(url.pathname)?.[1];
    const commentId = /^\/api\/comments\/(\d+)$/.exec(url.pathname)?.[1];
    const announcementId = /^\/api\/announcements\/(\d+)$/.exec(url.pathname)?.[1];
    if (url.pathname === "/health") return reply(200, { ok: true });
    if (url.pathname === "/api/login" && request.method === "POST") {
      const found = users.find(
        (candidate) => candidate.email === body.username && candidate.password === body.password,
      );
      if (!found) return reply(401, { error: "bad credentials" });
      const token = `tok-${found.id}-${Math.random().toString(36).slice(2)}`;
      tokens.set(token, found);
      return reply(200, { token, user: { id: found.id, name: found.name, email: found.email } });
    }
    if (url.pathname === "/api/announcements" && request.method === "POST") {
      if (!user) return reply(401, { error: "sign in" });
      const announcement = { id: nextId++, text: String(body.text ?? "") };
      announcements.set(announcement.id, announcement);
      publish({ type: "announcement.created", tenant: undefined, data: announcement });
      return reply(201, announcement);
    }
    if (announcementId && request.method === "GET") {
      const announcement = announcements.get(Number(announcementId));
      return announcement ? reply(200, announcement) : reply(404, { error: "not found" });
    }
    if (!user) return reply(401, { error: "sign in" });
    if (url.pathname === "/api/notes" && request.method === "POST") {
      const note: Note = {
        id: nextId++,
        title: String(body.title ?? ""),
        body: String(body.body ?? ""),
        tenant: user.tenant,
      };
      notes.set(note.id, note);
      publish({
        type: "note.created",
        tenant: user.tenant,
        data: { ...note },
        author: user,
        ...(await raceNumbers()),
      });
      return reply(201, note);
    }
    if (url.pathname === "/api/notes" && request.method === "GET") {
      return reply(200, { items: [...notes.values()].filter((note) => note.tenant === user.tenant) });
    }
    if (threadId) {
      const note = notes.get(Number(threadId));
      if (!note || note.tenant !== user.tenant) return reply(404, { error: "not found" });
      if (request.method === "GET")
        return reply(200, { items: [...comments.values()].filter((comment) => comment.note_id === note.id) });
      if (request.method === "POST") {
        const comment: Comment = {
          id: nextId++,
          note_id: note.id,
          text: String(body.text ?? ""),
          tenant: note.tenant,
        };
        comments.set(comment.id, comment);
        publish({ type: "comment.created", tenant: note.tenant, data: { ...comment } });
        return reply(201, comment);
      }
    }
    if (commentId && request.method === "GET") {
      const comment = comments.get(Number(commentId));
      return reply(200, comment && comment.tenant === user.tenant ? comment : null);
    }
    if (noteId) {
      const note = notes.get(Number(noteId));
      if (!note || note.tenant !== user.tenant) return reply(404, { error: "not found" });
      if (request.method === "GET") return reply(200, note);
      if (request.method === "PATCH") {
        if (typeof body.title === "string") note.title = body.title;
        if (typeof body.body === "string") note.body = body.body;
        publish({ type: "note.updated", tenant: user.tenant, data: { ...note }, ...(await raceNumbers()) });
        return reply(200, note);
      }
    }
    return reply(404, { error: "not found" });
  });

  const sockets = new WebSocketServer({ noServer: true });
  server.on("upgrade", (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const channel = url.pathname;
    const user = userOf(url.searchParams.get("token"));
    const refuse = (status: number) => {
      socket.write(`HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    if (!CHANNELS.includes(channel)) return refuse(404);
    const needsToken = !["/ws/open", "/ws/public", "/ws/closing", "/ws/presence"].includes(channel);
    if (needsToken && !user) return refuse(401);
    sockets.handleUpgrade(request, socket, head, (ws) => {
      const client: Client = { socket: ws, channel, user };
      if (channel === "/ws/closing" && !user) {
        ws.send(JSON.stringify({ type: "error", message: "unauthorized" }));
        ws.close(4401, "unauthorized");
        return;
      }
      clients.add(client);
      ws.on("close", () => clients.delete(client));
      ws.on("error", () => clients.delete(client));
      if (channel === "/ws/resumable" || channel === "/ws/forgetful") {
        sendTo(client, {
          type: "hello",
          resume: { param: channel === "/ws/resumable" ? "last_event_id" : "since" },
        });
        const from = url.searchParams.get("last_event_id");
        if (channel === "/ws/resumable" && from && user) {
          for (const event of history.get(`${channel}:${user.tenant}`) ?? []) {
            if (Number(event.seq) > Number(from)) sendTo(client, event);
          }
        }
      }
      if (channel === "/ws/secure" && user) announcePresence(user);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    openSockets: () => clients.size,
    close: async () => {
      for (const client of clients) client.socket.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const textSchema = {
  type: "object",
  required: ["title", "body"],
  properties: { title: { type: "string" }, body: { type: "string" } },
};
const operation = (method: string, path: string, extra: Record<string, unknown> = {}) => ({
  method,
  path,
  security: "required" as const,
  parameters: path.includes("{id}")
    ? [{ name: "id", in: "path" as const, required: true, schema: { type: "integer" } }]
    : [],
  responses: {},
  seen_in: ["openapi" as const],
  documented: true,
  ...extra,
});

export function fixtureMap(baseUrl: string): SystemMap {
  return {
    map_version: 1,
    target: "realtime-fixture",
    created_at: new Date().toISOString(),
    commit: null,
    base_url: baseUrl,
    openapi: null,
    operations: [
      operation("POST", "/api/login", {
        security: "public",
        request_body: { content_type: "application/json", required: true, schema: { type: "object" } },
      }),
      operation("GET", "/api/notes"),
      operation("POST", "/api/notes", {
        request_body: { content_type: "application/json", required: true, schema: textSchema },
      }),
      operation("GET", "/api/notes/{id}"),
      operation("PATCH", "/api/notes/{id}", {
        request_body: { content_type: "application/json", required: true, schema: textSchema },
      }),
      operation("POST", "/api/announcements", {
        request_body: {
          content_type: "application/json",
          required: true,
          schema: { type: "object", required: ["text"], properties: { text: { type: "string" } } },
        },
      }),
      operation("GET", "/api/announcements/{id}", { security: "public" }),
      operation("GET", "/api/notes/{id}/comments"),
      operation("POST", "/api/notes/{id}/comments", {
        request_body: {
          content_type: "application/json",
          required: true,
          schema: {
            type: "object",
            required: ["text"],
            properties: { text: { type: "string", example: "Looks right to me." } },
          },
        },
      }),
      operation("GET", "/api/comments/{id}"),
    ],
    routes: [],
    pages: [],
    channels: CHANNELS.map((path) => ({ path, seen_in: ["source"] })),
    graphql: [],
    database: null,
    ownership: [],
    notes: [],
  };
}

export function fixtureTarget(
  baseUrl: string,
  options: {
    paths?: string[];
    mode?: "external" | "managed";
    allowWrites?: boolean;
    teammate?: boolean;
  } = {},
): LoadedTarget {
  process.env.QAAS_RT_ALICE_PASSWORD = PASSWORDS.alice;
  process.env.QAAS_RT_BOB_PASSWORD = PASSWORDS.bob;
  process.env.QAAS_RT_CAROL_PASSWORD = PASSWORDS.carol;
  // Carol shares Alice's tenant: receiving Alice's records is correct for her.
  const teammate = options.teammate
    ? [
        {
          name: "carol",
          role: "member",
          tenant: "a",
          username: "carol@tenant-a.test",
          password: "secret_ref:QAAS_RT_CAROL_PASSWORD",
        },
      ]
    : [];
  const profile = TargetProfileSchema.parse({
    name: "realtime-fixture",
    source: {},
    environment: {
      mode: options.mode ?? "external",
      base_url: baseUrl,
      allow_writes: options.allowWrites ?? true,
    },
    websocket: { paths: options.paths ?? ["/ws/secure"], auth: "query:token" },
    auth: {
      login: {
        kind: "json",
        endpoint: "POST /api/login",
        body: { username: "{username}", password: "{password}" },
        token_from: "body:token",
      },
    },
    users: [
      {
        name: "alice",
        role: "member",
        tenant: "a",
        username: "alice@tenant-a.test",
        password: "secret_ref:QAAS_RT_ALICE_PASSWORD",
      },
      {
        name: "bob",
        role: "member",
        tenant: "b",
        username: "bob@tenant-b.test",
        password: "secret_ref:QAAS_RT_BOB_PASSWORD",
      },
      ...teammate,
    ],
  });
  return { profile, file: "/dev/null/realtime.yaml", root: undefined, goldenLedger: undefined };
}
