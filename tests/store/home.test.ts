import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveHome } from "../../src/store/home.ts";

describe("resolveHome", () => {
  it("prefers --home, then QAAS_HOME, then ./.qaas, always absolute", () => {
    expect(resolveHome("/tmp/option", { QAAS_HOME: "/tmp/env" })).toBe("/tmp/option");
    expect(resolveHome("relative", { QAAS_HOME: "/tmp/env" })).toBe(path.resolve("relative"));
    expect(resolveHome(undefined, { QAAS_HOME: "/tmp/env" })).toBe("/tmp/env");
    expect(resolveHome(undefined, { QAAS_HOME: "" })).toBe(path.join(process.cwd(), ".qaas"));
    expect(resolveHome(undefined, {})).toBe(path.join(process.cwd(), ".qaas"));
  });
});
