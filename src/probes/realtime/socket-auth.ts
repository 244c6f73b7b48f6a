import type { TargetProfile } from "../../targets/profile-schema.ts";

// How a connection carries its credential. Plain WebSocket (profile `websocket.auth`): `query:<name>` in the
// URL, `header:<Name>` on the upgrade request, or `message:<field>` in the first frame after it opens.
// socket.io adds `auth:<field>` (the handshake's auth payload) and `event:<name>[:<field>]` (a first event).
// Several may be given, comma-separated; a connection then carries the credential in every one of them.
// Also the credentials that must NOT work: a random string and a well-formed token that expired long ago.

export type Placement =
  | { kind: "query"; name: string }
  | { kind: "header"; name: string }
  | { kind: "message"; field: string }
  | { kind: "auth"; field: string }
  | { kind: "event"; event: string; field?: string };

export interface SocketCredential {
  token: string;
  cookies?: Record<string, string>;
}

export interface ConnectionRequest {
  /** The URL with query-placed credentials appended (what a plain WebSocket connects to). */
  url: string;
  headers: Record<string, string>;
  /** Query-placed credentials (socket.io passes them to its client as an object). */
  query: Record<string, string>;
  /** socket.io: the handshake's auth payload. */
  auth?: Record<string, unknown>;
  /** Sent right after the connection opens: a frame, or a socket.io event of that name. */
  firstMessage?: { event?: string; payload: unknown };
}

const PLACEMENT = /^(query|header|message|auth|event):(.+)$/;

/** Placements from a profile's `websocket.auth` (`query:token` when it says nothing or nothing usable). */
export function parsePlacements(auth: string | undefined): Placement[] {
  const parsed = (auth ?? "")
    .split(",")
    .map((part) => parsePlacement(part.trim()))
    .filter((placement): placement is Placement => placement !== undefined);
  return parsed.length > 0 ? parsed : [{ kind: "query", name: "token" }];
}

export function parsePlacement(text: string): Placement | undefined {
  const match = PLACEMENT.exec(text.trim());
  if (!match) return undefined;
  const kind = match[1] as Placement["kind"];
  const name = match[2]!.trim();
  switch (kind) {
    case "message":
    case "auth":
      return { kind, field: name };
    case "event": {
      const [event, field] = name.split(":", 2).map((part) => part.trim());
      return field ? { kind, event: event!, field } : { kind, event: event! };
    }
    default:
      return { kind, name };
  }
}

export function describePlacement(placements: readonly Placement[]): string {
  const one = (placement: Placement): string => {
    switch (placement.kind) {
      case "message":
        return `message field ${placement.field}`;
      case "auth":
        return `handshake auth ${placement.field}`;
      case "event":
        return `event ${placement.event}${placement.field ? ` field ${placement.field}` : ""}`;
      default:
        return `${placement.kind} ${placement.name}`;
    }
  };
  return placements.map(one).join(", ");
}

