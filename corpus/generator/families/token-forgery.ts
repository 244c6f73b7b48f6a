import type { Row } from "../../model/row.ts";
import { COMMON_SECRETS, claimsOf, signHs256, tampered, unsigned } from "../../oracles/jwt.ts";
import { brief, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { guarded, INT, json, obj, STR } from "../schemas.ts";
import { signInEndpoint } from "../server-base.ts";

// Forgeable bearer tokens (CWE-347, CWE-613): an operation verifies the caller's JWT in its own way and
// gets one part wrong: it honours `alg: none`, also accepts a guessable legacy HMAC key, never looks at
// `exp`, or never checks the signature at all. Safe twins use the strict check (HS256 with the server's
// key, expiry enforced). Bearer servers only.

export interface TokenForgeryKnobs {
  mode: "alg-none" | "weak-secret" | "expired" | "unsigned-payload" | "strict";
  /** weak-secret: the legacy key, from the common-secrets list. */
  secret?: string;
}

export function buildTokenForgery(row: Row<TokenForgeryKnobs>, ctx: BuildContext): Built {
  const { mode, secret = "secret" } = row.knobs;
  if (ctx.server.auth !== "bearer") throw new Error(`${row.id}: token forgery needs a bearer server`);
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/summary`;
  const unauthorised = {
    node: 'return reply.code(401).send({ error: "invalid token" });',
    python: 'return jsonify(error="invalid token"), 401',
  };
  const check = {
    "alg-none": {
      node: `const decoded = decodeJwt(bearerToken(request));
const signedOk = decoded && (decoded.header.alg === "none" || hmacMatches(decoded, JWT_SECRET));
if (!signedOk || !(decoded.claims.exp * 1000 > Date.now())) ${unauthorised.node}
const claims = decoded.claims;`,
      python: `decoded = decode_jwt(bearer_token())
signed_ok = decoded is not None and (decoded["header"].get("alg") == "none" or hmac_matches(decoded, JWT_SECRET))
if not signed_ok or not isinstance(decoded["claims"].get("exp"), (int, float)) or decoded["claims"]["exp"] < time.time():
    ${unauthorised.python}
claims = decoded["claims"]`,
    },
    "weak-secret": {
      node: `const decoded = decodeJwt(bearerToken(request));
const keys = [JWT_SECRET, ${JSON.stringify(secret)}];
if (!decoded || decoded.header.alg !== "HS256" || !keys.some((key) => hmacMatches(decoded, key))) ${unauthorised.node}
if (!(decoded.claims.exp * 1000 > Date.now())) ${unauthorised.node}
const claims = decoded.claims;`,
      python: `decoded = decode_jwt(bearer_token())
keys = [JWT_SECRET, ${JSON.stringify(secret)}]
if decoded is None or decoded["header"].get("alg") != "HS256" or not any(hmac_matches(decoded, key) for key in keys):
    ${unauthorised.python}
if not isinstance(decoded["claims"].get("exp"), (int, float)) or decoded["claims"]["exp"] < time.time():
    ${unauthorised.python}
claims = decoded["claims"]`,
    },
    expired: {
      node: `const decoded = decodeJwt(bearerToken(request));
if (!decoded || decoded.header.alg !== "HS256" || !hmacMatches(decoded, JWT_SECRET)) ${unauthorised.node}
const claims = decoded.claims;`,
      python: `decoded = decode_jwt(bearer_token())
if decoded is None or decoded["header"].get("alg") != "HS256" or not hmac_matches(decoded, JWT_SECRET):
    ${unauthorised.python}
claims = decoded["claims"]`,
    },
    "unsigned-payload": {
      node: `const decoded = decodeJwt(bearerToken(request));
if (!decoded || decoded.header.alg !== "HS256" || !(decoded.claims.exp * 1000 > Date.now())) ${unauthorised.node}
const claims = decoded.claims;`,
      python: `decoded = decode_jwt(bearer_token())
if decoded is None or decoded["header"].get("alg") != "HS256":
    ${unauthorised.python}
if not isinstance(decoded["claims"].get("exp"), (int, float)) or decoded["claims"]["exp"] < time.time():
    ${unauthorised.python}
claims = decoded["claims"]`,
    },
    strict: {
      node: `const claims = verifyJwt(bearerToken(request));
if (!claims) ${unauthorised.node}`,
      python: `claims = verify_jwt(bearer_token())
if claims is None:
    ${unauthorised.python}`,
    },
  }[mode];

  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `My ${place.plural} at a glance`,
    access: "user",
    responses: {
      "200": json("the caller's summary", obj({ account: STR, entries: INT })),
      ...guarded("user"),
    },
    node: nodeRoute(
      "GET",
      path,
      `${check.node}
const user = await db.get("SELECT id, email FROM users WHERE id = ${ph(1)}", [Number(claims.sub) || 0]);
if (!user) ${unauthorised.node}
const count = await db.get("SELECT COUNT(*) AS n FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)}", [${kind}, user.id]);
return { account: user.email, entries: Number(count.n) };`,
    ),
    python: pyRoute(
      "GET",
      path,
      `${check.python}
sub = claims.get("sub")
user = db.get("SELECT id, email FROM users WHERE id = ${ph(1)}", (sub if isinstance(sub, int) and not isinstance(sub, bool) else 0,))
if user is None:
    ${unauthorised.python}
count = db.get("SELECT COUNT(*) AS n FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)}", (${kind}, user["id"]))
return jsonify(account=user["email"], entries=int(count["n"]))`,
    ),
  };
  const words = {
    "alg-none": "an unsigned token (alg: none)",
    "weak-secret": `a token signed with the guessable key "${secret}"`,
    expired: "an expired token",
    "unsigned-payload": "a token whose claims were changed after signing",
    strict: "",
  }[mode];
  return {
    endpoint,
    records: [{ kind: place.kind, title: "Tracked" }],
    title:
      mode === "strict"
        ? `${capitalise(place.plural)} summary reads the caller from a bearer token`
        : `${capitalise(place.plural)} summary accepts ${words}`,
    ...(mode === "strict" ? { why: "HS256 only, the server's own key, expiry enforced" } : {}),
    oracle: (client) => oracle(client, path),
  };
}

/** Every forgery a client can make without the key; any accepted one is the flaw. */
async function oracle(client: OracleClient, path: string) {
  const real = await client.token("alice");
  const bruno = (await client.ask({ as: "bruno", path: "/api/me" })).json as { id: number; email: string };
  const claims = { ...claimsOf(real), sub: bruno.id };
  const forgeries: Array<[string, string]> = [
    ["alg none", unsigned(claims)],
    ...COMMON_SECRETS.map((key): [string, string] => [`key "${key}"`, signHs256(claims, key)]),
    ["changed claims", tampered(real, claims)],
  ];
  for (const [name, token] of forgeries) {
    const answer = await client.ask({ path, bearer: token });
    if (answer.status === 200 && answer.text.includes(bruno.email))
      return verdict(true, `${name} accepted: ${brief(answer)}`);
  }
  const sign = await client.ask({
    method: "POST",
    path: signInEndpoint(client.server)!,
    json: { ...credentials(client), ttl: 1 },
  });
  const shortLived = (sign.json as { token?: string } | null)?.token;
  if (shortLived) {
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const answer = await client.ask({ path, bearer: shortLived });
    if (answer.status === 200) return verdict(true, `expired token accepted: ${brief(answer)}`);
  }
  const genuine = await client.ask({ as: "alice", path });
  return verdict(false, `every forgery refused; alice's own token → ${brief(genuine)}`);
}

function credentials(client: OracleClient): { email: string; password: string } {
  return { email: "alice@corpus.test", password: client.secrets.CORPUS_ALICE_PASSWORD ?? "" };
}

function capitalise(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}
