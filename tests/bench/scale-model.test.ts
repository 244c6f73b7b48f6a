import { describe, expect, it } from "vitest";
import { type ScaleMeasure, scaleModel } from "../../src/bench/scale-model.ts";

function measure(workers: number, wall: number, wait: number): ScaleMeasure {
  return {
    workers,
    targets: 4,
    finished: 4,
    failed: 0,
    wall_seconds: wall,
    targets_per_hour: (4 / wall) * 3600,
    invocations: 20,
    mean_wait_seconds: wait,
    min_wait_seconds: wait / 4,
    mean_run_seconds: 6,
    matched_findings: 12,
    load_average: 2,
  };
}

describe("the scale model", () => {
  it("extrapolates a fleet from the best configuration measured, and says what the database would carry", () => {
    const model = scaleModel([measure(1, 144, 9), measure(2, 90, 2), measure(4, 96, 0.5)], {
      targets: 200,
      machines: 20,
      coresPerMachine: 2,
    });
    // Five invocations of 6 s a target.
    expect(model.work_seconds_per_target).toBe(30);
    expect(model.best).toEqual({ workers: 2, targets_per_hour: 160 });
    expect(model.ratios).toEqual([
      { workers: 1, ratio: 1 },
      { workers: 2, ratio: 1.6 },
      { workers: 4, ratio: 1.5 },
    ]);
    expect(model.round_trip_seconds).toBe(0.13);
    // Twenty machines like the best: 3,200 targets an hour, so 200 take a sixteenth of an hour.
    expect(model.fleet.targets_per_hour).toBe(3200);
    expect(model.fleet.hours).toBe(0.06);
    // 40 invocations running, each polled 4/s (160), 4.4 invocations/s at 6 queries (27), 20 machines' idle polls at 2/s (40).
    expect(model.fleet.queries_per_second).toBe(227);
    expect(model.lines.join("\n")).toContain("200 targets on 20 machines like this one: ~3200 targets/h");
  });

  it("refuses to model a bench where no configuration finished a target", () => {
    const stalled = { ...measure(1, 1200, 0), finished: 0, failed: 4, targets_per_hour: 0 };
    expect(() => scaleModel([stalled], { targets: 200, machines: 20, coresPerMachine: 2 })).toThrow(
      /nothing to model/,
    );
  });
});
