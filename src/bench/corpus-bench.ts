import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildMeta } from "../../corpus/generator/emit-ledger.ts";
import { generateCorpus } from "../../corpus/generator/generate.ts";
import type { ServerModel } from "../../corpus/generator/server-model.ts";
import {
  type CorpusScore,
  type FamilyScore,
  type ScoredRun,
  scoreFamilies,
} from "../../corpus/harness/family-score.ts";
import { type PostgresServer, startPostgres } from "../../corpus/harness/postgres.ts";
import { writeScratchCorpus } from "../../corpus/harness/scratch.ts";
import { FAMILIES } from "../../corpus/model/families.ts";
import { SERVERS } from "../../corpus/model/servers.ts";
import { ALL_ROWS } from "../../corpus/tables/index.ts";
import { runScoreCommand } from "../score/score-command.ts";
import { PROGRESS_FILE, RunStore } from "../store/run-store.ts";
import { parseBenchArgs } from "./bench-args.ts";
import { failBench, round } from "./bench-numbers.ts";
import { writeCorpusProfile } from "./corpus-targets.ts";

// `npm run bench:corpus`: generates the conformance corpus, runs qaas against every corpus server exactly as
// against any target (a managed profile, `qaas run`, then `qaas score` with the server's golden ledger), and
// reports per family the true positives, false negatives, false positives on safe look-alikes, TPR, FPR and
// the Youden index, with wall time. Offline: the servers and PostgreSQL run on 127.0.0.1.

const values = parseBenchArgs(
  "npm run bench:corpus --",
  {
    json: { type: "boolean", default: false },
    class: { type: "string" },
    server: { type: "string" },
    mode: { type: "string", default: "nightly" },
    agents: { type: "string" },
    keep: { type: "boolean", default: false },
    parallel: { type: "string", default: "3" },
  },
  {
    json: "print the scores as one JSON object",
    class: "only these families, comma-separated",
    server: "only these corpus servers, comma-separated",
    mode: "the run mode of each qaas run",
    agents: "only these agents, comma-separated (e.g. MAPPER,AUDITOR)",
    keep: "keep the generated corpus and run homes",
    parallel: "corpus servers scanned at once",
  },
);

const list = (text: string | undefined) =>
  text
    ?.split(",")
    .map((part) => part.trim())
    .filter(Boolean);
const families = list(values.class);
const serverNames = list(values.server);
for (const name of families ?? []) {
  if (!FAMILIES.some((family) => family.name === name)) {
    fail(`--class ${name}: no such family (known: ${FAMILIES.map((family) => family.name).join(", ")})`);
  }
}
for (const name of serverNames ?? []) {
  if (!SERVERS.some((server) => server.name === name)) {
    fail(
      `--server ${name}: no such corpus server (known: ${SERVERS.map((server) => server.name).join(", ")})`,
    );
  }
}

const QAAS_BIN = fileURLToPath(new URL("../../bin/qaas.js", import.meta.url));
const started = performance.now();
const rows = ALL_ROWS.filter(
  (row) => (!families || families.includes(row.family)) && (!serverNames || serverNames.includes(row.server)),
);
const corpus = generateCorpus(rows);
const root = writeScratchCorpus(corpus, "qaas-corpus-bench-");
const models = corpus.models.filter((model) => model.variants.length > 0);
const parallel = Number(values.parallel);
if (!Number.isInteger(parallel) || parallel < 1)
  fail(`--parallel must be a positive integer, got ${values.parallel}`);
const log = (message: string) => {
  if (!values.json) process.stderr.write(`bench:corpus ${message}\n`);
};

interface ServerResult {
  server: string;
  run_id: string;
  wall_seconds: number;
  per_agent_seconds: Record<string, number>;
  score: CorpusScore;
  /** What a probe engineer looks at next: flagged look-alikes and findings the ledger does not know. */
  false_positives: Array<{ id: string; title: string; location: string }>;
  unlisted: Array<{ title: string; domain: string; class: string; location: string }>;
}

/** One corpus server, scored like any target: a managed profile, `qaas run`, `qaas score`. */
async function benchServer(model: ServerModel): Promise<{ result: ServerResult; run: ScoredRun }> {
  const { server } = model;
  const serverStarted = performance.now();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-corpus-home-"));
  const profile = await writeCorpusProfile(root, server);
  log(`${server.name}: running ${values.mode} (${model.variants.length} variants)`);
  const runId = await runQaas(profile, home);
  const card = runScoreCommand({ run: runId, home }).scorecard;
  const run: ScoredRun = {
    meta: buildMeta(model),
    matched: card.matched.map((hit) => hit.defect_id),
    falsePositives: card.false_positives.map((hit) => hit.not_defect),
    unlisted: card.unlisted_count,
  };
  const wall = (performance.now() - serverStarted) / 1000;
  const result: ServerResult = {
    server: server.name,
    run_id: runId,
    wall_seconds: round(wall),
    per_agent_seconds: agentSeconds(home, runId),
    score: scoreFamilies([run]),
    false_positives: card.false_positives.map((hit) => ({
      id: hit.not_defect,
      title: hit.title,
      location: hit.location.value,
    })),
    unlisted: card.unlisted.map((hit) => ({
      title: hit.title,
      domain: hit.domain,
      class: hit.defect_class,
      location: hit.location.value,
    })),
  };
  log(
    `${server.name}: done in ${wall.toFixed(1)}s (run ${runId}${values.keep ? `, log ${RunStore.open(home, runId).dir}/${PROGRESS_FILE}` : ""})`,
  );
  if (!values.keep) fs.rmSync(home, { recursive: true, force: true });
  return { result, run };
}

