import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { edgeCases } from "../schema-values/edge-cases.ts";
import { chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import { severityFor } from "../severity.ts";
import { operationKey } from "./operation-index.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import { bodyKind, buildRequest, clonePrepared, requestSchema } from "./request-builder.ts";
import { idOf, listItems, uniqueSeed } from "./resource-factory.ts";
import type { Oracle } from "./semantics-support.ts";
import {
  bodyShapedLike,
  itemRequest,
  plausibleBody,
  recordReader,
  stable,
  stepsFor,
  unwrap,
  usable,
} from "./semantics-support.ts";
import { valueAtPath } from "./value-tools.ts";

// The oracles that change state, all on resources the probe creates itself: a deletion that does not
// delete, a refused update that still changed data, a PUT that is not idempotent, a list that misses a
// just-created item.

/** Keys that hold when a record was created (`created_at`, `createdAt`, `creationDate`, `dateCreated`). */
const CREATION_KEY =
  /^(?:created|inserted|creation)(?:[_-]?(?:at|on|time|date|timestamp))?$|^date[_-]?created$/i;

/** The record's creation time as it shows it, if it does. */
function creationStamp(json: unknown): string | undefined {
  const record = unwrap(json);
  if (!record || typeof record !== "object" || Array.isArray(record)) return undefined;
  for (const [key, value] of Object.entries(record))
    if (CREATION_KEY.test(key) && (typeof value === "string" || typeof value === "number"))
      return String(value);
  return undefined;
}

export const deletedStillReadable: Oracle = async (run, factory, family, owner) => {
  if (!family.read || !usable(family.remove) || !factory.canCreate(family)) return [];
  const resource = await factory.create(family, owner);
  if (!resource) return [];
  const remove = itemRequest(family.remove, resource);
  const read = itemRequest(family.read, resource);
  // The same record, not a new one that reused the id: databases hand a freed id to the next insert, and
  // another probe may replay this very create, markers and all. Such a row was created after the delete,
  // so its creation time, when the record shows one, is not the one read before it.
  const createdAt = creationStamp((await sendPrepared(run, owner, read))?.response?.json);
  const deleted = await sendPrepared(run, owner, remove);
  if (!deleted || !isSuccess(deleted)) return [];
  const same = (exchange: HttpExchange | undefined) =>
    Boolean(
      exchange &&
        isSuccess(exchange) &&
        idOf(unwrap(exchange.response?.json), family) === resource.id &&
        (resource.markers.length === 0 ||
          resource.markers.some((marker) => (exchange.response?.body ?? "").includes(marker))) &&
        creationStamp(exchange.response?.json) === createdAt,
    );
  const first = await sendPrepared(run, owner, read);
  if (!first || !same(first)) return [];
  const second = await sendPrepared(run, owner, read);
  if (!second || !same(second)) return [];
  const key = operationKey(family.remove);
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "wrong-status",
      title: `${key} answers ${statusOf(deleted)} but the resource stays readable`,
      summary: `After ${key} answered ${statusOf(deleted)}, ${operationKey(family.read)} still answered ${statusOf(first)} with the same resource (twice).`,
      impact: "Deleted data keeps being served: clients and other users see records the owner removed.",
      location: endpointLocation(family.remove),
      related: [endpointLocation(family.read)],
      severity: severityFor("wrong-status", { dataChanged: true }),
      confidence: 0.9,
      discriminator: "deleted-still-readable",
      exchanges: [
        { label: "delete", exchange: deleted },
        { label: "read-after-delete", exchange: first },
        { label: "read-again", exchange: second },
      ],
      repro: {
        title: `${operationKey(family.read)} answers 404 (or 410) after ${key}`,
        steps: stepsFor(resource, [
          { name: "deleted", prepared: remove, user: owner },
          { name: "read", prepared: read, user: owner },
        ]),
        assertions: [
          {
            kind: "status_in",
            step: "read",
            values: [404, 410],
            message: "a deleted resource must not be readable",
          },
        ],
      },
    }),
  ];
};

