import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { measureStaticInventory, writeSyntheticRepository } from "../../src/bench/inventory-bench.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-inventory-bench-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("the inventory benchmark's generated repository", () => {
  it("is read back route for route, at the mounted prefixes, with the size it was asked for", async () => {
    const declared = writeSyntheticRepository(root, 2_000);
    const measure = await measureStaticInventory(root);
    expect(measure.lines).toBeGreaterThanOrEqual(2_000);
    expect(measure.operations).toBe(declared);
    expect(measure.prefixed).toBe(declared);
    expect(measure.by_source).toEqual({ source: measure.operations });
  });
});
