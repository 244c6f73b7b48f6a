import type { Operation } from "../../map/system-map.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { asSchema, chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import { isAdminLike, roleRank } from "../session/roles.ts";
import { responseSchemaFor } from "./probe-support.ts";

// Which fields a mass-assignment probe sends (OWASP API3, CWE-915): fields that decide privileges (a role,
// an admin flag), ownership (whose record it is) or a value only the server should compute (a price, a
// balance), that the operation's document does not let the client write, but that the object carries in
// its answers. A field a handler only reads in source (no document) is still tried: inferring a body from
// the handler finds the very field a vulnerable handler copies.

export type FieldKind = "role" | "flag" | "owner" | "amount";

export interface PrivilegedField {
  name: string;
  kind: FieldKind;
  /** The schema the answer or document gives the field, when one does. */
  schema?: JsonSchema;
  /** The document lets the client write it: only an administrator's rank sent on one's own account counts. */
  documented?: boolean;
}

const KINDS: ReadonlyArray<{ kind: FieldKind; name: RegExp }> = [
  { kind: "role", name: /^(roles?|user_?role|access_?level|account_?type)$/i },
  {
    kind: "flag",
    name: /^(is_?)?(admin|superuser|super_?user|staff|moderator|privileged|verified|approved|email_?verified)$/i,
  },
  {
    kind: "owner",
    name: /^(owner|owner_?id|ownerId|user_?id|userId|created_?by|createdBy|author_?id|authorId|account_?id|accountId)$/i,
  },
  {
    kind: "amount",
    name: /^(price|unit_?price|unitPrice|amount|total|cost|fee|discount|balance|credits?|credit_?limit|wallet)$/i,
  },
];

export function kindOf(name: string): FieldKind | undefined {
  return KINDS.find((entry) => entry.name.test(name))?.kind;
}

/**
 * Fields the document lets the client write; none when the body was only inferred from source. The map
 * merges a handler's fields into the documented schema as bare `{ type }` entries, so a privileged field
 * counts as documented only when its entry says more than its type (a document's constraints, a
 * description).
 */
function documentedWritable(operation: Operation): Set<string> {
  if (!operation.seen_in?.includes("openapi")) return new Set();
  const properties = propertiesOf(chooseBranch(asSchema(operation.request_body?.schema)));
  return new Set(
    Object.entries(properties)
      .filter(
        ([name, property]) =>
          property.readOnly !== true &&
          (kindOf(name) === undefined || Object.keys(property).some((key) => key !== "type")),
      )
      .map(([name]) => name),
  );
}

/**
 * Privileged fields to try on `operation`: named in its documented answer, in what the object looked like
 * when read (`observed`), read-only in its request schema, or inferred from the handler; `role` and
 * `is_admin` blind as a last resort. At most four.
 */
/**
 * Privileged fields to try on `operation`: named in its documented answer, in what the object looked like
 * when read (`observed`), read-only in its request schema, or inferred from the handler; `role` and
 * `is_admin` blind as a last resort. At most four. On an account's write of itself (`ownAccount`: sign-up,
 * "me"), a documented role or flag is tried too: frameworks document every field of the model a handler
 * takes (a FastAPI `UserUpdate` with `role`), and no document makes an account's own promotion to
 * administrator a feature — the caller sends only what `grantsAdmin` accepts for those.
 */
export function privilegedFields(
  operation: Operation,
  observed: unknown,
  options: { ownAccount?: boolean } = {},
): PrivilegedField[] {
  const writable = documentedWritable(operation);
  const seen = new Map<string, JsonSchema | undefined>();
  const response = responseSchemaFor(operation, 201) ?? responseSchemaFor(operation, 200);
  for (const [name, property] of Object.entries(response ? propertiesOf(chooseBranch(response)) : {}))
    seen.set(name, property);
  if (observed && typeof observed === "object" && !Array.isArray(observed))
    for (const name of Object.keys(observed)) if (!seen.has(name)) seen.set(name, undefined);
  for (const [name, property] of Object.entries(
    propertiesOf(chooseBranch(asSchema(operation.request_body?.schema))),
  )) {
    if (property.readOnly === true || !writable.has(name)) seen.set(name, seen.get(name) ?? property);
  }
  for (const name of ["role", "is_admin"]) if (!seen.has(name)) seen.set(name, undefined);
  const fields: PrivilegedField[] = [];
  for (const [name, schema] of seen) {
    const kind = kindOf(name);
    if (!kind) continue;
    if (!writable.has(name)) fields.push({ name, kind, schema });
    else if (options.ownAccount && (kind === "role" || kind === "flag"))
      fields.push({ name, kind, schema, documented: true });
  }
  // Fields the object really carries first: a blind guess is the last resort.
  const carried = (field: PrivilegedField) =>
    observed && typeof observed === "object" && field.name in (observed as object) ? 0 : 1;
  return fields.sort((a, b) => carried(a) - carried(b)).slice(0, 4);
}

const ADMIN_FLAG = /admin|superuser|super_?user|staff|moderator|privileged/i;

/** Whether `value` in `field` makes an account an administrator (a rank such as `admin`, `is_admin: true`). */
export function grantsAdmin(field: PrivilegedField, value: unknown): boolean {
  if (field.kind === "role") return isAdminLike(String(Array.isArray(value) ? value[0] : value));
  return field.kind === "flag" && value === true && ADMIN_FLAG.test(field.name);
}

/** The highest role the field's enum offers, else `admin`. */
export function highestRole(schema: JsonSchema | undefined): unknown {
  const chosen = schema ? chooseBranch(schema) : {};
  const options = Array.isArray(chosen.enum)
    ? chosen.enum.filter((entry): entry is string => typeof entry === "string")
    : [];
  const highest = [...options].sort((a, b) => roleRank(b) - roleRank(a))[0] ?? "admin";
  return schema && schemaType(chosen) === "array" ? [highest] : highest;
}

/**
 * Values to send for a field, the second an independent confirmation where a coincidence is possible:
 * two distinct amounts, another person's id (typed like the value the object carries now).
 */
export function valuesFor(
  field: PrivilegedField,
  current: unknown,
  otherPersonId: string | undefined,
): unknown[] {
  switch (field.kind) {
    case "role":
      return [highestRole(field.schema)];
    case "flag":
      return [true];
    case "amount":
      return [1, 3].filter((value) => value !== current);
    case "owner": {
      if (otherPersonId === undefined) return [];
      const numeric = typeof current === "number" && /^-?\d+$/.test(otherPersonId);
      const value = numeric ? Number(otherPersonId) : otherPersonId;
      return String(value) === String(current) ? [] : [value];
    }
  }
}

/** Whether a read-back shows the value sent (ids compare as text: `7` and `"7"` are one person). */
export function holds(actual: unknown, sent: unknown, kind: FieldKind): boolean {
  if (actual === undefined || actual === null) return false;
  if (kind === "owner") return String(actual) === String(sent);
  if (Array.isArray(sent) && !Array.isArray(actual))
    return JSON.stringify(sent[0]) === JSON.stringify(actual);
  return JSON.stringify(actual) === JSON.stringify(sent);
}
