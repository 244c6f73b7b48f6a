import type { Operation } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { statusOf } from "../http/http-types.ts";
import { severityFor } from "../severity.ts";
import { operationKey } from "./operation-index.ts";
import { bodyExcerpt, endpointLocation, sendPrepared } from "./probe-support.ts";
import { buildRequest } from "./request-builder.ts";
import { uniqueSeed } from "./resource-factory.ts";
import type { Oracle } from "./semantics-support.ts";
import { missingId, stepsFor } from "./semantics-support.ts";
import { looksLikeErrorPayload } from "./value-tools.ts";

// A read of a resource that does not exist answered 200 with nothing in it (`null`, `{}`, `[]`, an empty
// body) instead of 404 (RFC 9110 §15.5.5): the ORM's "no row" passed straight to the serializer. Without
// a document nothing promises the 404, so the oracle compares the operation with itself: a real id answers
// a record, a made-up one answers an empty success, and the made-up one does so again.

/**
 * An item read whose made-up id answers 200 with an empty body while a known id answers a record. Runs only
 * where no document lists the operation's statuses: where one does, probe_semantics' unknown-id oracle
 * judges the answer against the document's promise (and shares this finding's discriminator, so the two
 * never report the same operation twice). A 2xx that says "not found" in its body is that oracle's too.
 */
export const missingReadAnsweredEmpty: Oracle = async (run, factory, family, owner) => {
  const read = family.read;
  if (!read || !family.idParameter || promisesStatuses(read)) return [];
  const located = await factory.pathValuesFor(read, owner);
  if (!located) return [];
  const known = await sendPrepared(
    run,
    owner,
    buildRequest(read, { seed: uniqueSeed(), pathValues: located.values }),
  );
  const record = known && statusOf(known) === 200 ? recordOf(known) : undefined;
  if (!known || !record) return [];
  const prepared = buildRequest(read, {
    seed: uniqueSeed(),
    pathValues: { ...located.values, [family.idParameter]: missingId(located.values[family.idParameter]!) },
  });
  const missing = await sendPrepared(run, owner, prepared);
  if (!missing || !answeredEmpty(missing, record)) return [];
  // The replay rules out a passing hiccup (a cache, a connection reset answered by a proxy).
  const replay = await sendPrepared(run, owner, prepared);
  if (!replay || !answeredEmpty(replay, record)) return [];
  const key = operationKey(read);
  const steps = located.resource
    ? stepsFor(located.resource, [{ name: "missing", prepared, user: owner }])
    : [stepFromPrepared("missing", prepared, owner)];
  const body = missing.response?.body.trim() ? bodyExcerpt(run, missing, 80) : "(empty)";
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "wrong-status",
      title: `${key} answers 200 with an empty body for an id that does not exist`,
      summary: `${key} with a made-up ${family.idParameter} answered 200 with ${body} (twice) instead of 404, while an existing ${family.idParameter} answers the record (${bodyExcerpt(run, known, 120)}).`,
      impact:
        "Clients, caches and monitors treat a missing resource as a success and break on the empty body.",
      location: endpointLocation(read),
      severity: severityFor("wrong-status"),
      confidence: 0.8,
      // The unknown-id oracle's discriminator: one finding per operation, whichever oracle saw it.
      discriminator: "unknown-id",
      exchanges: [
        { label: "known-id", exchange: known },
        { label: "made-up-id", exchange: missing },
        { label: "made-up-id-again", exchange: replay },
      ],
      repro: {
        title: `${key} answers 404 for an id that does not exist`,
        steps,
        assertions: [
          {
            kind: "status_in",
            step: "missing",
            values: [400, 404, 410],
            message: "an id that does not exist must answer 404",
          },
        ],
      },
    }),
  ];
};

/** Whether a document lists statuses for the operation: then its promise, not this oracle, decides. */
function promisesStatuses(operation: Operation): boolean {
  return Object.keys(operation.responses).length > 0;
}

/**
 * The record a read answered: a JSON object with fields (or its one wrapped object), not a list (a
 * filter's answer) and not an error payload.
 */
function recordOf(exchange: HttpExchange): Record<string, unknown> | undefined {
  const json = exchange.response?.json;
  if (!isObject(json) || looksLikeErrorPayload(json)) return undefined;
  const entries = Object.entries(json);
  if (entries.length === 0) return undefined;
  if (entries.length === 1) {
    const inner = entries[0]![1];
    if (Array.isArray(inner)) return undefined;
    if (isObject(inner) && Object.keys(inner).length === 0) return undefined;
  }
  return json;
}

/**
 * A 200 with nothing in it where the known id answered `record`: no body, JSON `null`, `""`, `{}` or `[]`,
 * or the record's one envelope key (`{"comment": …}`) holding `null` or `{}`. 204 is left alone (a
 * deliberate "nothing here" some APIs document), and so is anything with content.
 */
function answeredEmpty(exchange: HttpExchange, record: Record<string, unknown>): boolean {
  const response = exchange.response;
  if (!response || statusOf(exchange) !== 200) return false;
  if (response.body.trim() === "") return true;
  const json = response.json;
  if (json === undefined) return false;
  if (isEmptyValue(json)) return true;
  if (!isObject(json)) return false;
  const keys = Object.keys(json);
  const envelope = Object.keys(record);
  return (
    keys.length === 1 &&
    envelope.length === 1 &&
    keys[0] === envelope[0] &&
    isObject(record[keys[0]!]) &&
    (json[keys[0]!] === null || (isObject(json[keys[0]!]) && isEmptyValue(json[keys[0]!])))
  );
}

function isEmptyValue(value: unknown): boolean {
  if (value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
