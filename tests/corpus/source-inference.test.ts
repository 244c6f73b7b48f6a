import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { generateCorpus } from "../../corpus/generator/generate.ts";
import type { Route } from "../../src/map/system-map.ts";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";

// The corpus servers carry their own documents: what qaas reads out of their source alone (as it must on
// an application without one) has to agree with them. A field typed wrongly from source makes every
// request built from the map be refused before it reaches the code behind it (a `title.length > 80`
// once typed `title` as a number). Form bodies are left out: their values are strings on the wire.

type Schema = { type?: string; properties?: Record<string, Schema>; $ref?: string };

const corpus = generateCorpus();
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function writeServer(name: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-corpus-source-"));
  roots.push(root);
  const prefix = `servers/${name}/`;
  for (const [file, content] of corpus.files) {
    if (!file.startsWith(prefix)) continue;
    const target = path.join(root, file.slice(prefix.length));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content);
  }
  return root;
}

function disagreements(name: string): { compared: number; differing: string[] } {
  const root = writeServer(name);
  const document = YAML.parse(fs.readFileSync(path.join(root, "openapi.yaml"), "utf8"));
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref ? document.components.schemas[schema.$ref.split("/").pop()!] : schema;
  let compared = 0;
  const differing: string[] = [];
  for (const route of scanSourceRoutes(root).routes as Route[]) {
    const operation = document.paths?.[route.path]?.[route.method.toLowerCase()];
    const documented = resolve(operation?.requestBody?.content?.["application/json"]?.schema);
    const inferred = route.request_body?.schema as Schema | undefined;
    if (!documented?.properties || !inferred?.properties) continue;
    for (const [field, schema] of Object.entries(documented.properties)) {
      const want = resolve(schema)?.type;
      const got = inferred.properties[field]?.type;
      if (!want || !got) continue;
      compared += 1;
      const numeric = ["integer", "number"];
      if (got !== want && !(numeric.includes(got) && numeric.includes(want)))
        differing.push(`${route.method} ${route.path} ${field}: documented ${want}, read as ${got}`);
    }
  }
  return { compared, differing };
}

describe("what qaas reads from a corpus server's source agrees with its document", () => {
  it.each(corpus.models.map((model) => model.server.name).filter((name) => !name.endsWith("nodoc")))(
    "%s: JSON body fields",
    (name) => {
      const { compared, differing } = disagreements(name);
      expect(compared).toBeGreaterThan(100);
      expect(differing).toEqual([]);
    },
    60_000,
  );
});
