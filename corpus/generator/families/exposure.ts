import crypto from "node:crypto";
import type { Row } from "../../model/row.ts";
import { brief, itemsOf, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, STR } from "../schemas.ts";

// Sensitive data in answers: password hashes of every common format (CWE-916), live secrets (CWE-522),
// private fields the document does not declare (OWASP API3), and error answers that carry a stack trace,
// a traceback or a connection string (CWE-209). The profiles live in a JSON column; a vulnerable handler
// spreads it into the answer. Safe twins spread only harmless look-alikes or pick declared fields.

export interface PasswordHashKnobs {
  /** Vulnerable rows: the hash format and the key it travels under. */
  format?: "bcrypt" | "scrypt" | "argon2" | "pbkdf2" | "md5" | "sha1" | "sha256";
  key?: string;
  /** Safe rows: digests that are not passwords', or the hash kept back by picking fields. */
  lookalike?: "etag" | "checksum" | "avatar-hash" | "password-meta" | "picked";
}

export interface SecretKnobs {
  secret?: "api-key" | "session-token" | "aws-key" | "private-key" | "github-token";
  lookalike?: "masked-key" | "public-key" | "publishable-key";
}

export interface ExcessiveDataKnobs {
  fields: string[];
}

export interface ErrorDisclosureKnobs {
  leak: "traceback" | "stack" | "connection-string";
}

/** Deterministic filler: `length` characters of `alphabet` derived from `seed`. */
function filler(seed: string, length: number, alphabet: string): string {
  let out = "";
  for (let round = 0; out.length < length; round += 1) {
    for (const byte of crypto.createHash("sha256").update(`${seed}/${round}`).digest()) {
      out += alphabet[byte % alphabet.length];
    }
  }
  return out.slice(0, length);
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BCRYPT = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";

export function passwordHash(format: NonNullable<PasswordHashKnobs["format"]>, seed: string): string {
  switch (format) {
    case "bcrypt":
      return `$2b$12$${filler(seed, 53, BCRYPT)}`;
    case "scrypt":
      return `scrypt:32768:8:1$${filler(seed, 16, B64.slice(0, 62))}$${filler(`${seed}k`, 128, HEX)}`;
    case "argon2":
      return `$argon2id$v=19$m=65536,t=3,p=4$${filler(seed, 22, B64)}$${filler(`${seed}k`, 43, B64)}`;
    case "pbkdf2":
      return `pbkdf2_sha256$600000$${filler(seed, 22, B64.slice(0, 62))}$${filler(`${seed}k`, 43, B64)}=`;
    case "md5":
      return filler(seed, 32, HEX);
    case "sha1":
      return filler(seed, 40, HEX);
    case "sha256":
      return filler(seed, 64, HEX);
  }
}

/** A members list whose profile blob is spread (or picked) into each item. */
function profileList(
  ctx: BuildContext,
  path: string,
  summary: string,
  spread: boolean,
  itemSchema: Record<string, unknown>,
): Endpoint {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const select = `SELECT id, title, attrs FROM records WHERE kind = ${ph(1)} ORDER BY id`;
  return {
    method: "GET",
    path,
    summary,
    access: "user",
    responses: { "200": json("the list", listOf(itemSchema)), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      path,
      `const rows = await db.all("${select}", [${kind}]);
return { items: rows.map((row) => ${spread ? "({ id: row.id, name: row.title, ...JSON.parse(row.attrs) })" : "({ id: row.id, name: row.title })"}) };`,
    ),
    python: pyRoute(
      "GET",
      path,
      `require_user()
rows = db.all("${select}", (${kind},))
return jsonify(items=[${spread ? '{"id": row["id"], "name": row["title"], **json.loads(row["attrs"])}' : '{"id": row["id"], "name": row["title"]}'} for row in rows])`,
    ),
  };
}

const HASH_PATTERNS = [
  /\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}/,
  /\$argon2(id|i|d)\$/,
  /scrypt:\d+:\d+:\d+\$/,
  /pbkdf2_sha(1|256|512)\$\d+\$/,
  /pbkdf2:sha\d+:\d+\$/,
];