/** A change to one string field plus an invalid value elsewhere: a refusal must leave the resource as it was. */
export const refusedWriteApplied: Oracle = async (run, factory, family, owner) => {
  const findings: EnvelopeDraft[] = [];
  for (const update of family.updates) {
    if (!family.read || !usable(update) || !factory.canCreate(family) || bodyKind(update) !== "json")
      continue;
    const schema = requestSchema(update);
    const properties = schema ? propertiesOf(chooseBranch(schema)) : {};
    const textField = Object.entries(properties).find(([, property]) => {
      const chosen = chooseBranch(property);
      return schemaType(chosen) === "string" && !chosen.enum && !chosen.format && !chosen.pattern;
    })?.[0];
    if (!textField) continue;
    const invalid = Object.entries(properties)
      .filter(([name]) => name !== textField)
      .flatMap(([name, property]) =>
        edgeCases(property, { seed: "x", name })
          .filter((edge) => edge.expectation === "invalid" && edge.label !== "null")
          .map((edge) => ({ name, edge })),
      )
      .slice(0, 3);
    for (const { name, edge } of invalid) {
      const resource = await factory.create(family, owner);
      if (!resource) break;
      const marker = `qaas-changed-${uniqueSeed()}`;
      const change = itemRequest(update, resource, (prepared) => {
        prepared.body = {
          ...(prepared.body as Record<string, unknown>),
          [textField]: marker,
          [name]: edge.value,
        };
      });
      const refused = await sendPrepared(run, owner, change);
      const status = statusOf(refused);
      if (!refused || status < 400 || status >= 500) continue;
      const read = itemRequest(family.read, resource);
      const after = await sendPrepared(run, owner, read);
      if (!after || !isSuccess(after) || valueAtPath(unwrap(after.response?.json), textField) !== marker)
        continue;
      const key = operationKey(update);
      findings.push(
        buildFinding(run, {
          domain: "api",
          defectClass: "validation-missing",
          title: `${key} refuses an invalid ${name} with ${status} but saves ${textField} anyway`,
          summary: `${key} answered ${status} to a body with ${name} = ${edge.label}, yet ${operationKey(family.read)} then showed ${textField} changed to the value sent with it: validation runs after part of the update was applied.`,
          impact:
            "A refused request still changes data: clients retry or report failure while the record was partly updated.",
          location: endpointLocation(update),
          related: [endpointLocation(family.read)],
          severity: severityFor("validation-missing"),
          confidence: 0.9,
          discriminator: "refused-write-applied",
          exchanges: [
            { label: "refused-update", exchange: refused },
            { label: "read-after", exchange: after },
          ],
          repro: {
            title: `${key} leaves the resource unchanged when it refuses the request`,
            // The marker is made unique per test run, so a rerun never collides with the value this run left.
            steps: stepsFor(resource, [
              { name: "refused", prepared: change, user: owner },
              { name: "read", prepared: read, user: owner },
            ]).map((step) =>
              step.body ? { ...step, body: step.body.split(marker).join("qaas-changed-{{unique}}") } : step,
            ),
            assertions: [
              { kind: "not_success", step: "refused", message: "the invalid update must be refused" },
              {
                kind: "body_lacks",
                step: "read",
                text: "qaas-changed-{{unique}}",
                message: `${textField} must not change when the update is refused`,
              },
            ],
          },
        }),
      );
      break;
    }
  }
  return findings;
};

/**
 * The same PUT twice on the probe's own record must leave it as the first left it. Judged by the record as
 * the app shows it (its read or its row in the list), else by the PUT's own answers: two repeats that each
 * answer a different value for a field the request sets (`quantity` 4, then 7, then 10 for a body saying 3)
 * show an update that accumulates instead of replacing.
 */
