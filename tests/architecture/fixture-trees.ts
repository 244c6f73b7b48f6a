import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
import type { ToolResult } from "../../src/tools/result.ts";

// Two small applications written for these tests (TypeScript and Python), each with planted structural
// defects and correct look-alikes next to them. Comments in the files say which is which.

export function writeTree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-architecture-"));
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  return root;
}

function functions(prefix: string, count: number, bodyLines: number): string {
  const blocks: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const body = Array.from(
      { length: bodyLines },
      (_, line) => `  total += input.length * ${line + 1} + ${index};`,
    );
    blocks.push(
      `export function ${prefix}${index}(input: string): number {\n  let total = 0;\n${body.join("\n")}\n  return total;\n}\n`,
    );
  }
  return blocks.join("\n");
}

export function typescriptTree(): Record<string, string> {
  const files: Record<string, string> = {
    "package.json": JSON.stringify({
      name: "shop",
      type: "module",
      main: "src/legacy/compat.cjs",
      scripts: { start: "node --import tsx src/server.ts", seed: "tsx scripts/seed.ts", test: "vitest run" },
      dependencies: { fastify: "5.0.0" },
    }),
    "tsconfig.json": `{
  // comments are allowed here
  "compilerOptions": { "module": "NodeNext", "paths": { "@lib/*": ["./src/lib/*"] } },
}`,
    "vitest.config.ts": `export default { test: { include: ["tests/**/*.test.ts"] } };\n`,
    "src/types/global.d.ts": "declare const BUILD: string;\n",
    "src/server.ts": `import { app } from "./app.ts";\napp.listen();\n`,
    "src/app.ts": [
      `import fastify from "fastify";`,
      `import { orders } from "./routes/orders.ts";`,
      `import { users } from "./routes/users.ts";`,
      `import { reports } from "./routes/reports.ts";`,
      `import { everything0 } from "./services/everything.ts";`,
      // Look-alike: reached only through a dynamic import of a literal.
      `export async function metrics() { return import("./plugins/metrics.ts"); }`,
      // Look-alike: a worker script reached only through a string.
      `export const worker = new URL("./workers/runner.ts", import.meta.url);`,
      `export const app = fastify();`,
      `app.register(orders); app.register(users); app.register(reports); everything0("x");`,
    ].join("\n"),
    "src/plugins/metrics.ts": "export const metrics = 1;\n",
    "src/workers/runner.ts": "export const runner = 1;\n",
    "src/legacy/compat.cjs": `const shim = require("./shim.cjs");\nmodule.exports = shim;\n`,
    "src/legacy/shim.cjs": "module.exports = {};\n",
    "src/routes/orders.ts": `import { listOrders } from "../services/orders.js";\nexport const orders = () => listOrders();\n`,
    "src/routes/users.ts": `import { findUser } from "../services/users.ts";\nexport const users = () => findUser();\nexport interface RequestUser { id: number }\n`,
    // Planted: a route reaching the database past the services (the other routes go through services).
    "src/routes/reports.ts": `import { query } from "../db/connection.ts";\nexport const reports = () => query("select 1");\n`,
    "src/services/orders.ts": [
      `import { query } from "../db/connection.ts";`,
      `import { format } from "@lib/format";`,
      `import { bill } from "./billing.ts";`,
      `import { record } from "./audit.ts";`,
      `export function listOrders() { record(); bill(); return format(query("select * from orders")); }`,
    ].join("\n"),
    // Planted: billing and invoices import each other when they load.
    "src/services/billing.ts": `import { invoice } from "./invoices.ts";\nexport function bill() { return invoice(); }\nexport const RATE = 2;\n`,
    "src/services/invoices.ts": `import { RATE } from "./billing.ts";\nexport function invoice() { return RATE; }\n`,
    // Look-alike: users → audit is a type-only import, so users ↔ audit is no load-time cycle.
    "src/services/users.ts": `import type { AuditEntry } from "./audit.ts";\nimport type { User } from "../models/user.ts";\nimport { query } from "../db/connection.ts";\nexport function findUser(entry?: AuditEntry): User[] { return query(String(entry)) as never; }\n`,
    "src/services/audit.ts": `import { findUser } from "./users.ts";\nexport interface AuditEntry { at: string }\nexport function record() { return findUser(); }\n`,
    // Look-alike: models that name each other only as types, without `import type`: TypeScript drops both
    // imports, so there is no cycle at run time.
    "src/models/user.ts": `import { Post } from "./post.ts";\nexport interface User { id: number; posts: Post[] }\n`,
    "src/models/post.ts": `import { User } from "./user.ts";\nexport interface Post { author: User; at: typeof Date }\n`,
    // Look-alike: a type-only upward import (held, never fileable).
    "src/db/connection.ts": `import type { RequestUser } from "../routes/users.ts";\nexport function query(sql: string, user?: RequestUser) { return [sql, user]; }\n`,
    // Planted: the data layer importing a route module.
    "src/db/audit-log.ts": `import { users } from "../routes/users.ts";\nexport const log = () => users();\n`,
    // Look-alike: a seeder in the db folder using a service is tooling, not layer code.
    "src/db/seed.ts": `import { findUser } from "../services/users.ts";\nexport function seed() { return findUser(); }\n`,
    "scripts/seed.ts": `import { seed } from "../src/db/seed.ts";\nimport { log } from "../src/db/audit-log.ts";\nseed(); log();\n`,
    "src/lib/format.ts": "export function format<T>(value: T) { return value; }\n",
    // Planted: nobody imports these.
    "src/lib/legacy-report.ts": "export function legacyReport() { return 'old'; }\n",
    "src/lib/old-export.ts": `import { oldFormat } from "./old-format.ts";\nexport const oldExport = () => oldFormat();\n`,
    "src/lib/old-format.ts": "export const oldFormat = () => 'x';\n",
    // Look-alikes: generated code, a component only a story uses, a function a deployment manifest names.
    "src/__generated__/client.ts": "export const generated = 1;\n",
    "src/components/Button.tsx": "export const Button = () => null;\n",
    "src/components/Button.stories.tsx": `import { Button } from "./Button.tsx";\nexport default { component: Button };\n`,
    "serverless.yml": "functions:\n  create:\n    handler: src/functions/create.main\n",
    "src/functions/create.ts": "export const main = () => 1;\n",
    // Look-alike: used only by a test.
    "src/lib/test-only-helper.ts": "export const helper = () => 1;\n",
    "tests/helper.test.ts": `import { helper } from "../src/lib/test-only-helper.ts";\nhelper();\n`,
  };
  // Look-alike: a large table of constants that many modules read.
  const rows = Array.from(
    { length: 520 },
    (_, index) => `  { code: "C${index}", name: "Country ${index}", rate: ${index} },`,
  );
  files["src/lib/countries.ts"] = `export const COUNTRIES = [\n${rows.join("\n")}\n] as const;\n`;
  // Planted: a large module full of logic that imports ten others.
  const imports: string[] = [];
  for (let index = 0; index < 10; index += 1) {
    files[`src/lib/part${index}.ts`] =
      `import { COUNTRIES } from "./countries.ts";\nexport const part${index} = () => COUNTRIES.length + ${index};\n`;
    imports.push(`import { part${index} } from "../lib/part${index}.ts";`);
  }
  files["src/services/everything.ts"] =
    `${imports.join("\n")}\nexport const parts = [${Array.from({ length: 10 }, (_, index) => `part${index}`).join(", ")}];\n\n${functions("everything", 20, 30)}`;
  return files;
}

