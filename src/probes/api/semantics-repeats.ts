import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { toTemplateForm } from "../http/target-url.ts";
import { severityFor } from "../severity.ts";
import { operationKey } from "./operation-index.ts";
import { bodyExcerpt, endpointLocation, isServerError, sendPrepared } from "./probe-support.ts";
import { buildRequest } from "./request-builder.ts";
import { uniqueSeed } from "./resource-factory.ts";
import { actionAnswersItsOwnChange } from "./semantics-actions.ts";
import type { Oracle } from "./semantics-support.ts";
import { itemRequest, recordReader, stable, stepsFor, usable } from "./semantics-support.ts";

// RFC 9110 §9.2 on resources the probe creates itself: a safe method (GET) must not change the resource,
// and an idempotent one (DELETE) repeated must not fail differently than "it is gone".

/** Fields a read may legitimately bump on every GET (view counters, last access): not a side effect. */
const READ_COUNTER = /(view|visit|hit|read|access|open|impression|seen)(s|_?count|_?at|_?on)?$/i;

function withoutCounters(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCounters);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !READ_COUNTER.test(key))
        .map(([key, inner]) => [key, withoutCounters(inner)]),
    );
  }
  return value;
}

const snapshot = (record: unknown): string => JSON.stringify(withoutCounters(stable(record)));

/** GET operations one segment under an item of `family`'s collection (`GET /orders/{id}/confirm`). */
function actionGets(operations: readonly Operation[], collection: string): Array<[Operation, string]> {
  const found: Array<[Operation, string]> = [];
  for (const operation of operations) {
    if (operation.method.toUpperCase() !== "GET") continue;
    const template = toTemplateForm(operation.path);
    if (!template.startsWith(`${collection}/`)) continue;
    const rest = template.slice(collection.length).match(/^\/\{([^}]+)\}\/[^{}/]+\/?$/);
    if (rest) found.push([operation, rest[1]!]);
  }
  return found;
}

/**
 * A GET under an item (`GET /orders/{id}/confirm`) that changes the item: the item (read alone, or found in
 * its list) is the same twice before, differs after the GET, and stays so on a second look (a persisted
 * change, not noise). Only on a record the probe created.
 */
export const getChangesState: Oracle = async (run, factory, family, owner) => {
  if (!factory.canCreate(family) || !family.create) return [];
  const findings: EnvelopeDraft[] = [];
  for (const [get, parameter] of actionGets(run.map.operations, family.collection)) {
    // The action addresses the item itself: the collection needs no item path of its own.
    const resource = await factory.createRecord(family, owner);
    if (!resource) break;
    const values = { ...resource.pathValues, [parameter]: resource.id };
    const reader = recordReader(run, family, resource, owner, values);
    if (!reader) {
      const found = await actionAnswersItsOwnChange(run, get, resource, values, owner);
      if (found) findings.push(found);
      continue;
    }
    const read = reader.request;
    const look = async () => {
      const { exchange, record } = await reader.look();
      return { exchange, state: record === undefined ? undefined : snapshot(record) };
    };
    const before = await look();
    const beforeAgain = await look();
    if (!before.state || before.state === "{}" || before.state !== beforeAgain.state) continue;
    const action = buildRequest(get, { seed: uniqueSeed(), pathValues: values });
    const answered = await sendPrepared(run, owner, action);
    if (!answered || !isSuccess(answered)) continue;
    const after = await look();
    const afterAgain = await look();
    if (!after.state || after.state === before.state || after.state !== afterAgain.state) continue;
    const key = operationKey(get);
    const readerKey = operationKey(read.operation);
    findings.push(
      buildFinding(run, {
        domain: "api",
        defectClass: "contract-drift",
        title: `${key} changes the resource it reads (GET with a side effect)`,
        summary: `${readerKey} showed the probe's record the same twice; after ${key} (${statusOf(answered)}) it showed it changed, twice. GET must be safe (RFC 9110 §9.2.1).`,
        impact:
          "Crawlers, prefetching browsers, link previews and retries trigger the change without anyone asking for it.",
        location: endpointLocation(get),
        related: [endpointLocation(read.operation)],
        severity: severityFor("contract-drift", { dataChanged: true }),
        confidence: 0.85,
        discriminator: "get-side-effect",
        exchanges: [
          { label: "read-before", exchange: before.exchange! },
          { label: "get", exchange: answered },
          { label: "read-after", exchange: after.exchange! },
          { label: "read-after-again", exchange: afterAgain.exchange! },
        ],
        repro: {
          title: `${key} leaves the resource as it was`,
          steps: stepsFor(resource, [
            { name: "before", prepared: read, user: owner },
            { name: "get", prepared: action, user: owner },
            { name: "after", prepared: read, user: owner },
          ]),
          assertions: [
            {
              kind: "same_response",
              steps: ["before", "after"],
              message: `${key} must not change the resource`,
            },
          ],
        },
      }),
    );
  }
  return findings;
};

/** DELETE twice on the probe's own resource: the second must answer 404/410 (or 2xx), never 5xx. */
export const deleteTwiceFails: Oracle = async (run, factory, family, owner) => {
  if (!usable(family.remove) || !factory.canCreate(family)) return [];
  const remove = family.remove;
  const resource = await factory.create(family, owner);
  if (!resource) return [];
  const request = itemRequest(remove, resource);
  const first = await sendPrepared(run, owner, request);
  if (!first || !isSuccess(first)) return [];
  const second = await sendPrepared(run, owner, request);
  if (!second || !isServerError(second)) return [];
  const third = await sendPrepared(run, owner, request);
  if (!third || !isServerError(third)) return [];
  const key = operationKey(remove);
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "unhandled-error",
      title: `${key} answers ${statusOf(second)} when the resource is already deleted`,
      summary: `${key} deleted the probe's own resource (${statusOf(first)}); the same DELETE again answered ${statusOf(second)}, and ${statusOf(third)} a third time. Body: ${bodyExcerpt(run, second)}`,
      impact:
        "DELETE is idempotent (RFC 9110 §9.2.2): a retried deletion after a lost answer crashes instead of answering 404.",
      location: endpointLocation(remove),
      severity: severityFor("unhandled-error"),
      confidence: 0.9,
      discriminator: "delete-twice",
      exchanges: [
        { label: "delete", exchange: first },
        { label: "delete-again", exchange: second },
        { label: "delete-third", exchange: third },
      ],
      repro: {
        title: `${key} twice answers 404 the second time`,
        steps: stepsFor(resource, [
          { name: "first", prepared: request, user: owner },
          { name: "second", prepared: request, user: owner },
        ]),
        assertions: [
          {
            kind: "status_below",
            step: "second",
            value: 500,
            message: "a repeated DELETE must answer 404 or 410, not a server error",
          },
        ],
      },
    }),
  ];
};
