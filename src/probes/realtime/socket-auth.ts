import type { TargetProfile } from "../../targets/profile-schema.ts";

// How a socket carries its credential (profile `websocket.auth`): `query:<name>` in the URL, `header:<Name>`
// on the upgrade request, or `message:<field>` in the first frame after the connection opens. Also the
// credentials that must NOT work: a random string and a well-formed token that expired long ago.

export type Placement =
  | { kind: "query"; name: string }
  | { kind: "header"; name: string }
  | { kind: "message"; field: string };

export interface SocketCredential {
  token: string;
  cookies?: Record<string, string>;
}

export interface ConnectionRequest {
  url: string;
  headers: Record<string, string>;
  /** Sent right after the socket opens (message placement). */
  firstMessage?: Record<string, unknown>;
}

export function parsePlacement(auth: string | undefined): Placement {
  const match = /^(query|header|message):(.+)$/.exec((auth ?? "query:token").trim());
  if (!match) return { kind: "query", name: "token" };
  const [, kind, name] = match as unknown as [string, Placement["kind"], string];
  return kind === "message" ? { kind, field: name.trim() } : { kind, name: name.trim() };
}

export function describePlacement(placement: Placement): string {
  return placement.kind === "message"
    ? `message field ${placement.field}`
    : `${placement.kind} ${placement.name}`;
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

/**
 * The upgrade request for one observer. `credential` undefined connects with nothing at all. A header named
 * Authorization gets the login recipe's scheme; a Cookie header gets the recipe's cookie name.
 */
export function connectionRequest(
  url: string,
  placement: Placement,
  credential: SocketCredential | undefined,
  profile: TargetProfile | undefined,
): ConnectionRequest {
  const request: ConnectionRequest = { url, headers: {} };
  if (!credential) return request;
  const login = profile?.auth?.login;
  if (placement.kind === "query") {
    const separator = url.includes("?") ? "&" : "?";
    request.url = `${url}${separator}${encodeURIComponent(placement.name)}=${encodeURIComponent(credential.token)}`;
  } else if (placement.kind === "header") {
    const name = placement.name.toLowerCase();
    if (name === "authorization")
      request.headers.authorization = `${login?.scheme ?? "Bearer"} ${credential.token}`;
    else if (name === "cookie") {
      const cookieName = /^cookie:(.+)$/.exec(login?.apply_as ?? "")?.[1] ?? "token";
      const jar = { ...(credential.cookies ?? {}), [cookieName]: credential.token };
      request.headers.cookie = Object.entries(jar)
        .map(([key, value]) => `${key}=${value}`)
        .join("; ");
    } else request.headers[name] = credential.token;
  } else {
    request.firstMessage = nested(placement.field, credential.token);
  }
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