/** ws:// or wss:// for an http(s) base URL and a channel path (base path kept). */
export function socketUrl(baseUrl: string, channel: string): string {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  const normalized = channel.startsWith("/") ? channel : `/${channel}`;
  const full = prefix && !normalized.startsWith(`${prefix}/`) ? `${prefix}${normalized}` : normalized;
  const scheme = base.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${base.host}${full}`;
}

function nested(path: string, value: string): Record<string, unknown> {
  const parts = path.split(".").filter(Boolean);
  const root: Record<string, unknown> = {};
  let current = root;
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 1) current[part] = value;
    else {
      const child: Record<string, unknown> = {};
      current[part] = child;
      current = child;
    }
  }
  return root;
}

function cookieHeader(jar: Record<string, string>): string {
  return Object.entries(jar)
    .map(([key, value]) => `${key}=${value}`)
    .join("; ");
}

/**
 * What one observer sends when it connects. `credential` undefined connects with nothing at all. A header
 * named Authorization gets the login recipe's scheme; a Cookie header gets the recipe's cookie name. The
 * sign-in's cookies travel whatever the placements, as a browser sends them on the upgrade (servers often
 * read the web session itself).
 */
export function connectionRequest(
  url: string,
  placements: readonly Placement[],
  credential: SocketCredential | undefined,
  profile: TargetProfile | undefined,
): ConnectionRequest {
  const request: ConnectionRequest = { url, headers: {}, query: {} };
  if (!credential) return request;
  const login = profile?.auth?.login;
  const jar: Record<string, string> = { ...(credential.cookies ?? {}) };
  // A cookie session has no token to place: an empty one would read as a wrong credential.
  for (const placement of credential.token ? placements : []) {
    if (placement.kind === "query") request.query[placement.name] = credential.token;
    else if (placement.kind === "header") {
      const name = placement.name.toLowerCase();
      if (name === "authorization")
        request.headers.authorization = `${login?.scheme ?? "Bearer"} ${credential.token}`;
      else if (name === "cookie") {
        const cookieName = /^cookie:(.+)$/.exec(login?.apply_as ?? "")?.[1] ?? "token";
        Object.assign(jar, credential.cookies ?? {}, { [cookieName]: credential.token });
      } else request.headers[name] = credential.token;
    } else if (placement.kind === "auth") {
      request.auth = { ...request.auth, ...nested(placement.field, credential.token) };
    } else if (placement.kind === "message") {
      // Several message fields travel in one first message.
      const earlier = request.firstMessage;
      const merged =
        earlier &&
        earlier.event === undefined &&
        typeof earlier.payload === "object" &&
        earlier.payload !== null
          ? (earlier.payload as Record<string, unknown>)
          : {};
      request.firstMessage = { payload: { ...merged, ...nested(placement.field, credential.token) } };
    } else {
      request.firstMessage = {
        event: placement.event,
        payload: placement.field ? nested(placement.field, credential.token) : credential.token,
      };
    }
  }
  if (Object.keys(jar).length > 0) request.headers.cookie = cookieHeader(jar);
  const query = Object.entries(request.query)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join("&");
  if (query) request.url = `${url}${url.includes("?") ? "&" : "?"}${query}`;
  return request;
}

/** A random token no server can have issued. */
export function garbageToken(seed: string): string {
  return `qaas-invalid-${seed}-not-a-token`;
}

/**
 * A token shaped like the real one but expired an hour ago: a JWT with `exp` in the past (its signature is
 * not valid either), or for opaque tokens, a never-issued string of the same length.
 */
export function expiredToken(realToken: string | undefined, nowSeconds: number): string {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
  const parts = realToken?.split(".") ?? [];
  let payload: Record<string, unknown> = { sub: "1" };
  if (parts.length === 3) {
    try {
      payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
    } catch {
      // keep the minimal payload
    }
  } else if (realToken && realToken.length >= 8) {
    // An opaque token cannot be made to expire; one of the same length and alphabet never issued is the
    // nearest thing, and it shares no character run with the real one (evidence must not leak it).
    const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    return Array.from(
      { length: realToken.length },
      (_, index) => alphabet[(index * 7 + nowSeconds) % alphabet.length],
    ).join("");
  }
  const header = encode({ alg: "HS256", typ: "JWT" });
  const body = encode({ ...payload, iat: nowSeconds - 7200, exp: nowSeconds - 3600 });
  return `${header}.${body}.${Buffer.from("qaas-expired-signature").toString("base64url")}`;
}

/**
 * Tokens a server that verifies JWTs properly refuses, built from a real one (none when it is not a JWT):
 * its own claims, still valid in time, under a signature that is not the server's (a server that reads the
 * claims and checks the expiry but never the signature takes it), and the same claims with `alg: none` and
 * no signature at all (a server that verifies whatever algorithm the token names takes it).
 */
export function forgedTokens(realToken: string | undefined): Array<{ label: string; token: string }> {
  const parts = realToken?.split(".") ?? [];
  if (parts.length !== 3) return [];
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8")) as Record<string, unknown>;
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as unknown;
    if (typeof header?.alg !== "string" || payload === null || typeof payload !== "object") return [];
  } catch {
    return [];
  }
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
  // Same length and alphabet as the real signature, sharing none of it (evidence must not leak it).
  const signature = parts[2]!;
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const forged = Array.from(signature.length > 0 ? signature : "x".repeat(43), (char, index) => {
    let next = alphabet[(index * 11 + 5) % alphabet.length]!;
    if (next === char) next = alphabet[(index * 11 + 6) % alphabet.length]!;
    return next;
  }).join("");
  return [
    { label: "forged signature", token: `${parts[0]}.${parts[1]}.${forged}` },
    { label: "alg none", token: `${encode({ ...header, alg: "none" })}.${parts[1]}.` },
  ];
}