export const putNotIdempotent: Oracle = async (run, factory, family, owner) => {
  const put = family.updates.find((operation) => operation.method.toUpperCase() === "PUT");
  if (!put || !usable(put) || !factory.canCreate(family)) return [];
  const resource = await factory.create(family, owner);
  if (!resource) return [];
  // Without a read of the item (no read, no list) the PUT's own answers are the only witness.
  const reader = recordReader(run, family, resource, owner);
  const shown = (reader && (await reader.look()).record) ?? unwrap(resource.created);
  let change = itemRequest(put, resource, (prepared) => {
    prepared.body = bodyShapedLike(prepared.body, shown);
  });
  let first = await sendPrepared(run, owner, change);
  // Without a document the body is a reader's guess: refused, it is sent once more as the record itself
  // (what the app showed, ids and timestamps aside) with quantities as numbers.
  const retry =
    first && !isSuccess(first) && [400, 422].includes(statusOf(first)) && plausibleBody(change.body, shown);
  if (retry && !put.documented) {
    change = itemRequest(put, resource, (prepared) => {
      prepared.body = retry;
    });
    first = await sendPrepared(run, owner, change);
  }
  if (!first || !isSuccess(first)) return [];
  const afterFirst = reader && (await reader.look()).exchange;
  const second = await sendPrepared(run, owner, clonePrepared(change));
  const afterSecond = reader && (await reader.look()).exchange;
  if (!second) return [];
  if (reader && (!afterFirst || !afterSecond || !isSuccess(afterFirst) || !isSuccess(afterSecond))) return [];
  const recordOf = (json: unknown) =>
    family.read ? unwrap(json) : listItems(json).find((item) => idOf(item, family) === resource.id);
  const [one, two] = [recordOf(afterFirst?.response?.json), recordOf(afterSecond?.response?.json)];
  // A row that drops out of a list (a page boundary) is not a change of the record.
  if (reader && isSuccess(second) && (one === undefined || two === undefined)) return [];
  const stateChanged = JSON.stringify(stable(one)) !== JSON.stringify(stable(two));
  const refusedRepeat = !isSuccess(second);
  let third: HttpExchange | undefined;
  let drifting: string | undefined;
  if (refusedRepeat) {
    // A refusal is a verdict only when it repeats (a busy server fails one request now and then).
    third = await sendPrepared(run, owner, clonePrepared(change));
    if (!third || isSuccess(third) || statusOf(third) !== statusOf(second)) return [];
  } else if (!stateChanged) {
    // The read may not show every field the PUT sets (a list of summaries): the PUT's answers then witness.
    drifting = driftingFields(change.body, first, second)[0];
    if (!drifting) return [];
    third = await sendPrepared(run, owner, clonePrepared(change));
    if (!third || !isSuccess(third) || !driftingFields(change.body, second, third).includes(drifting))
      return [];
  }
  const key = operationKey(put);
  const answers = (exchange: HttpExchange | undefined) =>
    JSON.stringify(valueAtPath(unwrap(exchange?.response?.json), drifting ?? ""));
  const summary = refusedRepeat
    ? `Repeating the same ${key} answered ${statusOf(second)} after the first answered ${statusOf(first)}.`
    : drifting
      ? `The same ${key} sent three times (${drifting}: ${JSON.stringify(valueAtPath(change.body, drifting))}) answered ${drifting} = ${answers(first)}, then ${answers(second)}, then ${answers(third)}: each repeat changes the record again.`
      : `Repeating the same ${key} changed the resource again (compared without timestamp/version fields).`;
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "contract-drift",
      title: `${key} is not idempotent`,
      summary,
      impact: "PUT must be safe to retry; clients and proxies that retry it corrupt or fail.",
      location: endpointLocation(put),
      severity: severityFor("contract-drift", { dataChanged: stateChanged || drifting !== undefined }),
      confidence: 0.8,
      discriminator: "put-not-idempotent",
      exchanges: [
        { label: "first-put", exchange: first },
        { label: "second-put", exchange: second },
        ...(third ? [{ label: "third-put", exchange: third }] : []),
        ...(afterFirst ? [{ label: "read-after-first", exchange: afterFirst }] : []),
        ...(afterSecond ? [{ label: "read-after-second", exchange: afterSecond }] : []),
      ],
      repro: {
        title: `${key} twice leaves the same state`,
        steps: stepsFor(
          resource,
          reader
            ? [
                { name: "first", prepared: change, user: owner },
                { name: "afterFirst", prepared: reader.request, user: owner },
                { name: "second", prepared: change, user: owner },
                { name: "afterSecond", prepared: reader.request, user: owner },
              ]
            : [
                { name: "first", prepared: change, user: owner },
                { name: "second", prepared: change, user: owner },
              ],
        ),
        assertions: refusedRepeat
          ? [
              {
                kind: "status_below",
                step: "second",
                value: 300,
                message: "a repeated PUT must succeed like the first",
              },
            ]
          : [
              {
                kind: "same_response",
                steps: drifting ? ["first", "second"] : ["afterFirst", "afterSecond"],
                message: "a repeated PUT must not change the resource again",
              },
            ],
      },
    }),
  ];
};