export function buildPasswordHashExposure(row: Row<PasswordHashKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { format = "bcrypt", key = "password_hash", lookalike = "etag" } = row.knobs;
  const seed = row.id;
  let attrs: Record<string, unknown>;
  if (vulnerable) attrs = { team: "ops", [key]: passwordHash(format, seed) };
  else if (lookalike === "etag") attrs = { team: "ops", etag: filler(seed, 40, HEX) };
  else if (lookalike === "checksum") attrs = { team: "ops", avatar_checksum: filler(seed, 64, HEX) };
  else if (lookalike === "avatar-hash") attrs = { team: "ops", gravatar_hash: filler(seed, 32, HEX) };
  else if (lookalike === "password-meta")
    attrs = { team: "ops", password_changed_at: "2026-01-05T09:00:00Z", password_min_length: 12 };
  else attrs = { team: "ops", password_hash: passwordHash("bcrypt", seed) };
  const spread = vulnerable || lookalike !== "picked";
  const path = `${ctx.place.base}/members`;
  const item = spread
    ? obj(
        Object.fromEntries([
          ["id", INT],
          ["name", STR],
          ...Object.entries(attrs).map(([name, value]) => [name, typeof value === "number" ? INT : STR]),
        ]),
      )
    : obj({ id: INT, name: STR });
  const endpoint = profileList(ctx, path, `Members of the ${ctx.place.group} team`, spread, item);
  return {
    endpoint,
    records: [{ kind: ctx.place.kind, title: "Member", owners: ["alice", "dana"], count: 1, attrs }],
    title: vulnerable
      ? `The ${ctx.place.group} member list carries ${format} password hashes (${key})`
      : `The ${ctx.place.group} member list carries ${lookalike === "picked" ? "profiles that hold password hashes" : "hex digests"}`,
    ...(vulnerable
      ? {}
      : {
          why:
            lookalike === "picked"
              ? "the handler picks id and name; the stored hash never leaves"
              : `the digest is ${lookalike === "password-meta" ? "password metadata, not a hash" : "of public content, not of a password"}`,
        }),
    oracle: async (client) => {
      const answer = await client.ask({ as: "alice", path });
      const leaked = itemsOf(answer).some((entry) =>
        Object.entries(entry).some(
          ([name, value]) =>
            typeof value === "string" &&
            (HASH_PATTERNS.some((pattern) => pattern.test(value)) ||
              (/pass|pwd/i.test(name) && /^[0-9a-f]{32,128}$/.test(value))),
        ),
      );
      return verdict(leaked, brief(answer));
    },
  };
}

