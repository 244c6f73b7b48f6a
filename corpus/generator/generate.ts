import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { familyOf } from "../model/families.ts";
import type { Row } from "../model/row.ts";
import { type CorpusServer, SERVERS } from "../model/servers.ts";
import { ALL_ROWS } from "../tables/index.ts";
import { pyName } from "./code.ts";
import { buildMeta, emitLedger, type ServerMeta } from "./emit-ledger.ts";
import { emitNodeApp } from "./emit-node.ts";
import { emitOpenApi } from "./emit-openapi.ts";
import { emitProfile, emitSecrets, SECRETS_FILE } from "./emit-profile.ts";
import { emitPythonApp } from "./emit-python.ts";
import { placeholderFor } from "./endpoint.ts";
import { buildRow } from "./families/index.ts";
import { siteHome } from "./families/ui-page.ts";
import { Namer } from "./naming.ts";
import { baseOperations } from "./server-base.ts";
import { endpointKey, type OracleCase, type ServerModel, variantLocation } from "./server-model.ts";

// Rows in, corpus out: every server's app, document, ledger, metadata and profile, as a map of paths
// (relative to corpus/) to contents. Deterministic: the same tables give the same bytes.

export const CORPUS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNTIME = path.join(CORPUS_DIR, "runtime");

export interface GeneratedCorpus {
  files: Map<string, string>;
  models: ServerModel[];
  metas: ServerMeta[];
  cases: OracleCase[];
}

export function generateCorpus(rows: readonly Row[] = ALL_ROWS): GeneratedCorpus {
  checkRows(rows);
  const namer = new Namer();
  const files = new Map<string, string>();
  const models: ServerModel[] = [];
  const metas: ServerMeta[] = [];
  const cases: OracleCase[] = [];
  for (const server of SERVERS) {
    const model = buildServer(
      server,
      rows.filter((row) => row.server === server.name),
      namer,
    );
    models.push(model);
    const meta = buildMeta(model);
    metas.push(meta);
    for (const variant of model.variants) {
      cases.push({
        server,
        row: variant.row,
        location: variant.location,
        oracle: variant.built.oracle,
        alone: variant.built.alone === true,
      });
    }
    const folder = `servers/${server.name}`;
    if (server.stack === "node") {
      files.set(`${folder}/app.mjs`, emitNodeApp(model));
      for (const file of ["support.mjs", "database.mjs", "realtime.mjs"])
        files.set(`${folder}/lib/${file}`, fs.readFileSync(path.join(RUNTIME, "node", file), "utf8"));
      files.set(`${folder}/package.json`, nodePackage(server));
    } else {
      files.set(`${folder}/app.py`, emitPythonApp(model));
      files.set(`${folder}/lib/__init__.py`, "");
      for (const file of ["support.py", "database.py"])
        files.set(`${folder}/lib/${file}`, fs.readFileSync(path.join(RUNTIME, "python", file), "utf8"));
    }
    const document = emitOpenApi(model);
    if (document) files.set(`${folder}/openapi.yaml`, document);
    for (const [file, content] of Object.entries(model.files)) files.set(`${folder}/${file}`, content);
    files.set(`ledgers/${server.name}.yaml`, emitLedger(model, meta));
    files.set(`ledgers/${server.name}.variants.json`, `${JSON.stringify(meta, null, 2)}\n`);
    files.set(`targets/${server.name}.yaml`, emitProfile(server));
  }
  files.set(`targets/${SECRETS_FILE}`, emitSecrets());
  return { files, models, metas, cases };
}

