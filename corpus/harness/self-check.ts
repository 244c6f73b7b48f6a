import fs from "node:fs";
import path from "node:path";
import { generateCorpus } from "../generator/generate.ts";
import type { OracleCase } from "../generator/server-model.ts";
import type { CorpusServer } from "../model/servers.ts";
import { launchOracleBrowser } from "../oracles/browser.ts";
import { SQLITE_FILE, SQLITE_FILE_VARIABLE } from "../oracles/query-plan.ts";
import { STATEMENT_LOG_FILE, STATEMENT_LOG_VARIABLE } from "../oracles/statement-log.ts";
import { createClient } from "./client.ts";
import { startListener } from "./listener.ts";
import { writeScratchCorpus } from "./scratch.ts";
import { readSecrets } from "./secrets.ts";
import { startCorpusServer } from "./start-server.ts";

// The corpus's honesty check: generate the corpus into a scratch folder, start each server, and run every
// variant's oracle against it. A vulnerable variant must show its flaw and its safe twin must not.

export interface CheckResult {
  server: string;
  id: string;
  family: string;
  label: "vulnerable" | "safe";
  flawed: boolean;
  evidence: string;
  /** The oracle's answer agrees with the label. */
  agrees: boolean;
}

export interface SelfCheckOptions {
  servers?: readonly CorpusServer[];
  families?: readonly string[];
  /** postgresql://… of a running server, required when a PostgreSQL corpus server is checked. */
  databaseUrl?: string;
  /** Oracles asked at once per server (default 6). */
  concurrency?: number;
}

export async function selfCheck(options: SelfCheckOptions = {}): Promise<CheckResult[]> {
  const corpus = generateCorpus();
  const root = writeScratchCorpus(corpus);
  const listener = await startListener();
  // One Chromium for every UI oracle of the check, launched only when one asks.
  const browser = launchOracleBrowser();
  let browserUsed = false;
  const useBrowser = () => {
    browserUsed = true;
    return browser();
  };
  const results: CheckResult[] = [];
  try {
    const secrets = readSecrets(path.join(root, "targets", "corpus.secrets.env"));
    const servers = options.servers ?? corpus.models.map((model) => model.server);
    for (const server of servers) {
      const cases = corpus.cases.filter(
        (entry) =>
          entry.server.name === server.name &&
          (!options.families || options.families.includes(entry.row.family)),
      );
      if (cases.length === 0) continue;
      if (server.database === "postgres" && !options.databaseUrl) {
        throw new Error(`${server.name} needs a PostgreSQL server: pass databaseUrl`);
      }
      const running = await startCorpusServer(root, server, {
        ...secrets,
        [STATEMENT_LOG_VARIABLE]: STATEMENT_LOG_FILE,
        [SQLITE_FILE_VARIABLE]: SQLITE_FILE,
        ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
      });
      try {
        const client = createClient(server, running.url, secrets, listener, root, useBrowser);
        const check = async (entry: OracleCase) => {
          let flawed = false;
          let evidence: string;
          try {
            const found = await entry.oracle(client);
            flawed = found.flawed;
            evidence = found.evidence;
          } catch (error) {
            evidence = `oracle failed: ${error instanceof Error ? error.message : String(error)}`;
            flawed = entry.row.label === "safe";
          }
          results.push({
            server: server.name,
            id: entry.row.id,
            family: entry.row.family,
            label: entry.row.label,
            flawed,
            evidence: `${entry.location}: ${evidence}`,
            agrees: flawed === (entry.row.label === "vulnerable"),
          });
        };
        // Oracles are independent (each makes its own records); a few at a time keeps the check short.
        const queue = cases.filter((entry) => !entry.alone);
        const workers = Array.from({ length: Math.min(options.concurrency ?? 6, queue.length) }, async () => {
          for (let entry = queue.shift(); entry; entry = queue.shift()) await check(entry);
        });
        await Promise.all(workers);
        // Those that count the server's statements go one by one: another oracle's would land in the count.
        for (const entry of cases.filter((candidate) => candidate.alone)) await check(entry);
      } finally {
        await running.stop();
      }
    }
  } finally {
    if (browserUsed) await (await browser()).close();
    await listener.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return results;
}
