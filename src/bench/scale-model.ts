import { round } from "./bench-numbers.ts";

// What limits queue mode's throughput, from what bench:scale measured on one machine, and what it predicts
// for a fleet. The model is deliberately plain: a nightly's agents are CPU-bound on a small machine, so a
// machine finishes about as many targets per hour as its best measured configuration did; what could stop
// a fleet from adding machines up is the queue (round trips per invocation), its database (queries per
// second) and the targets themselves (each capped by its profile's concurrency).

export interface ScaleMeasure {
  workers: number;
  targets: number;
  finished: number;
  failed: number;
  wall_seconds: number;
  targets_per_hour: number;
  invocations: number;
  /** Mean seconds an invocation waited in the queue before a worker took it. */
  mean_wait_seconds: number;
  /** The shortest such wait: what the queue itself costs when a worker is free. */
  min_wait_seconds: number;
  /** Mean seconds an invocation ran on its worker. */
  mean_run_seconds: number;
  matched_findings: number;
  load_average: number;
}

export interface Fleet {
  targets: number;
  machines: number;
  coresPerMachine: number;
}

/** A coordinator asks after each invocation it waits on this often (queue-dispatcher.ts). */
const COORDINATOR_POLLS_PER_SECOND = 4;
/** An idle worker asks for a job this often (worker.ts). */
const IDLE_WORKER_POLLS_PER_SECOND = 2;
/** Queries a queued invocation costs besides the polls: send, adopt check, fetch, complete, ledger rows. */
const QUERIES_PER_INVOCATION = 6;
/** Simple queries per second one modest PostgreSQL server answers without strain. */
const DATABASE_QUERIES_PER_SECOND = 5000;

export interface ScaleModel {
  /** Worker-seconds of agent work one target takes. */
  work_seconds_per_target: number;
  /** The best configuration measured here. */
  best: { workers: number; targets_per_hour: number };
  /** Targets per hour at each worker count over one worker's. */
  ratios: Array<{ workers: number; ratio: number }>;
  /** The queue's own cost per invocation: the shortest wait measured (a worker was free). */
  round_trip_seconds: number;
  fleet: Fleet & {
    targets_per_hour: number;
    hours: number;
    queries_per_second: number;
    database_share: number;
  };
  lines: string[];
}

export function scaleModel(measures: readonly ScaleMeasure[], fleet: Fleet): ScaleModel {
  const finished = measures.filter((measure) => measure.finished > 0);
  if (finished.length === 0) throw new Error("no configuration finished a target: nothing to model");
  const base = finished[0]!;
  const best = finished.reduce((left, right) =>
    right.targets_per_hour > left.targets_per_hour ? right : left,
  );
  const invocationsPerTarget = base.invocations / base.finished;
  const workSeconds = invocationsPerTarget * base.mean_run_seconds;
  const roundTrip = Math.min(...finished.map((measure) => measure.min_wait_seconds));
  const fleetRate = best.targets_per_hour * fleet.machines;
  const running = best.workers * fleet.machines;
  const invocationsPerSecond = (fleetRate * invocationsPerTarget) / 3600;
  const queries =
    running * COORDINATOR_POLLS_PER_SECOND +
    invocationsPerSecond * QUERIES_PER_INVOCATION +
    fleet.machines * IDLE_WORKER_POLLS_PER_SECOND;
  const model: Omit<ScaleModel, "lines"> = {
    work_seconds_per_target: round(workSeconds),
    best: { workers: best.workers, targets_per_hour: best.targets_per_hour },
    ratios: finished.map((measure) => ({
      workers: measure.workers,
      ratio: round(measure.targets_per_hour / base.targets_per_hour),
    })),
    round_trip_seconds: round(roundTrip),
    fleet: {
      ...fleet,
      targets_per_hour: round(fleetRate),
      hours: round(fleet.targets / fleetRate),
      queries_per_second: Math.round(queries),
      database_share: round(queries / DATABASE_QUERIES_PER_SECOND),
    },
  };
  return { ...model, lines: describe(model, invocationsPerTarget, base.mean_run_seconds) };
}

function describe(model: Omit<ScaleModel, "lines">, invocations: number, run: number): string[] {
  const { fleet } = model;
  return [
    `model: a target takes ${model.work_seconds_per_target} worker-seconds (${round(invocations)} invocations of ${round(run)} s);`,
    `  this ${fleet.coresPerMachine}-core machine did best with ${model.best.workers} worker(s), ${model.best.targets_per_hour} targets/h; ratios ${model.ratios.map((entry) => `${entry.workers}w ${entry.ratio.toFixed(2)}`).join(", ")}`,
    "  (past the cores, workers share the CPU that the agents, Chromium and the targets need: more wait, none finish sooner)",
    `  queue round trip: ${model.round_trip_seconds} s an invocation (the shortest wait, a worker free), ${percent(model.round_trip_seconds / Math.max(run, 0.001))} of its run`,
    `  ${fleet.targets} targets on ${fleet.machines} machines like this one: ~${fleet.targets_per_hour} targets/h, ~${fleet.hours} h,`,
    `  if the targets are separate services (each one's own cap bounds only its own run) and one coordinator per machine drives its runs;`,
    `  the database then answers ~${fleet.queries_per_second} queries/s (coordinator polls, worker polls, job rows), ${percent(fleet.database_share)} of what one modest PostgreSQL serves`,
  ];
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}
