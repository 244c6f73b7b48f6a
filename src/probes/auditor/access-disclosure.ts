import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { CreatedResource, ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { Leak } from "./authz-support.ts";
import { answer, reproFor, targetOf } from "./authz-support.ts";

// Private records in an anonymous answer (CWE-306): a read without path parameters — an export, a report,
// a feed — that shows anonymous callers a record the probe created as a signed-in user, while that
// record's own read refuses them. A read the document declares public (`security: []`) is a showcase on
// purpose (a catalogue of names and prices); one merely without a requirement is what the code does (a
// framework documents each route as written), and the application's own refusal of the record says
// what it should do. Two signals: the record's
// planted values in the anonymous answer, twice, and the refusal of its item read.

const MAX_RECORDS = 6;

export async function checkAnonymousDisclosure(
  run: ProbeRun,
  factory: ResourceFactory,
  reads: readonly Operation[],
): Promise<Leak[]> {
  const records = factory.created
    .filter((record) => record.owner !== undefined && record.markers.length > 0 && record.family.read)
    .slice(0, MAX_RECORDS);
  if (records.length === 0) return [];
  const privacy = new Map<CreatedResource, Promise<Refusal | undefined>>();
  const refusalOf = (record: CreatedResource) => {
    let pending = privacy.get(record);
    if (!pending) {
      pending = refused(run, record);
      privacy.set(record, pending);
    }
    return pending;
  };
  const leaks: Leak[] = [];
  await mapConcurrent(
    reads.filter((read) => !read.declared_public && !isAuthOperation(read) && !read.graphql),
    4,
    async (read) => {
      const prepared = buildRequest(read, { seed: uniqueSeed() });
      const anonymous = await sendPrepared(run, undefined, prepared);
      if (!anonymous || !isSuccess(anonymous) || run.sessions.endedSession(anonymous)) return;
      const shown = records.filter((record) => shows(anonymous, record));
      for (const record of shown) {
        const refusal = await refusalOf(record);
        if (!refusal) continue;
        const again = await sendPrepared(run, undefined, prepared);
        if (!again || !isSuccess(again) || !shows(again, record)) return;
        const target = targetOf(record);
        const repro = reproFor(target, [{ name: "other", prepared, user: undefined }]);
        const texts = repro.markers.filter((_, index) =>
          answer(anonymous).text.includes(record.markers[index]!),
        );
        leaks.push({
          operation: read,
          principal: { user: undefined, relation: "anonymous" },
          action: "read",
          ownerExchange: refusal.owner,
          otherExchange: anonymous,
          confirmExchange: refusal.anonymous,
          steps: repro.steps,
          owner: record.owner!,
          technique: "disclosure",
          assertion: {
            kind: "denied_or_lacks",
            step: "other",
            texts,
            message: `anonymous callers must not see ${record.owner}'s records`,
          },
        });
        return;
      }
    },
  );
  return leaks;
}

interface Refusal {
  owner: HttpExchange;
  anonymous: HttpExchange;
}

/** The record's own read: answered to its owner, refused to anonymous callers (401, 403, or sign-in). */
async function refused(run: ProbeRun, record: CreatedResource): Promise<Refusal | undefined> {
  const read = record.family.read!;
  const prepared = buildRequest(read, { seed: uniqueSeed(), pathValues: record.pathValues });
  const owner = await sendPrepared(run, record.owner, prepared);
  if (!owner || !isSuccess(owner) || !shows(owner, record)) return undefined;
  const anonymous = await sendPrepared(run, undefined, prepared);
  if (!anonymous) return undefined;
  const status = statusOf(anonymous);
  return status === 401 || status === 403 || run.sessions.endedSession(anonymous)
    ? { owner, anonymous }
    : undefined;
}

function shows(exchange: HttpExchange, record: CreatedResource): boolean {
  const text = answer(exchange).text;
  return record.markers.some((marker) => text.includes(marker));
}
