import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { operationKey, selectOperations } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { bodyKind, clonePrepared } from "../api/request-builder.ts";
import { listItems, ResourceFactory } from "../api/resource-factory.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { type PointFinding, pointFinding } from "./injection-finding.ts";
import { uniqueToken } from "./markers.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { openPoint, sendAt } from "./point-sender.ts";
import type { PointProbeOptions } from "./probe-frame.ts";
import { injectionPoints, mayProbe } from "./probe-points.ts";

// NoSQL operator injection. Where a filter is built from a request, a scalar that becomes an operator
// object (`{"$ne": null}` in JSON, `field[$ne]=x` in a query string or form) matches every document
// instead of one. Each string field, and all of an operation's string fields at once (a sign-in needs both
// user and secret to match), is sent as an operator that matches everything and as one that matches
// nothing (`{"$in": []}`). Reported when the match-everything answer is wider — a success where the
// baseline and the match-nothing answer are refused, or more records than both — and again on a repeat.

interface Operators {
  name: string;
  /** The value for a JSON body. */
  json: unknown;
  /** `[op]` suffix and value for query strings and form bodies. */
  bracket: [string, string];
}

const WIDE: readonly Operators[] = [
  { name: "$ne", json: { $ne: null }, bracket: ["[$ne]", "qaas-none"] },
  { name: "$gt", json: { $gt: "" }, bracket: ["[$gt]", ""] },
];

function narrow(): Operators {
  const token = uniqueToken();
  return { name: "$in []", json: { $in: [] }, bracket: ["[$eq]", token] };
}

interface Shape {
  status: number;
  count: number;
}

function shapeOf(exchange: HttpExchange | undefined): Shape {
  const json = exchange?.response?.json;
  const items = listItems(json);
  return {
    status: exchange?.response?.status ?? 0,
    count:
      items.length > 0
        ? items.length
        : json && typeof json === "object" && exchange && isSuccess(exchange)
          ? 1
          : 0,
  };
}

/** Whether `wide` answers more than `other`: admitted where it was refused, or more records. */
function wider(wide: Shape, other: Shape): boolean {
  const wideOk = wide.status >= 200 && wide.status < 300;
  const otherOk = other.status >= 200 && other.status < 300;
  if (wideOk && !otherOk) return other.status >= 400 && other.status < 500;
  return wideOk && otherOk && wide.count > other.count;
}

interface Hit {
  open: OpenPoint;
  fields: string[];
  operator: string;
  evidence: Array<{ label: string; sent: Sent }>;
  shapes: { baseline: Shape; wide: Shape; narrow: Shape };
}

export async function probeNoSqlInjection(
  run: ProbeRun,
  options: PointProbeOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const chosen = options.operation ? new Set(selectOperations(run.map, options.operation)) : undefined;
  const byOperation = new Map<Operation, InputPoint[]>();
  for (const point of injectionPoints(run.map, {
    includeWrites: run.target.writesAllowed,
    operations: chosen,
  })) {
    if (point.numeric || point.in === "path" || point.name.includes(".")) continue;
    if (point.in === "body" && bodyKind(point.operation) === "none") continue;
    if (!mayProbe(run.target, point.operation)) continue;
    byOperation.set(point.operation, [...(byOperation.get(point.operation) ?? []), point]);
  }
  const stats = { operations: byOperation.size, tested: 0, unreachable: 0 };
  const hits: Hit[] = [];
  const factory = new ResourceFactory(run);
  const exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    await mapConcurrent([...byOperation.values()], 4, async (points) => {
      const open = await openPoint(run, factory, points[0]!, users);
      if (!open || (open.exchange.response?.status ?? 0) >= 500) {
        stats.unreachable += 1;
        return;
      }
      stats.tested += 1;
      const hit = await testOperation(run, open, points);
      if (hit) hits.push(hit);
    });
  });
  const candidates = hits.map((hit) => pointFinding(run, findingOf(hit)));
  return { candidates, stats: { ...stats, confirmed: candidates.length, budget_exhausted: exhausted } };
}

