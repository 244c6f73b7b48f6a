import { createHash } from "node:crypto";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../envelope/envelope-draft.ts";
import type { Table } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { hashFormatOf, isPasswordKey } from "../auditor/exposure-hashes.ts";
import { secretVariableName } from "../session/secret-reference.ts";
import { databaseOf, loadTables, quoteName, readOnly } from "./target-database.ts";

// check_credential_storage: how the application stores the passwords of the profile's users, read from
// the live database (read-only). The proof needs no guess about formats: the profile knows each user's
// password, so a stored value that IS that password (or its base64, or its unsalted MD5/SHA digest) shows
// the storage, and the value must also not be a salted hash in a known format. The password itself never
// leaves the probe: evidence names the user, the column and what the value was found to be.

const IDENTITY_COLUMN = /^(?:.*_)?(?:username|user_name|login|email|e_mail|mail|handle|user|account|name)$/i;
const MAX_TABLES = 8;

export type StoredAs = "plaintext" | "base64" | "md5" | "sha1" | "sha256" | "sha512";

interface KnownUser {
  name: string;
  username: string;
  password: string;
}

export interface StorageMatch {
  user: string;
  identifiedBy: string;
  storedAs: StoredAs;
}

/** What a stored value is, given the password it was made from; undefined for anything else (a salted hash). */
export function storedAs(value: unknown, password: string): StoredAs | undefined {
  if (typeof value !== "string" && !Buffer.isBuffer(value)) return undefined;
  const text = Buffer.isBuffer(value) ? value.toString("utf8") : value;
  if (password.length === 0 || text.length === 0) return undefined;
  if (text === password) return "plaintext";
  if (text === Buffer.from(password).toString("base64")) return "base64";
  for (const algorithm of ["md5", "sha1", "sha256", "sha512"] as const) {
    if (text.toLowerCase() === createHash(algorithm).update(password).digest("hex")) return algorithm;
  }
  return undefined;
}

function knownUsers(context: ToolContext): KnownUser[] {
  const users: KnownUser[] = [];
  for (const user of context.target?.profile.users ?? []) {
    const variable = user.password ? secretVariableName(user.password) : undefined;
    const password = variable ? process.env[variable] : undefined;
    if (password) users.push({ name: user.name, username: user.username ?? user.name, password });
  }
  return users;
}

export async function checkCredentialStorage(
  context: ToolContext,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const users = knownUsers(context);
  if (users.length === 0)
    return { candidates: [], stats: { skipped: "no profile user with a password to look for" } };
  const handle = databaseOf(context);
  if (typeof handle === "string") return { candidates: [], stats: { skipped: handle } };
  const { tables } = await loadTables(context, handle);
  const credentialTables = tables
    .map((table) => ({
      table,
      secrets: table.columns.filter((column) => isPasswordKey(column.name)).map((c) => c.name),
      identities: table.columns.filter((column) => IDENTITY_COLUMN.test(column.name)).map((c) => c.name),
    }))
    .filter((entry) => entry.secrets.length > 0 && entry.identities.length > 0)
    .slice(0, MAX_TABLES);
  const found = new Map<string, { table: Table; column: string; matches: StorageMatch[] }>();
  const read = await readOnly(handle, async (query) => {
    for (const { table, secrets, identities } of credentialTables) {
      for (const user of users) {
        for (const identity of identities) {
          const rows = await query(
            `SELECT ${secrets.map(quoteName).join(", ")} FROM ${quoteName(table.name)} WHERE ${quoteName(identity)} = ${handle.kind === "sqlite" ? "?" : "$1"} LIMIT 1`,
            [user.username],
          ).catch(() => []);
          const row = rows[0];
          if (!row) continue;
          for (const column of secrets) {
            const value = row[column];
            // A value in a salted format is a hash, whatever else it equals by chance.
            if (typeof value === "string" && hashFormatOf(value.trim())) continue;
            const kind = storedAs(value, user.password);
            if (!kind) continue;
            const key = `${table.name}.${column}`;
            const entry = found.get(key) ?? { table, column, matches: [] };
            entry.matches.push({ user: user.name, identifiedBy: identity, storedAs: kind });
            found.set(key, entry);
          }
          break;
        }
      }
    }
    return true;
  });
  if (read === undefined) return { candidates: [], stats: { skipped: "the database could not be read" } };
  const candidates = [...found.values()].map((entry) => credentialFinding(context, entry));
  return {
    candidates,
    stats: {
      tables_read: credentialTables.map((entry) => entry.table.name),
      users_looked_for: users.map((user) => user.name),
      findings: [...found.keys()],
    },
  };
}

function credentialFinding(
  context: ToolContext,
  entry: { table: Table; column: string; matches: StorageMatch[] },
): EnvelopeDraft {
  const place = `${entry.table.name}.${entry.column}`;
  const kinds = [...new Set(entry.matches.map((match) => match.storedAs))];
  const reversible = kinds.some((kind) => kind === "plaintext" || kind === "base64");
  const described = kinds
    .map((kind) =>
      kind === "plaintext"
        ? "in plain text"
        : kind === "base64"
          ? "base64-encoded"
          : `as unsalted ${kind.toUpperCase()}`,
    )
    .join(", ");
  const who = entry.matches.map((match) => `${match.user} (row found by ${match.identifiedBy})`);
  const uri = context.putArtifact(
    `check_credential_storage/${place.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.json`,
    `${JSON.stringify({ column: place, matches: entry.matches }, null, 2)}\n`,
  );
  return EnvelopeDraftSchema.parse({
    domain: "security",
    defect_class: "sensitive-data-exposure",
    title: `Passwords are stored ${described} in ${place}`,
    summary: `The row of ${who.join(", ")} in ${entry.table.name} holds the user's password ${described} in ${entry.column}: the value read from the database (read-only) equals the profile's password for that user${reversible ? "" : " after one unsalted digest"}, and is no salted hash format. Anyone who reads the table (a backup, an injection, a support tool) has every user's password${reversible ? "" : " after a lookup in a precomputed table"}. Fix: store a slow salted hash (bcrypt, scrypt or argon2) and compare with the library's verify function.`,
    location: { kind: "table", value: place },
    evidence: [
      {
        kind: "artifact",
        description: `${place} compared with the profile users' passwords (values not recorded)`,
        uri,
      },
      { kind: "note", description: `stored ${described}: ${who.join(", ")}` },
    ],
    reproduction: {
      steps: [
        `Read ${entry.column} of the row of ${entry.matches[0]?.user ?? "a profile user"} in ${entry.table.name} (read-only).`,
        `Compare it with that user's password from the profile's secrets: it is the password ${described}.`,
        "Expected: a salted slow hash (e.g. $2b$…, $argon2id$…) that does not reveal the password.",
      ],
    },
    impact:
      "A leak of the table reveals every user's password, and with it their accounts here and wherever they reuse it.",
    severity: reversible ? "high" : "medium",
    confidence: 0.95,
    suggested_fix_area: null,
    autonomy_eligible: false,
  });
}
