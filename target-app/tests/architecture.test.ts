import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { APP_ROOT } from "./helpers.ts";

const ENTRY_POINTS = ["src/server.ts", "src/db/reset.ts"];

function sourceFiles(dir = "src"): string[] {
  return readdirSync(path.join(APP_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith(".ts") ? [relative] : [];
  });
}

/** Relative imports of every module, type-only imports included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles()) {
    const text = readFileSync(path.join(APP_ROOT, file), "utf8");
    const targets = [...text.matchAll(/(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"/g)].map((match) =>
      path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1]!)),
    );
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Strongly connected components with more than one module (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexes = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const result: string[][] = [];
  const visit = (node: string) => {
    indexes.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexes.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexes.get(next)!));
      }
    }
    if (low.get(node) === indexes.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) result.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexes.has(node)) visit(node);
  return result;
}

function fanIn(graph: Map<string, string[]>, file: string): number {
  return [...graph.values()].filter((targets) => targets.includes(file)).length;
}

function lines(file: string): number {
  return readFileSync(path.join(APP_ROOT, file), "utf8").split("\n").length;
}

const graph = importGraph();

describe("seeded architecture defects", () => {
  it("DEMO-38 services/projects, services/tasks and services/notifications import each other in a cycle", () => {
    expect(cycles(graph)).toEqual([
      ["src/services/notifications.ts", "src/services/projects.ts", "src/services/tasks.ts"],
    ]);
    expect(graph.get("src/services/projects.ts")).toContain("src/services/tasks.ts");
    expect(graph.get("src/services/tasks.ts")).toContain("src/services/notifications.ts");
    expect(graph.get("src/services/notifications.ts")).toContain("src/services/projects.ts");
  });

  it("DEMO-39 routes/export.ts reaches into the db layer directly", () => {
    const routesIntoDb = [...graph.entries()]
      .filter(([file]) => file.startsWith("src/routes/"))
      .filter(([, targets]) => targets.some((target) => target.startsWith("src/db/")))
      .map(([file]) => file);
    expect(routesIntoDb).toEqual(["src/routes/export.ts"]);
    expect(graph.get("src/routes/export.ts")).toContain("src/db/connection.ts");
  });

  it("DEMO-40 services/workspace.ts is far larger and more connected than any other module", () => {
    const file = "src/services/workspace.ts";
    const logic = sourceFiles().filter((other) => other !== "src/db/seed-data.ts");
    const sizes = logic.map(lines).sort((a, b) => a - b);
    const median = sizes[Math.floor(sizes.length / 2)]!;
    expect(lines(file)).toBeGreaterThan(3 * median);
    expect(fanIn(graph, file)).toBeGreaterThanOrEqual(10);
    expect(graph.get(file)!.length).toBeGreaterThanOrEqual(10);
    for (const other of logic.filter((candidate) => candidate !== file && candidate !== "src/app.ts")) {
      expect(lines(other), other).toBeLessThan(lines(file));
      expect(graph.get(other)!.length, other).toBeLessThan(graph.get(file)!.length);
    }
  });

  it("DEMO-41 one service module is imported by nothing", () => {
    // The expected file comes from the ledger so that no test source names it (a name in a string counts as a use).
    const ledger = parse(readFileSync(path.join(APP_ROOT, "defects.yaml"), "utf8")) as {
      defects: { id: string; locations: { file?: string }[] }[];
    };
    const expected = ledger.defects
      .find((defect) => defect.id === "DEMO-41")!
      .locations.map((location) => location.file);
    const unreferenced = sourceFiles().filter(
      (file) => !ENTRY_POINTS.includes(file) && fanIn(graph, file) === 0,
    );
    expect(unreferenced).toEqual(expected);
    expect(expected[0]).toMatch(/^src\/services\//);
  });
});

describe("correct code that looks suspicious", () => {
  it("DEMO-N7 db/seed-data.ts is large but is a static data table with no imports and no logic", () => {
    const file = "src/db/seed-data.ts";
    const text = readFileSync(path.join(APP_ROOT, file), "utf8");
    expect(lines(file)).toBeGreaterThan(200);
    expect(graph.get(file)).toEqual([]);
    expect(fanIn(graph, file)).toBe(1);
    expect(text).not.toMatch(/\bfunction\b|=>|\bclass\b/);
  });

  it("DEMO-N17 app.ts imports every route module because it is the composition root", () => {
    const file = "src/app.ts";
    const targets = graph.get(file)!;
    const routeModules = sourceFiles().filter(
      (other) => other.startsWith("src/routes/") && other !== "src/routes/guards.ts",
    );
    for (const route of routeModules) expect(targets).toContain(route);
    expect(fanIn(graph, file)).toBe(1);
    expect(graph.get("src/server.ts")).toEqual([file]);
    expect(lines(file)).toBeLessThan(lines("src/services/workspace.ts") / 2);
    const text = readFileSync(path.join(APP_ROOT, file), "utf8");
    expect([...text.matchAll(/^export (async )?function (\w+)/gm)].map((match) => match[2])).toEqual([
      "buildApp",
      "startApp",
    ]);
  });
});
