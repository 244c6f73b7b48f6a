import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CORPUS_DIR, type GeneratedCorpus, writeCorpus } from "../generator/generate.ts";

// A generated corpus written into a scratch folder: servers, ledgers, profiles. The Node servers resolve
// fastify, better-sqlite3 and pg through a link to this checkout's node_modules.

export function writeScratchCorpus(corpus: GeneratedCorpus, prefix = "qaas-corpus-"): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  writeCorpus(root, corpus);
  fs.symlinkSync(path.join(CORPUS_DIR, "..", "node_modules"), path.join(root, "node_modules"));
  return root;
}
