import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isSafeWrite, operationKey } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { OwnedRecord, RecordCreator } from "./record-creator.ts";
import { type Representation, readBack, sendOnRecord } from "./state-reads.ts";

// Lost updates (CWE-362; optimistic locking as JPA @Version, Rails lock_version and RFC 9110 If-Match
// describe it): an update that asks for the version the client read — a `version` property in its body, or
// an If-Match header beside an ETag the read answers — promises to refuse a change made from an older copy.
// On a record of its own the trial edits once with the version it read (accepted, and the version must
// move: the server does version its writes), then edits again with that now stale version. Accepted, with
// the second edit's value read back over the first, the promise is broken: the second editor silently
// overwrote a change they never saw.

const VERSION_FIELD = /^(version|lock_version|lockversion|row_version|rowversion|revision|rev)$/i;

type JsonSchema = Record<string, unknown>;

export type VersionToken = { kind: "body"; field: string } | { kind: "if-match" };

function propertiesOf(schema: JsonSchema | undefined): Record<string, JsonSchema> {
  const properties = schema?.properties;
  return properties && typeof properties === "object" ? (properties as Record<string, JsonSchema>) : {};
}

/** How the update takes the version the client read, when it takes one. */
export function versionTokenOf(
  update: Operation,
  read: Representation,
  etag: string | undefined,
): VersionToken | undefined {
  const ifMatch = update.parameters.some(
    (parameter) => parameter.in === "header" && parameter.name.toLowerCase() === "if-match",
  );
  if (ifMatch && etag) return { kind: "if-match" };
  const field = Object.keys(propertiesOf(requestSchema(update))).find((name) => VERSION_FIELD.test(name));
  if (field && (typeof read[field] === "number" || typeof read[field] === "string"))
    return { kind: "body", field };
  return undefined;
}

/** A free-text property the update writes and the read answers: where the edits leave their marks. */
export function markField(update: Operation, read: Representation): string | undefined {
  const properties = propertiesOf(requestSchema(update));
  const writable = Object.entries(properties).filter(
    ([name, schema]) =>
      schema.type === "string" &&
      schema.enum === undefined &&
      schema.format === undefined &&
      schema.pattern === undefined &&
      !VERSION_FIELD.test(name) &&
      typeof read[name] === "string",
  );
  const preferred = writable.find(([name]) =>
    /^(title|name|body|text|description|note|notes|content|summary)$/i.test(name),
  );
  return (preferred ?? writable[0])?.[0];
}

function tokenOf(token: VersionToken, state: Representation, etag: string | undefined): unknown {
  return token.kind === "if-match" ? etag : state[token.field];
}

async function edit(
  run: ProbeRun,
  record: OwnedRecord,
  update: Operation,
  token: VersionToken,
  version: unknown,
  field: string,
  mark: string,
) {
  const patch = update.method.toUpperCase() === "PATCH";
  const base = patch ? {} : { ...(record.request.body as object) };
  const body: Record<string, unknown> = { ...base, [field]: mark };
  if (token.kind === "body") body[token.field] = version;
  const headers = token.kind === "if-match" ? { "if-match": String(version) } : undefined;
  return sendOnRecord(run, record, update, { body, ...(headers ? { headers } : {}) });
}

export async function trialLostUpdate(
  run: ProbeRun,
  creator: RecordCreator,
  createFamily: ResourceFamily,
  update: Operation,
  users: ReadonlyArray<string | undefined>,
): Promise<EnvelopeDraft | string> {
  if (!isSafeWrite(update)) return "the update may not be sent";
  let record: OwnedRecord | undefined;
  for (const user of users) {
    record = (await creator.create(createFamily, user)).record;
    if (record) break;
  }
  if (!record) return "no record of the probe's own could be created";
  const copy = await readBack(creator, record);
  if (!copy) return "the created record cannot be read back";
  const etag = copy.exchange.response?.headers.etag;
  const token = versionTokenOf(update, copy.state, etag);
  if (!token) return "the update takes no version (no version property, no If-Match)";
  const field = markField(update, copy.state);
  if (!field) return "the update writes no free-text field the read answers";
  const stale = tokenOf(token, copy.state, etag);
  const firstMark = `first-${uniqueSeed()}`.slice(0, 24);
  const secondMark = `second-${uniqueSeed()}`.slice(0, 24);
  const first = await edit(run, record, update, token, stale, field, firstMark);
  if (!first.exchange || !isSuccess(first.exchange))
    return `an edit with the current version answered ${statusOf(first.exchange)}`;
  const afterFirst = await readBack(creator, record);
  if (!afterFirst || afterFirst.state[field] !== firstMark) return "the first edit is not read back";
  const moved = tokenOf(token, afterFirst.state, afterFirst.exchange.response?.headers.etag);
  if (moved === undefined || moved === stale)
    return "the version did not move on an edit: nothing to compare";
  const second = await edit(run, record, update, token, stale, field, secondMark);
  if (!second.exchange || !isSuccess(second.exchange))
    return `a stale version is refused (${statusOf(second.exchange)})`;
  const afterSecond = await readBack(creator, record);
  if (!afterSecond || afterSecond.state[field] !== secondMark)
    return "the stale edit was answered but not applied";
  return finding(run, update, token, field, {
    stale,
    moved,
    exchanges: [
      { label: "read-copy", exchange: copy.exchange },
      { label: "edit-with-current-version", exchange: first.exchange },
      { label: "read-after-first-edit", exchange: afterFirst.exchange },
      { label: "edit-with-stale-version", exchange: second.exchange },
      { label: "read-after-stale-edit", exchange: afterSecond.exchange },
    ],
  });
}

function finding(
  run: ProbeRun,
  update: Operation,
  token: VersionToken,
  field: string,
  seen: { stale: unknown; moved: unknown; exchanges: Array<{ label: string; exchange: HttpExchange }> },
): EnvelopeDraft {
  const key = operationKey(update);
  const how = token.kind === "if-match" ? "If-Match" : `the ${token.field} property`;
  return buildFinding(run, {
    domain: "data",
    defectClass: "data-integrity",
    title: `Lost update: ${key} accepts a change made from a stale version and overwrites the newer one`,
    summary: [
      `${key} takes the version the client read in ${how}. On a record of the probe's own, an edit with the current version (${String(seen.stale)}) was accepted and moved it to ${String(seen.moved)}.`,
      `A second edit still sending ${String(seen.stale)} was accepted too, and ${field}, read back, holds the second edit's value: the first edit is gone.`,
      "The version is written but never compared, so two people editing one record overwrite each other without a conflict.",
      `Fix: make the version part of the write (\`UPDATE … WHERE id = ? AND version = ?\`) and answer ${token.kind === "if-match" ? "412" : "409"} when it matched no row.`,
    ].join(" "),
    impact:
      "Concurrent edits are silently lost: the last writer wins even when they edited an outdated copy.",
    location: { kind: "endpoint", value: key },
    severity: "medium",
    confidence: 0.9,
    discriminator: `lost-update:${field}`,
    exchanges: seen.exchanges,
  });
}
