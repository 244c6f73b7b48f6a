import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { operationKey } from "../api/operation-index.ts";
import { toSpec } from "../api/request-builder.ts";
import { extractId, uniqueSeed } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { OwnedRecord, RecordCreator } from "./record-creator.ts";
import { readBack } from "./state-reads.ts";

// A creation that takes an idempotency key (the `Idempotency-Key` header of payment APIs and of the IETF
// draft) promises one record per key: a retry answers what the first request made. The trial creates a
// record of its own, resends the very same request (same key) in turn, then sends one new key several times
// at once. More than one distinct id for one key, each of them readable through the record's own read
// operation, is a broken promise: a double submission made two records (two payments, two orders).

const CONCURRENT = 6;
const ROUNDS = 3;
const KEY_HEADER = /^(x-)?idempotency[-_]?key$/i;

/** The idempotency-key header a creation documents, when it documents one. */
export function idempotencyHeader(operation: Operation): string | undefined {
  return operation.parameters.find(
    (parameter) => parameter.in === "header" && KEY_HEADER.test(parameter.name),
  )?.name;
}

/** The same record addressed by another id (a duplicate the application made from the probe's request). */
function sibling(record: OwnedRecord, id: string): OwnedRecord {
  const itemValues = Object.fromEntries(
    Object.entries(record.itemValues ?? {}).map(([name, value]) => [name, value === record.id ? id : value]),
  );
  return { ...record, id, itemValues };
}

export async function trialIdempotency(
  run: ProbeRun,
  creator: RecordCreator,
  createFamily: ResourceFamily,
  users: ReadonlyArray<string | undefined>,
): Promise<EnvelopeDraft | string> {
  const create = createFamily.create!;
  const header = idempotencyHeader(create)!.toLowerCase();
  let record: OwnedRecord | undefined;
  for (const user of users) {
    record = (await creator.create(createFamily, user)).record;
    if (record) break;
  }
  if (!record) return "no record of the probe's own could be created";
  if (!record.request.headers[header]) return "the creation was built without its key";
  const family = record.itemFamily ?? createFamily;
  const resend = async (key: string) => {
    const request = { ...record.request, headers: { ...record.request.headers, [header]: key } };
    return send(run, record.owner, toSpec(run.target.baseUrl, request));
  };
  /** Distinct ids (besides `known`) among accepted answers that the read operation answers as records. */
  const duplicates = async (answers: Array<HttpExchange | undefined>, known: string | undefined) => {
    const ids = new Map<string, HttpExchange>();
    for (const answer of answers) {
      const id = answer && isSuccess(answer) ? extractId(answer, family) : undefined;
      if (id !== undefined && id !== known && !ids.has(id)) ids.set(id, answer!);
    }
    const stored: Array<{ id: string; exchange: HttpExchange; read: HttpExchange }> = [];
    for (const [id, exchange] of ids) {
      const read = await readBack(creator, sibling(record, id));
      if (read) stored.push({ id, exchange, read: read.exchange });
    }
    return stored;
  };
  const again = await resend(record.request.headers[header]!);
  const inTurn = await duplicates([again], record.id);
  if (inTurn.length > 0) {
    const firstRead = await readBack(creator, record);
    if (firstRead)
      return finding(run, create, header, "in turn", 2, {
        exchanges: [
          { label: "create", exchange: record.exchange },
          { label: "same-key-again", exchange: inTurn[0]!.exchange },
          { label: "read-first", exchange: firstRead.exchange },
          { label: "read-second", exchange: inTurn[0]!.read },
        ],
      });
  }
  for (let round = 1; round <= ROUNDS; round += 1) {
    const key = `qaas-${uniqueSeed()}`;
    const answers = await run.client.together(
      () => Promise.all(Array.from({ length: CONCURRENT }, () => resend(key))),
      CONCURRENT,
    );
    const stored = await duplicates(answers, undefined);
    if (stored.length < 2) continue;
    return finding(run, create, header, `at once (round ${round})`, stored.length, {
      exchanges: [
        ...stored
          .slice(0, 2)
          .map((entry, index) => ({ label: `same-key-${index + 1}`, exchange: entry.exchange })),
        ...stored.slice(0, 2).map((entry, index) => ({ label: `read-${index + 1}`, exchange: entry.read })),
      ],
    });
  }
  return `one key made one record, in turn (${statusOf(again)}) and ${CONCURRENT} at once (${ROUNDS} rounds)`;
}

function finding(
  run: ProbeRun,
  create: Operation,
  header: string,
  how: string,
  count: number,
  seen: { exchanges: Array<{ label: string; exchange: HttpExchange }> },
): EnvelopeDraft {
  const key = operationKey(create);
  const race = how.startsWith("at once");
  return buildFinding(run, {
    domain: "data",
    defectClass: "data-integrity",
    title: `${race ? "Race: " : ""}${key} makes ${count} records for one ${header} sent ${how.replace(/ \(.*\)/, "")}`,
    summary: [
      `${key} takes an ${header} header: one key is meant to make one record, a retry answering the first.`,
      `Sent ${how} with one key, it made ${count} distinct records, each read back through the record's own read operation.`,
      race
        ? "The key is looked up before the record is written, with nothing making the key unique, so simultaneous retries all pass the lookup."
        : "The key is not used to find the earlier record at all.",
      "Fix: keep the key unique in the table (per account) and insert with `ON CONFLICT DO NOTHING`, answering the existing record when nothing was inserted.",
    ].join(" "),
    impact:
      "A double click or a client retry makes the record twice: a payment charged twice, an order placed twice.",
    location: { kind: "endpoint", value: key },
    severity: "high",
    confidence: 0.9,
    discriminator: `idempotency:${header}`,
    exchanges: seen.exchanges,
  });
}
