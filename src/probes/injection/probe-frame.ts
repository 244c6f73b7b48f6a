import type { Operation } from "../../map/system-map.ts";
import { selectOperations, updatesCaller } from "../api/operation-index.ts";
import { isServerError } from "../api/probe-support.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import { sendersOf } from "../auth/run-accounts.ts";
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

type PointTest<Hit> = (open: OpenPoint) => Promise<Hit | undefined>;

export type PointTechnique<Hit> = {
  select(point: InputPoint): boolean;
  /** Points the technique takes beside the map's typed-in inputs (a multipart body's file parts). */
  extraPoints?: readonly InputPoint[];
  /** Also test a point whose baseline answered 5xx (default false: the point is broken already). */
  acceptServerError?: boolean;
  concurrency?: number;
} & (
  | { test: PointTest<Hit> }
  | {
      /**
       * The technique, cheapest and likeliest first: every point gets the first stage before any point
       * gets the second, so when the shared budget runs out the likely shapes have been tried everywhere
       * rather than every shape on the first points.
       */
      stages: ReadonlyArray<PointTest<Hit>>;
    }
);

export async function probePoints<Hit>(
  run: ProbeRun,
  options: PointProbeOptions,
  technique: PointTechnique<Hit>,
): Promise<{ hits: Hit[]; stats: PointProbeStats }> {
  const factory = new ResourceFactory(run);
  const chosen: Set<Operation> | undefined = options.operation
    ? new Set(selectOperations(run.map, options.operation))
    : undefined;
  const points = injectionPoints(run.map, {
    includeWrites: run.target.writesAllowed,
    operations: chosen,
    callerUpdates: true,
  });
  const extra = (technique.extraPoints ?? []).filter((point) => !chosen || chosen.has(point.operation));
  // An update of the caller itself is sent only by the run's own account (see sendersOf).
  const selected = [...points, ...extra].filter(
    (point) =>
      mayProbe(run.target, point.operation, { byOwnAccount: updatesCaller(point.operation) }) &&
      technique.select(point),
  );
  const stats: PointProbeStats = {
    points: points.length,
    selected: selected.length,
    tested: 0,
    unreachable: 0,
    budget_exhausted: false,
  };
  const hits: Hit[] = [];
  const concurrency = technique.concurrency ?? 4;
  stats.budget_exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    const opened: OpenPoint[] = [];
    const stages = "stages" in technique ? technique.stages : [technique.test];
    await mapConcurrent(selected, concurrency, async (point) => {
      const unusable = (open: OpenPoint | undefined) =>
        !open || (!technique.acceptServerError && isServerError(open.exchange));
      const senders = await sendersOf(run, point.operation, users);
      if (!senders) {
        stats.unreachable += 1;
        return;
      }
      let open = await openPoint(run, factory, point, senders);
      // Once more: under load a baseline times out or fails transiently, and the point would go untested.
      if (unusable(open)) open = await openPoint(run, factory, point, senders);
      if (!open || unusable(open)) {
        stats.unreachable += 1;
        return;
      }
      stats.tested += 1;
      // A single-stage technique runs at once, beside the other baselines; staged ones wait for them all.
      if (stages.length === 1) {
        const hit = await stages[0]!(open);
        if (hit) hits.push(hit);
      } else opened.push(open);
    });
    const found = new Set<OpenPoint>();
    for (const stage of stages.length > 1 ? stages : []) {
      await mapConcurrent(
        opened.filter((open) => !found.has(open)),
        concurrency,
        async (open) => {
          const hit = await stage(open);
          if (!hit) return;
          found.add(open);
          hits.push(hit);
        },
      );
    }
  });
  return { hits, stats };
}
