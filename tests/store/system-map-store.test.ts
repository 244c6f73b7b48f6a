import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SystemMap } from "../../src/map/system-map.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { readPinnedMap, SystemMapStore } from "../../src/store/system-map-store.ts";
import { sampleSystemMap } from "../support/sample-map.ts";

const temporaryHome = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-maps-"));

const sampleMap = sampleSystemMap;

describe("SystemMapStore", () => {
  it("saves immutable numbered versions and loads them back", () => {
    const home = temporaryHome();
    const maps = new SystemMapStore(home);
    expect(maps.latest("shop")).toBeUndefined();
    const first = maps.save(sampleMap());
    const second = maps.save(sampleMap({ commit: "def456" }));
    expect(first).toEqual({ version: 1, path: path.join(home, "system-map", "shop", "v1.json") });
    expect(second.version).toBe(2);
    expect(maps.versions("shop")).toEqual([1, 2]);
    expect(maps.load("shop", 1).commit).toBe("abc123");
    expect(maps.latest("shop")).toMatchObject({ version: 2, map: { commit: "def456" } });
    expect(maps.save(sampleMap({ target: "blog" })).version).toBe(1);
  });

  it("refuses an invalid map with the field path, and names saved versions when one is missing", () => {
    const maps = new SystemMapStore(temporaryHome());
    expect(() => maps.save({ ...sampleMap(), routes: [{ method: "GET" }] } as unknown as SystemMap)).toThrow(
      expect.objectContaining({ code: "MAP_INVALID", message: expect.stringContaining("routes.0.path") }),
    );
    maps.save(sampleMap());
    expect(() => maps.load("shop", 7)).toThrow(
      expect.objectContaining({
        code: "MAP_VERSION_NOT_FOUND",
        message: expect.stringContaining("saved: v1"),
      }),
    );
    expect(() => maps.versions("../etc")).toThrow(expect.objectContaining({ code: "MAP_TARGET_INVALID" }));
  });

  it("keeps what a run pinned unchanged when a newer version is saved", () => {
    const home = temporaryHome();
    const maps = new SystemMapStore(home);
    const run = RunStore.create(home, { mode: "nightly", target: "shop" });
    expect(maps.loadPinned(run)).toBeUndefined();
    maps.save(sampleMap());
    maps.pin(run, "shop", 1);
    const before = maps.loadPinned(run);

    maps.save(sampleMap({ commit: "newer", routes: [] }));
    expect(maps.loadPinned(run)).toEqual(before);
    expect(before?.commit).toBe("abc123");
    expect(readPinnedMap(RunStore.open(home, run.runId))).toMatchObject({ target: "shop", version: 1 });
    // v1 itself was not rewritten either.
    expect(maps.load("shop", 1)).toEqual(before);
  });

  it("never overwrites an existing version file", () => {
    const home = temporaryHome();
    const maps = new SystemMapStore(home);
    maps.save(sampleMap());
    const file = path.join(home, "system-map", "shop", "v1.json");
    const original = fs.readFileSync(file, "utf8");
    // A stray file with a higher number is respected, not replaced.
    fs.writeFileSync(
      path.join(home, "system-map", "shop", "v2.json"),
      JSON.stringify(sampleMap({ commit: "x" })),
    );
    expect(maps.save(sampleMap({ commit: "y" })).version).toBe(3);
    expect(fs.readFileSync(file, "utf8")).toBe(original);
  });
});