export function buildSecretInResponse(row: Row<SecretKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { secret = "api-key", lookalike = "masked-key" } = row.knobs;
  const seed = row.id;
  const values: Record<string, Record<string, string>> = {
    "api-key": { api_key: `sk_live_${filler(seed, 32, B64.slice(0, 62))}` },
    "session-token": { session_token: filler(seed, 64, HEX) },
    "aws-key": {
      aws_access_key_id: `AKIA${filler(seed, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
      aws_secret_access_key: filler(`${seed}s`, 40, B64),
    },
    "private-key": {
      signing_key: `-----BEGIN PRIVATE KEY-----\nMIIEv${filler(seed, 60, B64)}\n-----END PRIVATE KEY-----`,
    },
    "github-token": { deploy_token: `ghp_${filler(seed, 36, B64.slice(0, 62))}` },
    "masked-key": { api_key_hint: `sk_live_****${filler(seed, 4, HEX)}` },
    "public-key": {
      verification_key: `-----BEGIN PUBLIC KEY-----\nMFkw${filler(seed, 60, B64)}\n-----END PUBLIC KEY-----`,
    },
    "publishable-key": { publishable_key: `pk_live_${filler(seed, 32, B64.slice(0, 62))}` },
  };
  const attrs = { provider: "payments", ...values[vulnerable ? secret : lookalike] };
  const path = `${ctx.place.base}/integrations`;
  const item = obj(
    Object.fromEntries([["id", INT], ["name", STR], ...Object.keys(attrs).map((name) => [name, STR])]),
  );
  const endpoint = profileList(ctx, path, `Integrations of the ${ctx.place.group} workspace`, true, item);
  return {
    endpoint,
    records: [{ kind: ctx.place.kind, title: "Integration", owners: ["alice"], count: 1, attrs }],
    title: vulnerable
      ? `The ${ctx.place.group} integrations list carries a live ${secret.replace("-", " ")}`
      : `The ${ctx.place.group} integrations list carries key material`,
    ...(vulnerable
      ? {}
      : { why: `${lookalike.replace("-", " ")}: meant to be seen, useless to an attacker` }),
    oracle: async (client) => {
      const answer = await client.ask({ as: "alice", path });
      const leaked =
        /sk_live_[A-Za-z0-9]{24,}|ghp_[A-Za-z0-9]{30,}|AKIA[A-Z2-7]{16}|PRIVATE KEY-----|"session_token"\s*:\s*"[0-9a-f]{32,}"/.test(
          answer.text,
        );
      return verdict(leaked, brief(answer));
    },
  };
}

export function buildExcessiveDataExposure(row: Row<ExcessiveDataKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const samples: Record<string, string> = {
    date_of_birth: "1990-04-12",
    home_address: "12 Orchard Lane, Springfield",
    salary: "64000",
    national_id: "AB123456C",
    internal_notes: "on a performance plan",
    phone: "+44 20 7946 0000",
  };
  const attrs = Object.fromEntries(
    row.knobs.fields.map((field) => [field, samples[field] ?? "confidential"]),
  );
  const path = `${ctx.place.base}/staff`;
  const documented = obj({ id: INT, name: STR });
  const endpoint = {
    ...profileList(ctx, path, `Staff of the ${ctx.place.group} team`, vulnerable, documented),
    alwaysDocumented: true,
  };
  return {
    endpoint,
    ...(vulnerable
      ? {
          collateral: {
            class: "contract-drift" as const,
            title: `The ${ctx.place.group} staff list answers fields its document does not declare`,
          },
        }
      : {}),
    records: [{ kind: ctx.place.kind, title: "Staff", owners: ["alice", "dana"], count: 1, attrs }],
    title: vulnerable
      ? `The ${ctx.place.group} staff list returns undeclared private fields (${row.knobs.fields.join(", ")})`
      : `The ${ctx.place.group} staff list reads private profiles`,
    ...(vulnerable ? {} : { why: "the handler returns exactly the documented id and name" }),
    oracle: async (client) => {
      const answer = await client.ask({ as: "alice", path });
      const declared = new Set(Object.keys(documented.properties as object));
      const extra = itemsOf(answer).flatMap((entry) =>
        Object.keys(entry).filter((name) => !declared.has(name)),
      );
      return verdict(
        extra.length > 0,
        `undeclared: ${[...new Set(extra)].join(", ") || "none"}; ${brief(answer)}`,
      );
    },
  };
}

export function buildErrorDisclosure(row: Row<ErrorDisclosureKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { leak } = row.knobs;
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/report`;
  const dsn = `postgresql://reporter:${filler(row.id, 12, B64.slice(0, 62))}@reports.internal:5432/analytics`;
  const dsnName = `REPORT_DSN_${place.slug.toUpperCase()}`;
  const catchNode = !vulnerable
    ? 'return reply.code(400).send({ error: "from must be a date (YYYY-MM-DD)" });'
    : leak === "connection-string"
      ? `return reply.code(500).send({ error: "report store " + ${dsnName} + " refused the query: " + error.message });`
      : "return reply.code(500).send({ error: error.message, stack: error.stack });";
  const catchPy = !vulnerable
    ? 'return jsonify(error="from must be a date (YYYY-MM-DD)"), 400'
    : leak === "connection-string"
      ? `return jsonify(error="report store " + ${dsnName} + " refused the query: " + str(error)), 500`
      : "return jsonify(error=str(error), trace=traceback.format_exc()), 500";
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `${place.plural} filed since a date`,
    access: "user",
    parameters: [{ name: "from", in: "query", required: true, schema: { type: "string", format: "date" } }],
    responses: {
      "200": json("the count", obj({ from: STR, entries: INT })),
      ...(vulnerable ? {} : { "400": err("from is not a date") }),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `const from = String(request.query["from"] ?? "");
try {
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(from) || Number.isNaN(Date.parse(from))) throw new RangeError("invalid date: " + from);
  const count = await db.get("SELECT COUNT(*) AS n FROM records WHERE kind = ${ph(1)} AND created_at >= ${ph(2)}", [${kind}, from]);
  return { from, entries: Number(count.n) };
} catch (error) {
  ${catchNode}
}`,
    ),
    python: pyRoute(
      "GET",
      path,
      `require_user()
start = request.args.get("from", "")
try:
    datetime.strptime(start, "%Y-%m-%d")
    count = db.get("SELECT COUNT(*) AS n FROM records WHERE kind = ${ph(1)} AND created_at >= ${ph(2)}", (${kind}, start))
    return jsonify(**{"from": start, "entries": int(count["n"])})
except Exception as error:
    ${catchPy}`,
    ),
  };
  const words = {
    traceback: "a Python traceback",
    stack: "a Node stack trace",
    "connection-string": "a database connection string with its password",
  }[leak];
  return {
    endpoint,
    ...(vulnerable && leak === "connection-string"
      ? {
          top: {
            node: `const ${dsnName} = ${JSON.stringify(dsn)};`,
            python: `${dsnName} = ${JSON.stringify(dsn)}`,
          },
        }
      : {}),
    ...(vulnerable && leak === "connection-string" ? { ledgerClass: "secret-exposure" } : {}),
    records: [{ kind: place.kind, title: "Report" }],
    title: vulnerable
      ? `A malformed date makes the ${place.plural} report answer ${words}`
      : `The ${place.plural} report parses a date from the query`,
    ...(vulnerable
      ? {
          collateral: {
            class: "unhandled-error",
            title: `A malformed date makes the ${place.plural} report answer 500`,
          },
        }
      : { why: "a malformed date answers 400 with a plain message" }),
    oracle: async (client) => {
      const answer = await client.ask({ as: "alice", path, query: { from: "31/02/2026" } });
      const leaked =
        /Traceback \(most recent call last\)|(\n|\\n)\s+at .+:\d+:\d+|:\/\/[^:\s/]+:[^@\s/]+@/.test(
          answer.text,
        );
      return verdict(leaked, brief(answer));
    },
  };
}
