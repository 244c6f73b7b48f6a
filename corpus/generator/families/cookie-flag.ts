import type { Row } from "../../model/row.ts";
import { type Answer, brief, verdict } from "../../oracles/oracle.ts";
import { nodeRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, json, obj } from "../schemas.ts";

// Access decided by a flag the client keeps (CWE-565, CWE-602): the operation sets a plain cookie on the
// caller — `…_admin=false`, `…_role=guest`, `…_features=export:disabled`, `is_…_staff=0` — and serves its
// summary to whoever sends the other value. It refuses with a 403, or with a 200 whose body says access is
// denied. Safe twins: the same cookie signed with the server's key (a flipped value fails the signature),
// set but ignored (the summary needs an administrator's session), or a cookie that only changes the layout.

export interface CookieFlagKnobs {
  flag: "boolean" | "role" | "toggle" | "digit";
  refusal: "status" | "message";
  /** Safe rows: what keeps the flag from deciding. */
  guard?: "signed" | "ignored" | "cosmetic";
}

/** The cookie as the operation sets it, and the value a visitor would flip it to. */
function cookieOf(
  slug: string,
  flag: CookieFlagKnobs["flag"],
): { name: string; value: string; granted: string } {
  switch (flag) {
    case "boolean":
      return { name: `${slug}_admin`, value: "false", granted: "true" };
    case "role":
      return { name: `${slug}_role`, value: "guest", granted: "admin" };
    case "toggle":
      return { name: `${slug}_features`, value: "export:disabled", granted: "export:enabled" };
    case "digit":
      return { name: `is_${slug}_staff`, value: "0", granted: "1" };
  }
}

const DENIED = "access denied";