let postgres: PostgresServer | undefined;
const outcomes: Array<{ result: ServerResult; run: ScoredRun }> = [];
try {
  if (models.some((model) => model.server.database === "postgres")) {
    postgres = await startPostgres();
    process.env.CORPUS_DATABASE_URL = postgres.url;
  }
  // The runs mostly wait on their targets, so several share this machine well.
  const queue = [...models];
  const workers = Array.from({ length: Math.min(parallel, queue.length) }, async () => {
    for (let model = queue.shift(); model; model = queue.shift()) outcomes.push(await benchServer(model));
  });
  await Promise.all(workers);
} finally {
  await postgres?.stop();
  if (!values.keep) fs.rmSync(root, { recursive: true, force: true });
}
const order = (name: string) => SERVERS.findIndex((server) => server.name === name);
outcomes.sort((left, right) => order(left.result.server) - order(right.result.server));
const perServer = outcomes.map((outcome) => outcome.result);
const scored = outcomes.map((outcome) => outcome.run);

const total = scoreFamilies(scored);
const wallSeconds = round((performance.now() - started) / 1000);
// Wall time depends on what else the machine runs: the load average says how busy it was.
const loadAverage = os.loadavg().map(round);
if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ mode: values.mode, wall_seconds: wallSeconds, load_average: loadAverage, servers: perServer, ...total }, null, 2)}\n`,
  );
} else {
  process.stdout.write(`${render(total, wallSeconds)}\n`);
}

function render(score: CorpusScore, seconds: number): string {
  const header = `${"family".padEnd(26)} ${"vuln".padStart(4)} ${"safe".padStart(4)} ${"TP".padStart(4)} ${"FN".padStart(4)} ${"FP".padStart(4)} ${"TPR".padStart(5)} ${"FPR".padStart(5)} ${"J".padStart(6)}`;
  const line = (entry: FamilyScore) =>
    `${entry.family.padEnd(26)} ${String(entry.vulnerable).padStart(4)} ${String(entry.safe).padStart(4)} ${String(entry.truePositives).padStart(4)} ${String(entry.falseNegatives).padStart(4)} ${String(entry.falsePositives).padStart(4)} ${rate(entry.tpr)} ${rate(entry.fpr)} ${signed(entry.youden)}`;
  return [
    `qaas corpus bench — ${values.mode}, ${perServer.length} servers, ${seconds}s wall (parallel ${parallel}, load ${loadAverage.join(" ")})`,
    ...perServer.map(
      (entry) =>
        `  ${entry.server.padEnd(34)} ${String(entry.wall_seconds).padStart(6)}s  J ${signed(entry.score.overall.youden)}  (TP ${entry.score.overall.truePositives}/${entry.score.overall.vulnerable}, FP ${entry.score.overall.falsePositives}/${entry.score.overall.safe})`,
    ),
    "",
    header,
    ...score.families.map(line),
    "-".repeat(header.length),
    line(score.overall),
    "",
    ...score.derived.map((entry) => `derived ${entry.family}: ${entry.found}/${entry.total} found`),
    `findings on supporting operations (false positives): ${score.supportFalsePositives}`,
    `findings matching nothing in the ledgers (unlisted): ${score.unlisted}`,
  ].join("\n");
}

/**
 * `qaas run` in a child process of its own, as a person would start it: several runs then share the machine
 * without sharing one event loop (a run does synchronous store writes that would stall its neighbours).
 */
function runQaas(profile: string, home: string): Promise<string> {
  const args = [QAAS_BIN, "run", "--mode", values.mode!, "--target", profile, "--json"];
  if (values.agents)
    args.push("--agent", ...values.agents.split(",").map((name) => name.trim().toUpperCase()));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, QAAS_HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      try {
        const report = JSON.parse(stdout) as { run_id?: string };
        if (report.run_id) return resolve(report.run_id);
      } catch {
        // fall through to the error below
      }
      reject(
        new Error(
          `qaas run --target ${profile} exited with ${code}: ${stderr.trim() || stdout.slice(0, 400)}`,
        ),
      );
    });
  });
}

/** Seconds each agent ran, from the run's ledger. */
function agentSeconds(home: string, runId: string): Record<string, number> {
  const seconds: Record<string, number> = {};
  const startedAt = new Map<string, number>();
  for (const entry of RunStore.open(home, runId).readLedger().entries) {
    const invocation = String(entry.data.invocation ?? "");
    if (entry.kind === "agent_started") startedAt.set(invocation, Date.parse(entry.at));
    if (entry.kind === "agent_finished" || entry.kind === "agent_failed") {
      const agent = String(entry.data.agent);
      const begun = startedAt.get(invocation) ?? Date.parse(entry.at);
      seconds[agent] = round((seconds[agent] ?? 0) + (Date.parse(entry.at) - begun) / 1000);
    }
  }
  return seconds;
}

function rate(value: number | null): string {
  return (value === null ? "—" : value.toFixed(2)).padStart(5);
}

function signed(value: number | null): string {
  return (value === null ? "—" : `${value >= 0 ? "+" : ""}${value.toFixed(2)}`).padStart(6);
}

function fail(message: string): never {
  failBench("bench:corpus", message);
}
