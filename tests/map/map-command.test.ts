import fs from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import { register } from "../../src/cli/commands/map.ts";
import { QaasError } from "../../src/errors.ts";
import type { SystemMap } from "../../src/map/system-map.ts";
import { writeTree } from "./write-tree.ts";

const map = (overrides: Partial<SystemMap>): SystemMap => ({
  map_version: 1,
  target: "shop",
  created_at: "2026-01-02T03:04:05.000Z",
  commit: "0123456789abcdef",
  base_url: "http://127.0.0.1:3000",
  openapi: { source: "openapi.yaml", version: "3.1.0", title: "Shop", document: {} },
  operations: [
    {
      method: "GET",
      path: "/items",
      security: "public",
      parameters: [],
      responses: {},
      seen_in: ["openapi", "source"],
      documented: true,
    },
    {
      method: "DELETE",
      path: "/items/{id}",
      security: "unknown",
      parameters: [],
      responses: {},
      seen_in: ["source"],
      documented: false,
    },
  ],
  routes: [
    { method: "GET", path: "/items", file: "app.js", line: 3, framework: "express" },
    { method: "DELETE", path: "/items/{id}", file: "app.js", line: 4, framework: "express" },
  ],
  pages: [
    { path: "/", status: 200, links: [], forms: [] },
    { path: "/gone", status: 404, links: [], forms: [] },
  ],
  channels: [{ path: "/ws", seen_in: ["source"] }],
  graphql: [],
  database: {
    kind: "sqlite",
    tables: [{ name: "items", columns: [], foreign_keys: [], indexes: [], checks: [] }],
  },
  ownership: [{ path: ".", owner: "@team/shop", source: "codeowners" }],
  notes: ["a note"],
  ...overrides,
});

function program(): Command {
  const root = new Command("qaas").option("--home <dir>").exitOverride();
  register(root);
  return root;
}

async function run(args: string[]): Promise<string> {
  let output = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    output += String(chunk);
    return true;
  });
  try {
    await program().parseAsync(["node", "qaas", ...args]);
  } finally {
    spy.mockRestore();
  }
  return output;
}

afterEach(() => vi.restoreAllMocks());

describe("qaas map", () => {
  it("summarises the highest saved version of the target's map", async () => {
    const home = writeTree({
      "system-map/shop/v1.json": JSON.stringify(map({ operations: [] })),
      "system-map/shop/v10.json": JSON.stringify(map({})),
      "system-map/shop/v2.json": JSON.stringify(map({ routes: [] })),
    });
    const text = await run(["--home", home, "map", "--target", "shop"]);
    expect(text).toContain("System map of shop: v10 (2026-01-02T03:04:05.000Z, commit 0123456789)");
    expect(text).toContain("operations  2: 1 documented, 1 undocumented (public 1, unknown 1)");
    expect(text).toContain("undocumented: DELETE /items/{id}");
    expect(text).toContain("routes      2 in source: express 2");
    expect(text).toContain("pages       2, broken: /gone");
    expect(text).toContain("tables      1 (sqlite): items");

    const json = JSON.parse(await run(["--home", home, "map", "--target", "shop", "--json"]));
    expect(json).toMatchObject({
      version: 10,
      file: path.join(home, "system-map/shop/v10.json"),
      operations: { total: 2, documented: 1, undocumented: 1 },
      routes: { total: 2, by_framework: { express: 2 } },
      channels: ["/ws"],
      owners: { entries: 1, owners: ["@team/shop"], sources: ["codeowners"] },
    });
  });

  it("says how to produce a map when none exists, and rejects a corrupt one by name", async () => {
    const home = writeTree({});
    const missing = run(["--home", home, "map", "--target", "shop"]);
    await expect(missing).rejects.toBeInstanceOf(QaasError);
    await expect(run(["--home", home, "map", "--target", "shop"])).rejects.toThrow(
      /qaas run --mode nightly --target shop.*--agent MAPPER/,
    );
    fs.mkdirSync(path.join(home, "system-map/shop"), { recursive: true });
    fs.writeFileSync(
      path.join(home, "system-map/shop/v1.json"),
      JSON.stringify({ ...map({}), operations: "nope" }),
    );
    await expect(run(["--home", home, "map", "--target", "shop"])).rejects.toThrow(
      /v1\.json is invalid at operations/,
    );
  });
});