export function pythonTree(): Record<string, string> {
  return {
    "pyproject.toml": `[project]\nname = "inventory"\n`,
    "app/__init__.py": "",
    "app/main.py": [
      "from app.routes import items, reports, users",
      "import app.plugins",
      "",
      "def run():",
      "    return [items.get(), reports.get(), users.get()]",
      "",
      'if __name__ == "__main__":',
      "    run()",
    ].join("\n"),
    "app/routes/__init__.py": "",
    "app/routes/items.py":
      "from app.services import items as item_service\n\ndef get():\n    return item_service.price()\n\nclass ItemView:\n    pass\n",
    "app/routes/users.py": "from app.services.users import current\n\ndef get():\n    return current()\n",
    // Planted: a route reading the database directly while the others go through services.
    "app/routes/reports.py": "from app.db import session\n\ndef get():\n    return session.query()\n",
    "app/services/__init__.py": "",
    // Planted: items and pricing import each other at load time.
    "app/services/items.py":
      "from app.db import session\nfrom . import pricing\n\ndef base_price():\n    return 1\n\ndef price():\n    return pricing.total() + session.query()\n",
    "app/services/pricing.py": "from .items import base_price\n\ndef total():\n    return base_price() * 2\n",
    // Look-alike: users imports audit inside a function, so users <-> audit is no load-time cycle.
    "app/services/users.py":
      "from app.db import session\n\ndef current():\n    from app.services import audit\n    audit.note()\n    return session.query()\n",
    "app/services/audit.py": "from app.services.users import current\n\ndef note():\n    return current\n",
    "app/db/__init__.py": "",
    // Look-alike: an upward import only for type checking (held, never fileable).
    "app/db/session.py":
      "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.routes.items import ItemView\n\ndef query():\n    return 0\n",
    // Planted: the data layer importing a service.
    "app/db/models.py": "from app.services.users import current\n\nOWNER = current\n",
    "app/plugins/__init__.py":
      'import importlib\n\nfor name in ["stats"]:\n    importlib.import_module(f"app.plugins.{name}")\n',
    // Look-alike: loaded by name through importlib.
    "app/plugins/stats.py": "def stats():\n    return 1\n",
    // Planted: nobody imports it.
    "app/legacy/__init__.py": "",
    "app/legacy/old_sync.py": "def sync():\n    return 'old'\n",
    "app/helpers/__init__.py": "",
    "app/helpers/only_tests.py": "def helper():\n    return 1\n",
    "tests/test_items.py":
      "from app.helpers.only_tests import helper\nfrom app.db import models\n\ndef test_helper():\n    assert helper() == 1\n",
  };
}

export function loadedTarget(
  root: string,
  extra: Record<string, unknown> = {},
  goldenLedger?: string,
): LoadedTarget {
  const profile = TargetProfileSchema.parse({
    name: "fixture",
    source: { path: "." },
    environment: { mode: "none" },
    ...extra,
  });
  return { profile, file: path.join(root, "qaas.yaml"), root, goldenLedger };
}

/** The data of a successful tool result (a failed one fails the test with its error). */
export function dataOf<Data>(result: ToolResult): Data {
  if (!result.ok) throw new Error(`the tool failed: ${result.error}`);
  return result.data as Data;
}