export function buildCookieFlag(row: Row<CookieFlagKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { flag, refusal, guard } = row.knobs;
  if (vulnerable === (guard !== undefined))
    throw new Error(`${row.id}: a ${row.label} row ${vulnerable ? "takes no" : "needs a"} guard`);
  const { ph, place } = ctx;
  const path = `${place.base}/summary`;
  const cookie = cookieOf(place.slug, guard === "cosmetic" ? "boolean" : flag);
  const name = guard === "cosmetic" ? `${place.slug}_compact` : cookie.name;
  const sql = `SELECT status, COUNT(*) AS n FROM records WHERE kind = ${ph(1)} GROUP BY status ORDER BY status`;
  const kind = JSON.stringify(place.kind);
  const key = `${place.slug.toUpperCase()}_FLAG_KEY`;
  // The value set on the caller: signed rows append an HMAC of it under a key only the server holds.
  const setValue = {
    node:
      guard === "signed"
        ? `${JSON.stringify(`${cookie.value}.`)} + signFlag(${JSON.stringify(cookie.value)})`
        : JSON.stringify(cookie.value),
    python:
      guard === "signed"
        ? `${JSON.stringify(`${cookie.value}.`)} + sign_flag(${JSON.stringify(cookie.value)})`
        : JSON.stringify(cookie.value),
  };
  const granted = {
    node:
      guard === "signed"
        ? `sent === ${JSON.stringify(`${cookie.granted}.`)} + signFlag(${JSON.stringify(cookie.granted)})`
        : `sent === ${JSON.stringify(cookie.granted)}`,
    python:
      guard === "signed"
        ? `sent == ${JSON.stringify(`${cookie.granted}.`)} + sign_flag(${JSON.stringify(cookie.granted)})`
        : `sent == ${JSON.stringify(cookie.granted)}`,
  };
  const refuse =
    refusal === "status"
      ? { node: `reply.code(403).send({ error: "${DENIED}" })`, python: `jsonify(error="${DENIED}"), 403` }
      : { node: `reply.send({ error: "${DENIED}" })`, python: `jsonify(error="${DENIED}"), 200` };
  const setCookie = {
    node: `if (!(${JSON.stringify(name)} in cookies(request))) reply.header("set-cookie", \`${name}=\${${setValue.node}}; Path=/\`);`,
    python: `headers = {} if ${JSON.stringify(name)} in request.cookies else {"Set-Cookie": "${name}=" + ${setValue.python} + "; Path=/"}`,
  };
  let node: string;
  let python: string;
  if (guard === "cosmetic") {
    node = `${setCookie.node}
const compact = cookies(request)[${JSON.stringify(name)}] === "true";
return { layout: compact ? "compact" : "full", by_status: await db.all("${sql}", [${kind}]) };`;
    python = `${setCookie.python}
compact = request.cookies.get(${JSON.stringify(name)}, "") == "true"
return jsonify(layout="compact" if compact else "full", by_status=db.all("${sql}", (${kind},))), 200, headers`;
  } else if (guard === "ignored") {
    node = `${setCookie.node}
const user = await requireAdmin(request, reply);
if (!user) return reply;
return { by_status: await db.all("${sql}", [${kind}]) };`;
    python = `${setCookie.python}
require_admin()
return jsonify(by_status=db.all("${sql}", (${kind},))), 200, headers`;
  } else {
    node = `${setCookie.node}
const sent = String(cookies(request)[${JSON.stringify(name)}] ?? "");
if (!(${granted.node})) return ${refuse.node};
return { by_status: await db.all("${sql}", [${kind}]) };`;
    python = `${setCookie.python}
sent = request.cookies.get(${JSON.stringify(name)}, "")
if not (${granted.python}):
    body, status = ${refuse.python}
    return body, status, headers
return jsonify(by_status=db.all("${sql}", (${kind},))), 200, headers`;
  }
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `Totals of ${place.plural} by status`,
    access: guard === "cosmetic" ? "public" : "admin",
    responses: {
      "200": json("the totals", obj({ by_status: { type: "array" } }, [])),
      ...(guard === "cosmetic" ? {} : { "403": err("not allowed"), "401": err("no credentials") }),
    },
    node: nodeRoute("GET", path, node),
    python: pyRoute("GET", path, python),
  };
  const sentAsSet = guard === "signed" ? undefined : cookie.value;
  return {
    endpoint,
    ...(guard === "signed" && {
      top: {
        node: `const ${key} = crypto.randomBytes(16).toString("hex");
const signFlag = (value) => crypto.createHmac("sha256", ${key}).update(value).digest("hex").slice(0, 16);`,
        python: `import hashlib
import hmac as hmac_module
${key} = os.urandom(16).hex()


def sign_flag(value):
    return hmac_module.new(${key}.encode(), value.encode(), hashlib.sha256).hexdigest()[:16]`,
      },
    }),
    title: vulnerable
      ? `${path} serves its totals to whoever sets the cookie ${name} to ${cookie.granted} (it sets ${cookie.value})`
      : `${path} sets the cookie ${name}`,
    ...(vulnerable
      ? {}
      : {
          why:
            guard === "signed"
              ? "the flag carries the server's signature: a changed value is refused"
              : guard === "ignored"
                ? "the totals need an administrator's session; the cookie decides nothing"
                : "the cookie only changes the layout; nothing is refused",
        }),
    oracle: async (client) => {
      // What the operation itself set, then the same cookie with the flag's word flipped.
      const first = await client.ask({ path });
      const set = /^([^=]+)=([^;]*)/.exec(first.headers.get("set-cookie") ?? "");
      const value = set?.[2] ?? sentAsSet ?? "";
      const flipped = value.replace(cookie.value, cookie.granted);
      const asSet = await client.ask({ path, cookies: { [name]: value } });
      const turned = await client.ask({ path, cookies: { [name]: flipped } });
      return verdict(
        deniesAccess(asSet) && turned.status === 200 && turned.text.includes('"by_status"'),
        `${name}=${value} → ${brief(asSet)}; ${name}=${flipped} → ${brief(turned)}`,
      );
    },
  };
}

function deniesAccess(answer: Answer): boolean {
  return answer.status === 401 || answer.status === 403 || answer.text.includes(DENIED);
}
