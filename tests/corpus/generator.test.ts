import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fastifyPath, flaskPath } from "../../corpus/generator/code.ts";
import { CORPUS_DIR, generateCorpus } from "../../corpus/generator/generate.ts";
import { writeScratchCorpus } from "../../corpus/harness/scratch.ts";
import { FAMILIES } from "../../corpus/model/families.ts";
import { SERVERS } from "../../corpus/model/servers.ts";
import { ALL_ROWS } from "../../corpus/tables/index.ts";
import { checkGoldenLedger } from "../../src/score/golden-ledger.ts";
import { pathsMatch } from "../../src/score/match-location.ts";
import { loadTarget } from "../../src/targets/load-target.ts";

const corpus = generateCorpus();
const scratch: string[] = [];
afterAll(() => {
  for (const folder of scratch) fs.rmSync(folder, { recursive: true, force: true });
});

describe("corpus generator", () => {
  it("is deterministic: the same tables give the same bytes", () => {
    const again = generateCorpus();
    expect([...again.files.keys()]).toEqual([...corpus.files.keys()]);
    for (const [file, content] of corpus.files) expect(again.files.get(file), file).toBe(content);
  });

  it("keeps the committed ledgers, metadata and profiles in step with the tables", () => {
    const stale: string[] = [];
    for (const [file, content] of corpus.files) {
      if (!file.startsWith("ledgers/") && !file.startsWith("targets/")) continue;
      const committed = path.join(CORPUS_DIR, file);
      if (!fs.existsSync(committed) || fs.readFileSync(committed, "utf8") !== content) stale.push(file);
    }
    for (const folder of ["ledgers", "targets"]) {
      for (const name of fs.readdirSync(path.join(CORPUS_DIR, folder))) {
        if (!corpus.files.has(`${folder}/${name}`)) stale.push(`${folder}/${name} (no longer generated)`);
      }
    }
    expect(stale, "regenerate with `npx tsx corpus/generate.ts` and commit").toEqual([]);
  });

  it("turns every table row into one operation in its server's code and one ledger entry", () => {
    const ledgers = new Map(
      corpus.models.map((model) => {
        const text = corpus.files.get(`ledgers/${model.server.name}.yaml`)!;
        return [model.server.name, checkGoldenLedger(text, model.server.name).ledger!];
      }),
    );
    for (const row of ALL_ROWS) {
      const model = corpus.models.find((candidate) => candidate.server.name === row.server)!;
      const variant = model.variants.find((candidate) => candidate.row.id === row.id);
      expect(variant, row.id).toBeDefined();
      const endpoint = variant!.built.endpoint;
      const app =
        model.server.stack === "node"
          ? corpus.files.get(`servers/${row.server}/app.mjs`)!
          : corpus.files.get(`servers/${row.server}/app.py`)!;
      // The exact route string; Flask may widen a parameter with a converter (`<path:name>`).
      const route = model.server.stack === "node" ? fastifyPath(endpoint.path) : flaskPath(endpoint.path);
      const pattern = new RegExp(
        `"${route.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/<(\w+)>/g, "<(path:)?$1>")}"`,
      );
      expect(app, `${row.id}: ${endpoint.method} ${endpoint.path} in the app`).toMatch(pattern);
      const ledger = ledgers.get(row.server)!;
      const entries = row.label === "vulnerable" ? ledger.defects : ledger.not_defects;
      const entry = entries.find((candidate) => candidate.id === row.id);
      expect(entry, `${row.id} in the ledger`).toBeDefined();
      expect(entry!.locations).toContainEqual(
        variant!.built.channel
          ? { kind: "channel", value: variant!.built.channel }
          : variant!.built.page
            ? { kind: "page", value: variant!.built.page.path }
            : { kind: "endpoint", value: `${endpoint.method} ${endpoint.path}` },
      );
    }
  });

  it("writes ledgers the golden-ledger parser accepts, with unique ids across the corpus", () => {
    const ids = new Set<string>();
    for (const model of corpus.models) {
      const file = `ledgers/${model.server.name}.yaml`;
      const { ledger, problems } = checkGoldenLedger(corpus.files.get(file)!, file);
      expect(problems, file).toEqual([]);
      expect(ledger!.target).toBe(model.server.name);
      for (const entry of [...ledger!.defects, ...ledger!.not_defects]) {
        if (!entry.id.startsWith("SUP-")) {
          expect(ids.has(entry.id), `${entry.id} twice`).toBe(false);
          ids.add(entry.id);
        }
      }
    }
  });

  it("never lets one finding's place stand for two entries of a domain (a safe twin stays reachable)", () => {
    for (const model of corpus.models) {
      const text = corpus.files.get(`ledgers/${model.server.name}.yaml`)!;
      const ledger = checkGoldenLedger(text, model.server.name).ledger!;
      const entries = [
        ...ledger.defects.map((entry) => ({ ...entry, kind: "defect" as const })),
        ...ledger.not_defects.map((entry) => ({ ...entry, class: entry.class ?? "", kind: "not" as const })),
      ].flatMap((entry) => entry.locations.map((location) => ({ entry, endpoint: location.value })));
      for (const [index, left] of entries.entries()) {
        for (const right of entries.slice(index + 1)) {
          if (left.entry.id === right.entry.id || left.entry.domain !== right.entry.domain) continue;
          // A page is a path alone; an operation is a method and a path.
          const [lm, lp] = left.endpoint.includes(" ") ? left.endpoint.split(" ") : ["PAGE", left.endpoint];
          const [rm, rp] = right.endpoint.includes(" ")
            ? right.endpoint.split(" ")
            : ["PAGE", right.endpoint];
          if (lm !== rm || !pathsMatch(lp!, rp!)) continue;
          // Only two defects of different classes may share a place (a flaw and the 5xx it causes).
          const allowed =
            left.entry.kind === "defect" &&
            right.entry.kind === "defect" &&
            left.entry.class !== right.entry.class;
          expect(allowed, `${left.entry.id} and ${right.entry.id} share ${left.endpoint}`).toBe(true);
        }
      }
    }
  });

  it("names paths neutrally: no family, label or row id in any path", () => {
    const words = [...FAMILIES.map((family) => family.name), "vuln", "safe", "inject", "sqli", "xss", "bola"];
    for (const model of corpus.models) {
      for (const variant of model.variants) {
        const pathText = variant.built.endpoint.path.toLowerCase();
        for (const word of words) expect(pathText, variant.row.id).not.toContain(word);
        expect(pathText).not.toContain(variant.row.id.toLowerCase());
      }
    }
  });

  it("seeds enough of each: 150 vulnerable and 100 safe variants, every family with a vulnerable one", () => {
    const vulnerable = ALL_ROWS.filter((row) => row.label === "vulnerable");
    expect(vulnerable.length).toBeGreaterThanOrEqual(150);
    expect(ALL_ROWS.length - vulnerable.length).toBeGreaterThanOrEqual(100);
    for (const family of FAMILIES) {
      expect(
        vulnerable.some((row) => row.family === family.name),
        family.name,
      ).toBe(true);
      expect(
        ALL_ROWS.some((row) => row.family === family.name && row.label === "safe"),
        family.name,
      ).toBe(true);
    }
    for (const server of SERVERS)
      expect(
        ALL_ROWS.some((row) => row.server === server.name),
        server.name,
      ).toBe(true);
  });

  it("writes managed profiles the target loader accepts, each naming its ledger outside the app's folder", () => {
    const root = writeScratchCorpus(corpus);
    scratch.push(root);
    for (const server of SERVERS) {
      const target = loadTarget(path.join(root, "targets", `${server.name}.yaml`));
      expect(target.profile.environment.mode).toBe("managed");
      expect(target.goldenLedger).toBe(path.join(root, "ledgers", `${server.name}.yaml`));
      expect(path.relative(target.root!, target.goldenLedger!).startsWith("..")).toBe(true);
      expect(Boolean(target.profile.api?.openapi)).toBe(server.doc !== "none");
    }
  });

  it("refuses a table whose row ids repeat", () => {
    const [first] = ALL_ROWS;
    expect(() => generateCorpus([first!, { ...first! }])).toThrow(/used twice/);
  });
});
