import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { codeTools } from "../../src/tools/servers/code-server.ts";
import type { ToolDefinition } from "../../src/tools/tool.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { dataOf, loadedTarget, pythonTree, typescriptTree, writeTree } from "./fixture-trees.ts";

const tool = (name: string): ToolDefinition => codeTools.find((candidate) => candidate.name === name)!;

async function candidates(
  name: string,
  context: FakeRunContext,
  input: unknown = {},
): Promise<EnvelopeDraft[]> {
  const drafts = dataOf<{ candidates: EnvelopeDraft[] }>(
    await callTool(tool(name), input, context),
  ).candidates;
  for (const draft of drafts) {
    expect(EnvelopeDraftSchema.safeParse(draft).success).toBe(true);
    const uris = draft.evidence.map((item) => item.uri!);
    expect(uris.length).toBeGreaterThanOrEqual(2);
    for (const uri of uris) {
      const file = path.join(context.artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
      expect(fs.existsSync(file)).toBe(true);
    }
  }
  return drafts;
}

/** `file [related…] confidence` for whole-list assertions. */
const shape = (drafts: EnvelopeDraft[]) =>
  drafts.map((draft) => ({
    file: draft.location.value,
    related: (draft.location.related ?? []).map((place) => place.value),
    fileable: draft.confidence >= 0.7,
  }));

describe.each([
  ["TypeScript", typescriptTree],
  ["Python", pythonTree],
])("structural checks on a %s application", (language, tree) => {
  let context: FakeRunContext;
  beforeAll(() => {
    context = fakeRunContext({ target: loadedTarget(writeTree(tree())) });
  });

  it("builds the graph once and stores it as an artifact", async () => {
    const data = dataOf<{ artifact: string; stats: { modules: number; unresolved: number } }>(
      await callTool(tool("import_graph"), {}, context),
    );
    expect(data.artifact).toBe("artifact://run-test/architecture/import-graph.json");
    expect(data.stats.unresolved).toBe(0);
    expect(data.stats.modules).toBeGreaterThan(15);
    const again = await callTool(tool("import_graph"), {}, context);
    expect(dataOf<{ stats: { build_ms: number } }>(again).stats.build_ms).toBe(0);
  });

  it("reports the planted load-time cycle and not the type-only or deferred one", async () => {
    const drafts = await candidates("find_cycles", context);
    const expected =
      language === "TypeScript"
        ? { file: "src/services/billing.ts", related: ["src/services/invoices.ts"], fileable: true }
        : { file: "app/services/items.py", related: ["app/services/pricing.py"], fileable: true };
    expect(shape(drafts)).toEqual([expected]);
    expect(drafts[0]!.defect_class).toBe("circular-dependency");
    expect(drafts[0]!.dedupe?.discriminator).toBe([expected.file, ...expected.related].join("|"));
    expect(drafts[0]!.reproduction.steps[0]).toMatch(/imports/);
  });

  it("reports the upward import and the bypassed layer, holds the type-only import, spares the seeder", async () => {
    const drafts = await candidates("check_layering", context);
    const expected =
      language === "TypeScript"
        ? [
            { file: "src/db/audit-log.ts", related: ["src/routes/users.ts"], fileable: true },
            { file: "src/db/connection.ts", related: ["src/routes/users.ts"], fileable: false },
            { file: "src/routes/reports.ts", related: ["src/db/connection.ts"], fileable: true },
          ]
        : [
            { file: "app/db/models.py", related: ["app/services/users.py"], fileable: true },
            { file: "app/db/session.py", related: ["app/routes/items.py"], fileable: false },
            { file: "app/routes/reports.py", related: ["app/db/session.py"], fileable: true },
          ];
    expect(shape(drafts)).toEqual(expected);
  });

  it("flags the large coupled module full of logic, not the large table of constants", async () => {
    const drafts = await candidates("find_god_modules", context);
    expect(shape(drafts)).toEqual(
      language === "TypeScript" ? [{ file: "src/services/everything.ts", related: [], fileable: true }] : [],
    );
  });

  it("finds unreachable modules, sparing what a dynamic import, a string, a loader or a test reaches", async () => {
    const drafts = await candidates("find_dead_code", context);
    expect(shape(drafts)).toEqual(
      language === "TypeScript"
        ? [
            { file: "src/lib/legacy-report.ts", related: [], fileable: true },
            { file: "src/lib/old-export.ts", related: ["src/lib/old-format.ts"], fileable: true },
          ]
        : [{ file: "app/legacy/old_sync.py", related: [], fileable: true }],
    );
  });
});

describe("structural checks on a healthy tree", () => {
  it("answers no candidate at all for code with none of the defects", async () => {
    const root = writeTree({
      "package.json": JSON.stringify({ name: "clean", scripts: { start: "node src/index.js" } }),
      "src/index.js": `const { handle } = require("./routes/items.js");\nhandle();\n`,
      "src/routes/items.js": `const { list } = require("../services/items.js");\nexports.handle = () => list();\n`,
      "src/services/items.js": `const { rows } = require("../db/items.js");\nexports.list = () => rows();\n`,
      "src/db/items.js": "exports.rows = () => [];\n",
      "eslint.config.js": "module.exports = [];\n",
      // A library copied into the repository: its cycle and unused modules are not the application's.
      "_vendor/lib/a.js": `require("./b.js");\nexports.a = 1;\n`,
      "_vendor/lib/b.js": `require("./a.js");\nexports.b = 2;\n`,
      "third_party/unused.js": "exports.unused = true;\n",
    });
    const context = fakeRunContext({ target: loadedTarget(root) });
    for (const name of ["find_cycles", "check_layering", "find_god_modules", "find_dead_code"]) {
      expect(await candidates(name, context)).toEqual([]);
    }
  });

  it("counts the files the profile's start and test commands run as reached (preloads, scripts)", async () => {
    const root = writeTree({
      "package.json": JSON.stringify({ name: "shop", scripts: { start: "node bin/www" } }),
      "bin/www": `require("../app.js");\n`,
      "app.js": "module.exports = {};\n",
      "_run/loopback.js": "module.exports = {};\n",
      "checks/smoke.js": "module.exports = {};\n",
      "lib/unused.js": "module.exports = {};\n",
    });
    const environment = {
      mode: "managed",
      base_url: "http://127.0.0.1:3999",
      start: { command: "node -r ./_run/loopback.js bin/www" },
    };
    const context = fakeRunContext({
      target: loadedTarget(root, { environment, tests: { command: "node --test checks/smoke.js" } }),
    });
    expect(shape(await candidates("find_dead_code", context))).toEqual([
      { file: "lib/unused.js", related: [], fileable: true },
    ]);
  });

  it("judges declared layers as declared: skipping allowed unless strict, upward never", async () => {
    const root = writeTree({
      "main.py": 'from web import handlers\nif __name__ == "__main__":\n    handlers.run()\n',
      "web/__init__.py": "",
      "web/handlers.py":
        "from core import logic\nfrom store import tables\n\ndef run():\n    return logic.go(), tables.rows()\n",
      "core/__init__.py": "",
      "core/logic.py": "from store import tables\n\ndef go():\n    return tables.rows()\n",
      "store/__init__.py": "",
      "store/tables.py": "def rows():\n    return []\n",
    });
    const layers = [
      { name: "web", paths: ["web"] },
      { name: "core", paths: ["core/**"] },
      { name: "store", paths: ["store"] },
    ];
    const context = fakeRunContext({ target: loadedTarget(root, { layers }) });
    expect(await candidates("check_layering", context)).toEqual([]);
    const strict = await candidates("check_layering", context, { strict: true });
    expect(shape(strict)).toEqual([
      { file: "web/handlers.py", related: ["store/tables.py"], fileable: true },
    ]);
    expect(strict[0]!.confidence).toBe(0.9);
  });
});
