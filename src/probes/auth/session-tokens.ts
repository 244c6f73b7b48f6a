import type { HttpRequestSpec } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Jwt } from "./jwt.ts";
import { parseJwt } from "./jwt.ts";

// The JWTs the run's own sign-ins obtained, and where each travels: the place the sign-in recipe puts the
// session token (a header, a cookie or a query parameter), or a cookie of the session that happens to hold
// a JWT. A forged token is sent in that same place and nowhere else, with no other part of any session.

export type TokenCarrier = { kind: "recipe" } | { kind: "cookie"; name: string };

export interface SessionJwt {
  user: ProfileUser;
  token: string;
  jwt: Jwt;
  carrier: TokenCarrier;
}

/** Each user's session JWT (users whose session holds none, or who cannot sign in, are left out). */
export async function sessionJwts(run: ProbeRun, users: readonly ProfileUser[]): Promise<SessionJwt[]> {
  const found: SessionJwt[] = [];
  for (const user of users) {
    const credential = await run.sessions.signIn(user.name, run.client).catch(() => undefined);
    if (!credential) continue;
    const direct = parseJwt(credential.token);
    if (direct && credential.token) {
      found.push({ user, token: credential.token, jwt: direct, carrier: { kind: "recipe" } });
      continue;
    }
    for (const [name, value] of Object.entries(credential.cookies)) {
      const jwt = parseJwt(value);
      if (!jwt) continue;
      found.push({ user, token: value, jwt, carrier: { kind: "cookie", name } });
      break;
    }
  }
  return found;
}

/** The request carrying `token` where `carrier` says, and no other credential. */
export function withForgedToken(
  run: ProbeRun,
  carrier: TokenCarrier,
  token: string,
  spec: HttpRequestSpec,
): HttpRequestSpec {
  if (carrier.kind === "recipe") return run.sessions.withToken(token, spec);
  return withCookies(spec, { [carrier.name]: token });
}

/** The request with exactly these cookies, whatever cookies it carried before. */
export function withCookies(spec: HttpRequestSpec, cookies: Record<string, string>): HttpRequestSpec {
  const headers = Object.fromEntries(
    Object.entries(spec.headers ?? {}).filter(([name]) => name.toLowerCase() !== "cookie"),
  );
  const cookie = Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join("; ");
  return { ...spec, headers: { ...headers, cookie } };
}

/** `spec` with the cookie `name` set to `value`, its other cookies (the session) kept. */
export function withCookie(spec: HttpRequestSpec, name: string, value: string): HttpRequestSpec {
  const headers = spec.headers ?? {};
  const key = Object.keys(headers).find((header) => header.toLowerCase() === "cookie");
  const others = (key ? headers[key]! : "")
    .split(";")
    .map((pair) => pair.trim())
    .filter((pair) => pair !== "" && pair.split("=", 1)[0] !== name);
  const kept = Object.fromEntries(Object.entries(headers).filter(([header]) => header !== key));
  return { ...spec, headers: { ...kept, cookie: [...others, `${name}=${value}`].join("; ") } };
}