function buildServer(server: CorpusServer, rows: readonly Row[], namer: Namer): ServerModel {
  const model: ServerModel = {
    server,
    variants: [],
    support: baseOperations(server),
    records: [],
    tables: [],
    files: {},
    csrfExempt: [],
    unlinkedPaths: [],
  };
  const ph = placeholderFor(server);
  const taken = new Map<string, string>();
  const claim = (key: string, owner: string) => {
    const earlier = taken.get(key);
    if (earlier) throw new Error(`${server.name}: ${key} is claimed by both ${earlier} and ${owner}`);
    taken.set(key, owner);
  };
  for (const op of model.support) claim(endpointKey(op.endpoint), op.id);
  for (const row of rows) {
    const place = namer.place(server, row.id);
    const built = buildRow(row, { server, place, ph });
    const family = familyOf(row.family);
    const documented =
      server.doc === "full" ||
      (server.doc === "partial" &&
        (built.endpoint.alwaysDocumented === true || family.domain === "api" || coin(row.id)));
    claim(variantLocation(built), row.id);
    for (const extra of built.alsoAt ?? []) claim(endpointKey(extra), row.id);
    model.variants.push({
      row,
      family: row.family,
      built,
      location: variantLocation(built),
      documented,
    });
    if (built.channel || built.page) {
      // The write that causes a channel's events, the GET that serves a page: supporting operations.
      const id = `SUP-${row.id}-0`;
      claim(endpointKey(built.endpoint), id);
      model.support.push({
        id,
        endpoint: built.endpoint,
        variantId: row.id,
        documented: server.doc !== "none",
      });
    }
    for (const [index, endpoint] of (built.support ?? []).entries()) {
      const id = `SUP-${row.id}-${index + 1}`;
      claim(endpointKey(endpoint), id);
      model.support.push({ id, endpoint, variantId: row.id, documented: server.doc !== "none" });
    }
    model.records.push(...(built.records ?? []));
    for (const table of built.tables ?? []) {
      claim(`table ${table.name}`, row.id);
      model.tables.push(table);
    }
    for (const [file, content] of Object.entries(built.files ?? {})) {
      if (model.files[file] !== undefined && model.files[file] !== content) {
        throw new Error(
          `${server.name}: ${row.id} writes ${file} with different content than an earlier row`,
        );
      }
      model.files[file] = content;
    }
    if (built.csrfExempt) model.csrfExempt.push(pyName(built.endpoint.method, built.endpoint.path));
    if (built.page && !built.page.listed) model.unlinkedPaths.push(built.page.path);
  }
  // Pages need a way in: servers without a home page of their own get one listing the linked pages.
  const pages = model.variants.flatMap((variant) => (variant.built.page ? [variant.built.page] : []));
  if (pages.length > 0 && server.auth !== "cookie") {
    const home = siteHome(pages.filter((page) => page.listed || page.via));
    claim(endpointKey(home), "SUP-SITE-HOME");
    model.support.push({ id: "SUP-SITE-HOME", endpoint: home, documented: server.doc !== "none" });
  }
  return model;
}

/** A partial document's deterministic coin: whether a security variant's operation is documented. */
function coin(id: string): boolean {
  let hash = 0;
  for (const character of id) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
  return hash % 2 === 0;
}

function checkRows(rows: readonly Row[]): void {
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.id)) throw new Error(`corpus table row id ${row.id} is used twice`);
    seen.add(row.id);
    familyOf(row.family);
    if (!SERVERS.some((server) => server.name === row.server)) {
      throw new Error(`corpus table row ${row.id} names unknown server ${row.server}`);
    }
  }
}

function nodePackage(server: CorpusServer): string {
  const dependencies: Record<string, string> = { fastify: "5.12.8" };
  if (server.database === "sqlite") dependencies["better-sqlite3"] = "12.11.1";
  else dependencies.pg = "8.23.1";
  return `${JSON.stringify({ name: server.name, private: true, type: "module", dependencies }, null, 2)}\n`;
}

/** Writes the generated corpus under `root` (corpus/ by default), replacing the generated folders. */
export function writeCorpus(root: string = CORPUS_DIR, corpus: GeneratedCorpus = generateCorpus()): string[] {
  for (const server of SERVERS)
    fs.rmSync(path.join(root, "servers", server.name), { recursive: true, force: true });
  const written: string[] = [];
  for (const [file, content] of corpus.files) {
    const target = path.join(root, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content);
    written.push(file);
  }
  return written;
}
