import { candidateUsers, sendAsRightRole } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, clonePrepared } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { reseed } from "../api/value-tools.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { InputPoint } from "./input-points.ts";

export interface PointBaseline {
  point: InputPoint;
  user: string | undefined;
  prepared: PreparedRequest;
  exchange: HttpExchange;
  /** The value the point carries in the baseline request; payloads are appended to it. */
  value: string;
}

/** A request that reaches the point as the least privileged user the operation accepts. */
export async function pointBaseline(
  run: ProbeRun,
  factory: ResourceFactory,
  point: InputPoint,
  users: readonly ProfileUser[],
): Promise<PointBaseline | undefined> {
  const result = await sendAsRightRole(run, candidateUsers(users), async (user) => {
    const located = await factory.pathValuesFor(point.operation, user);
    if (!located) return undefined;
    const prepared = buildRequest(point.operation, { seed: uniqueSeed(), pathValues: located.values });
    const current = pointValue(prepared, point);
    return withValue(prepared, point, current ?? (point.numeric ? "1" : "qaas"));
  });
  if (!result) return undefined;
  return {
    point,
    user: result.user,
    prepared: result.prepared,
    exchange: result.exchange,
    value: pointValue(result.prepared, point) ?? "",
  };
}

export function pointValue(prepared: PreparedRequest, point: InputPoint): string | undefined {
  if (point.in === "query") return prepared.query[point.name];
  if (point.in === "path") return prepared.pathValues[point.name];
  let current: unknown = prepared.body;
  for (const part of point.name.split("."))
    current = (current as Record<string, unknown> | undefined)?.[part];
  return current === undefined || current === null ? undefined : String(current);
}

/** A copy of the request with the point set to `value`; body writes get a fresh seed so unique fields stay unique. */
export function withValue(prepared: PreparedRequest, point: InputPoint, value: string): PreparedRequest {
  const copy = clonePrepared(prepared);
  if (point.in === "body" && prepared.seed) {
    const seed = uniqueSeed();
    copy.body = reseed(copy.body, prepared.seed, seed);
    copy.seed = seed;
  }
  if (point.in === "query") copy.query[point.name] = value;
  else if (point.in === "path") copy.pathValues[point.name] = value;
  else {
    const body = (
      copy.body && typeof copy.body === "object" && !Array.isArray(copy.body) ? copy.body : {}
    ) as Record<string, unknown>;
    const parts = point.name.split(".");
    let holder = body;
    for (const part of parts.slice(0, -1)) {
      holder[part] =
        holder[part] && typeof holder[part] === "object"
          ? { ...(holder[part] as Record<string, unknown>) }
          : {};
      holder = holder[part] as Record<string, unknown>;
    }
    holder[parts[parts.length - 1]!] = value;
    copy.body = body;
  }
  return copy;
}