/** Scalar fields the request body sets whose value differs between two answers to that same request. */
function driftingFields(body: unknown, earlier: HttpExchange, later: HttpExchange): string[] {
  if (!body || typeof body !== "object" || Array.isArray(body)) return [];
  const left = unwrap(earlier.response?.json);
  const right = unwrap(later.response?.json);
  const drifting: string[] = [];
  for (const [field, sent] of Object.entries(body)) {
    if (sent !== null && typeof sent === "object") continue;
    const [a, b] = [valueAtPath(left, field), valueAtPath(right, field)];
    if (a === undefined || b === undefined || a === null || typeof a === "object") continue;
    if (JSON.stringify(a) !== JSON.stringify(b)) drifting.push(field);
  }
  return drifting;
}

const PAGE_HINT =
  /^(next|next_?page|has_?more|cursor|next_?cursor|total|total_?count|count|page|pages|offset|links)$/i;
const LIMIT_NAME = /^(limit|per_?page|page_?size|size|max|take|count)$/i;

/** A list is complete when it says nothing of pages and is shorter than any page it could be cut to. */
function looksComplete(exchange: HttpExchange, items: unknown[], limit: number | undefined): boolean {
  const json = exchange.response?.json;
  if (exchange.response?.headers.link) return false;
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const record = json as Record<string, unknown>;
    for (const [key, value] of Object.entries(record)) {
      if (!PAGE_HINT.test(key)) continue;
      if (typeof value === "number" && /total|count/i.test(key) && value <= items.length) continue;
      if (value === null || value === false) continue;
      return false;
    }
  }
  return items.length < (limit ?? 10);
}

export const listOmitsCreated: Oracle = async (run, factory, family, owner) => {
  if (!family.list || !factory.canCreate(family)) return [];
  const resource = await factory.create(family, owner);
  if (!resource) return [];
  const list = buildRequest(family.list, { seed: uniqueSeed(), pathValues: resource.pathValues });
  const limitParameter = family.list.parameters.find(
    (parameter) => parameter.in === "query" && LIMIT_NAME.test(parameter.name),
  );
  let limit: number | undefined;
  if (limitParameter) {
    const maximum = (limitParameter.schema as { maximum?: number } | undefined)?.maximum;
    limit = Math.min(maximum ?? 100, 100);
    list.query[limitParameter.name] = String(limit);
  }
  const listed = await sendPrepared(run, owner, list);
  if (!listed || !isSuccess(listed)) return [];
  const items = listItems(listed.response?.json);
  if (items.length === 0 || !looksComplete(listed, items, limit)) return [];
  if (items.some((item) => idOf(item, family) === resource.id)) return [];
  // A list filtered by a field the new item differs in (status, visibility) is correct, not stale.
  const read = family.read ? await sendPrepared(run, owner, itemRequest(family.read, resource)) : undefined;
  const mine = unwrap(read?.response?.json ?? resource.created);
  if (mine && typeof mine === "object") {
    for (const [key, value] of Object.entries(mine as Record<string, unknown>)) {
      if (
        value === null ||
        typeof value === "object" ||
        key === family.idParameter ||
        /^(id|_id|uuid)$/.test(key)
      )
        continue;
      const values = new Set(items.map((item) => JSON.stringify((item as Record<string, unknown>)?.[key])));
      if (
        values.size === 1 &&
        !values.has(JSON.stringify(value)) &&
        !values.has(undefined as unknown as string)
      )
        return [];
    }
  }
  const again = await sendPrepared(run, owner, list);
  if (
    !again ||
    !isSuccess(again) ||
    listItems(again.response?.json).some((item) => idOf(item, family) === resource.id)
  )
    return [];
  const key = operationKey(family.list);
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "contract-drift",
      title: `${key} omits a just-created item`,
      summary: `${operationKey(resource.request.operation)} created id ${resource.id} as ${owner ?? "anonymous"}, but ${key} (as the same user, ${items.length} items, no pagination) did not list it, twice.`,
      impact: "Users do not see what they just created; the list is stale or filtered wrongly.",
      location: endpointLocation(family.list),
      related: [endpointLocation(resource.request.operation)],
      severity: severityFor("contract-drift", { dataChanged: true }),
      confidence: 0.75,
      discriminator: "list-omits-created",
      exchanges: [
        { label: "create", exchange: resource.exchange },
        { label: "list", exchange: listed },
        { label: "list-again", exchange: again },
      ],
      repro: {
        title: `${key} lists an item right after it is created`,
        steps: stepsFor(resource, [{ name: "list", prepared: list, user: owner }]),
        assertions: [
          { kind: "list_contains_id", step: "list", idOf: "created", message: "the new item must be listed" },
        ],
      },
    }),
  ];
};
