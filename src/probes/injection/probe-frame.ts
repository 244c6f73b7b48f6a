import type { Operation } from "../../map/system-map.ts";
import { selectOperations } from "../api/operation-index.ts";
import { isServerError } from "../api/probe-support.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import type { OpenPoint } from "./point-sender.ts";
import { openPoint } from "./point-sender.ts";
import { injectionPoints, mayProbe } from "./probe-points.ts";

// The loop every point-based injection probe shares: the points of the map (one operation or all), the
// ones this technique tests, a baseline request for each as the least privileged user that reaches it,
// then the technique, a few points at a time, until done or the budget is spent.

export interface PointProbeOptions {
  operation?: string;
  user?: string;
}

export interface PointProbeStats {
  points: number;
  selected: number;
  tested: number;
  /** No baseline could be sent (refused write, unreachable operation, every user denied). */
  unreachable: number;
  budget_exhausted: boolean;
  [extra: string]: unknown;
}

export async function probePoints<Hit>(
  run: ProbeRun,
  options: PointProbeOptions,
  technique: {
    select(point: InputPoint): boolean;
    test(open: OpenPoint): Promise<Hit | undefined>;
    /** Also test a point whose baseline answered 5xx (default false: the point is broken already). */
    acceptServerError?: boolean;
    concurrency?: number;
  },
): Promise<{ hits: Hit[]; stats: PointProbeStats }> {
  const factory = new ResourceFactory(run);
  const chosen: Set<Operation> | undefined = options.operation
    ? new Set(selectOperations(run.map, options.operation))
    : undefined;
  const points = injectionPoints(run.map, { includeWrites: run.target.writesAllowed, operations: chosen });
  const selected = points.filter((point) => mayProbe(run.target, point.operation) && technique.select(point));
  const stats: PointProbeStats = {
    points: points.length,
    selected: selected.length,
    tested: 0,
    unreachable: 0,
    budget_exhausted: false,
  };
  const hits: Hit[] = [];
  stats.budget_exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    await mapConcurrent(selected, technique.concurrency ?? 4, async (point) => {
      const unusable = (open: OpenPoint | undefined) =>
        !open || (!technique.acceptServerError && isServerError(open.exchange));
      let open = await openPoint(run, factory, point, users);
      // Once more: under load a baseline times out or fails transiently, and the point would go untested.
      if (unusable(open)) open = await openPoint(run, factory, point, users);
      if (!open || unusable(open)) {
        stats.unreachable += 1;
        return;
      }
      stats.tested += 1;
      const hit = await technique.test(open);
      if (hit) hits.push(hit);
    });
  });
  return { hits, stats };
}