/** The request with each of `points` carrying the operator, in the encoding its place uses. */
function withOperator(
  prepared: PreparedRequest,
  points: readonly InputPoint[],
  operator: Operators,
): PreparedRequest {
  const copy = clonePrepared(prepared);
  const form = bodyKind(prepared.operation) === "form";
  for (const point of points) {
    if (point.in === "query") {
      delete copy.query[point.name];
      copy.query[`${point.name}${operator.bracket[0]}`] = operator.bracket[1];
    } else {
      const body = { ...((copy.body ?? {}) as Record<string, unknown>) };
      if (form) {
        delete body[point.name];
        body[`${point.name}${operator.bracket[0]}`] = operator.bracket[1];
      } else body[point.name] = operator.json;
      copy.body = body;
    }
  }
  return copy;
}

async function testOperation(
  run: ProbeRun,
  open: OpenPoint,
  points: readonly InputPoint[],
): Promise<Hit | undefined> {
  const baseline = shapeOf(open.exchange);
  const groups: InputPoint[][] = [
    ...(points.length > 1 ? [points.slice()] : []),
    ...points.map((point) => [point]),
  ];
  const send = (group: readonly InputPoint[], operator: Operators) =>
    sendAt(run, open, open.value, { edit: (prepared) => withOperator(prepared, group, operator) });
  for (const group of groups) {
    for (const operator of WIDE) {
      const wide = await send(group, operator);
      if (!wide || !wider(shapeOf(wide.exchange), baseline)) continue;
      const none = await send(group, narrow());
      if (!none || !wider(shapeOf(wide.exchange), shapeOf(none.exchange))) continue;
      const wideAgain = await send(group, operator);
      const noneAgain = await send(group, narrow());
      if (!wideAgain || !noneAgain) continue;
      if (
        !wider(shapeOf(wideAgain.exchange), shapeOf(noneAgain.exchange)) ||
        !wider(shapeOf(wideAgain.exchange), baseline)
      )
        continue;
      return {
        open,
        fields: group.map((point) => point.name),
        operator: operator.name,
        evidence: [
          { label: "match-everything", sent: wide },
          { label: "match-nothing", sent: none },
          { label: "match-everything-again", sent: wideAgain },
          { label: "match-nothing-again", sent: noneAgain },
        ],
        shapes: { baseline, wide: shapeOf(wide.exchange), narrow: shapeOf(none.exchange) },
      };
    }
  }
  return undefined;
}

function describe(shape: Shape): string {
  return `${shape.status}${shape.count > 1 ? `, ${shape.count} records` : ""}`;
}

function findingOf(hit: Hit): PointFinding {
  const key = operationKey(hit.open.point.operation);
  const place = hit.open.point.in === "query" ? "query" : "body";
  const fields = hit.fields.join(", ");
  // The finding's place is the field (or the fields together, for a sign-in that needs all of them).
  const open = { ...hit.open, point: { ...hit.open.point, name: hit.fields.join("+") } };
  return {
    open,
    defectClass: "injection",
    family: "nosql",
    title: `NoSQL operator injection in ${place} ${fields} of ${key} (${hit.operator})`,
    summary: `${key}: ${place} ${fields} sent as the operator ${hit.operator} answered ${describe(hit.shapes.wide)}, where the baseline answered ${describe(hit.shapes.baseline)} and an operator matching nothing ${describe(hit.shapes.narrow)}, twice: the value reaches a document filter as an operator.`,
    impact:
      "An attacker widens the query: signs in without the secret, or reads every record the filter was meant to narrow to one.",
    evidence: hit.evidence,
    assertions: [
      {
        kind: "same_response",
        steps: ["match-everything", "match-nothing"],
        message:
          "an operator object must never reach the filter: match-everything and match-nothing must answer alike",
      },
    ],
  };
}
