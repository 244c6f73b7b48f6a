import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { parse, stringify } from "yaml";
import { generateCorpus } from "../../corpus/generator/generate.ts";
import { startPostgres } from "../../corpus/harness/postgres.ts";
import { writeScratchCorpus } from "../../corpus/harness/scratch.ts";
import { SERVERS } from "../../corpus/model/servers.ts";
import { ALL_ROWS } from "../../corpus/tables/index.ts";
import { renderTable } from "../cli/text-table.ts";
import { DEFAULT_CONFIG_DIR } from "../config/load-config.ts";
import { INVOCATION_QUEUE, RUN_QUEUE } from "../queue/invocation-job.ts";
import { runScoreCommand } from "../score/score-command.ts";
import { parseBenchArgs } from "./bench-args.ts";
import { failBench, round } from "./bench-numbers.ts";
import { writeCorpusProfile } from "./corpus-targets.ts";
import { type ScaleMeasure, scaleModel } from "./scale-model.ts";

// `npm run bench:scale`: queue mode as deployed — real PostgreSQL, one coordinator process and 1, 2, 4
// worker processes — sweeping the same corpus servers each time, and reporting targets finished per hour,
// the scaling ratio over one worker, where the time went (waiting in the queue, running), and the model
// that extrapolates it to a fleet (scale-model.ts).

const values = parseBenchArgs(
  "npm run bench:scale --",
  {
    workers: { type: "string", default: "1,2,4" },
    targets: { type: "string", default: "4" },
    agents: { type: "string", default: "MAPPER,API,DBA,TRIAGE,REPORTER" },
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
  {
    workers: "worker processes per configuration, comma-separated",
    targets: `corpus servers swept (at most ${SERVERS.length})`,
    agents: "the swept mode's roster, comma-separated",
    json: "print the measures and the model as one JSON object",
    keep: "keep the corpus, the config and the run homes",
  },
);

const QAAS_BIN = fileURLToPath(new URL("../../bin/qaas.js", import.meta.url));
const MODE = "scale";
/** A configuration that has not finished by then is reported as such, not waited for forever. */
const CONFIGURATION_TIMEOUT_MS = 20 * 60_000;

const workerCounts = (values.workers ?? "")
  .split(",")
  .map((part) => Number(part.trim()))
  .filter((count) => Number.isInteger(count) && count > 0);
const targetCount = Number(values.targets);
if (workerCounts.length === 0) fail(`--workers must list positive integers, got "${values.workers}"`);
if (!Number.isInteger(targetCount) || targetCount < 1 || targetCount > SERVERS.length) {
  fail(`--targets must be 1 to ${SERVERS.length}, got "${values.targets}"`);
}
const roster = (values.agents ?? "")
  .split(",")
  .map((name) => name.trim().toUpperCase())
  .filter(Boolean);

const log = (message: string) => {
  if (!values.json) process.stderr.write(`bench:scale ${message}\n`);
};

const servers = SERVERS.slice(0, targetCount);
const corpus = generateCorpus(ALL_ROWS.filter((row) => servers.some((server) => server.name === row.server)));
const root = writeScratchCorpus(corpus, "qaas-scale-bench-");
const configDir = writeBenchConfig(root, roster);
const profiles: string[] = [];
for (const server of servers) profiles.push(await writeCorpusProfile(root, server));

const postgres = await startPostgres();
process.env.CORPUS_DATABASE_URL = postgres.url;
const measures: ScaleMeasure[] = [];
try {
  for (const workers of workerCounts) measures.push(await measure(workers));
} finally {
  await postgres.stop();
  if (!values.keep) fs.rmSync(root, { recursive: true, force: true });
}

const model = scaleModel(measures, {
  targets: 200,
  machines: 20,
  coresPerMachine: os.availableParallelism(),
});
if (values.json) {
  process.stdout.write(`${JSON.stringify({ roster, targets: servers.length, measures, model }, null, 2)}\n`);
} else {
  process.stdout.write(`${render()}\n`);
}

/** One configuration: a fresh queue and store, one coordinator, `workers` worker processes, one sweep. */
async function measure(workers: number): Promise<ScaleMeasure> {
  const url = await freshQueue(`qaas_scale_${workers}`);
  const home = fs.mkdtempSync(path.join(root, `home-${workers}-`));
  const env = { ...process.env, QAAS_QUEUE_URL: url };
  const children: ChildProcess[] = [];
  const spawnWorker = (id: string, role: string) => {
    const child = spawn(process.execPath, [QAAS_BIN, "--home", home, "worker", "--id", id, "--role", role], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    const logFile = fs.createWriteStream(path.join(home, `${id}.log`));
    child.stderr?.pipe(logFile);
    children.push(child);
  };
  log(`${workers} worker(s): sweeping ${servers.length} targets with ${roster.join(", ")}`);
  const database = new pg.Client({ connectionString: url });
  const started = performance.now();
  try {
    spawnWorker("coordinator", "coordinator");
    for (let index = 1; index <= workers; index += 1) spawnWorker(`worker-${index}`, "invocations");
    await promisify(execFile)(
      process.execPath,
      [
        QAAS_BIN,
        "--home",
        home,
        "sweep",
        "--queue",
        "--mode",
        MODE,
        "--config",
        configDir,
        "--target",
        ...profiles,
      ],
      { env },
    );
    await database.connect();
    const runs = await runsSettled(database, servers.length, started);
    const wallSeconds = (performance.now() - started) / 1000;
    const invocations = await invocationTimes(database);
    const runsDir = path.join(home, "runs");
    const findings = (fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : []).map(
      (runId) => runScoreCommand({ run: runId, home }).scorecard.matched.length,
    );
    const result: ScaleMeasure = {
      workers,
      targets: servers.length,
      finished: runs.completed,
      failed: runs.failed,
      wall_seconds: round(wallSeconds),
      targets_per_hour: round((runs.completed / wallSeconds) * 3600),
      invocations: invocations.count,
      mean_wait_seconds: round(invocations.wait),
      mean_run_seconds: round(invocations.run),
      min_wait_seconds: round(invocations.minWait),
      matched_findings: findings.reduce((sum, count) => sum + count, 0),
      load_average: round(os.loadavg()[0] ?? 0),
    };
    log(
      `${workers} worker(s): ${result.finished}/${result.targets} finished in ${result.wall_seconds}s (${result.targets_per_hour} targets/h)`,
    );
    return result;
  } finally {
    await database.end().catch(() => {});
    await stopAll(children);
    if (!values.keep) fs.rmSync(home, { recursive: true, force: true });
  }
}

async function freshQueue(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgres.url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Waits until every run job has completed or failed for good. */
async function runsSettled(database: pg.Client, expected: number, started: number) {
  for (;;) {
    const { rows } = await database.query<{ completed: number; failed: number }>(
      `SELECT count(*) FILTER (WHERE state = 'completed')::int AS completed,
              count(*) FILTER (WHERE state = 'failed')::int AS failed
       FROM pgboss.job WHERE name = $1`,
      [RUN_QUEUE],
    );
    const counts = rows[0] ?? { completed: 0, failed: 0 };
    if (counts.completed + counts.failed >= expected) return counts;
    if (performance.now() - started > CONFIGURATION_TIMEOUT_MS) {
      return { completed: counts.completed, failed: expected - counts.completed };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** How long invocations waited (for a worker, then for their target's limits) and ran, on average. */
async function invocationTimes(database: pg.Client) {
  const { rows } = await database.query<{
    count: number;
    wait: number | null;
    min_wait: number | null;
    run: number | null;
  }>(
    `WITH timed AS (
       SELECT extract(epoch FROM (output->>'started_at')::timestamptz - created_on)::float AS wait,
              extract(epoch FROM completed_on - (output->>'started_at')::timestamptz)::float AS run
       FROM pgboss.job WHERE name = $1 AND state = 'completed')
     SELECT count(*)::int AS count, avg(wait) AS wait, min(wait) AS min_wait, avg(run) AS run FROM timed`,
    [INVOCATION_QUEUE],
  );
  const row = rows[0];
  return { count: row?.count ?? 0, wait: row?.wait ?? 0, minWait: row?.min_wait ?? 0, run: row?.run ?? 0 };
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  const exits = children.map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once("exit", () => resolve());
      }),
  );
  for (const child of children) child.kill("SIGTERM");
  const timer = setTimeout(() => {
    for (const child of children) child.kill("SIGKILL");
  }, 10_000);
  await Promise.all(exits);
  clearTimeout(timer);
}

/** The package's configuration with one more mode: the swept roster. */
function writeBenchConfig(rootDir: string, agents: string[]): string {
  const dir = path.join(rootDir, "config");
  fs.cpSync(DEFAULT_CONFIG_DIR, dir, { recursive: true });
  const systemFile = path.join(dir, "system.yaml");
  const system = parse(fs.readFileSync(systemFile, "utf8")) as { run_modes: Record<string, unknown> };
  system.run_modes[MODE] = { description: "bench:scale's sweep", roster: agents, budget: { usd: 5 } };
  fs.writeFileSync(systemFile, stringify(system));
  return dir;
}

function render(): string {
  const ratio = (workers: number) => model.ratios.find((entry) => entry.workers === workers)?.ratio;
  const table = renderTable<ScaleMeasure>(
    [
      { header: "workers", value: (entry) => String(entry.workers), align: "right" },
      { header: "finished", value: (entry) => `${entry.finished}/${entry.targets}`, align: "right" },
      { header: "wall s", value: (entry) => String(entry.wall_seconds), align: "right" },
      { header: "targets/h", value: (entry) => String(entry.targets_per_hour), align: "right" },
      { header: "ratio", value: (entry) => ratio(entry.workers)?.toFixed(2) ?? "—", align: "right" },
      { header: "invocations", value: (entry) => String(entry.invocations), align: "right" },
      { header: "wait s", value: (entry) => String(entry.mean_wait_seconds), align: "right" },
      { header: "run s", value: (entry) => String(entry.mean_run_seconds), align: "right" },
      { header: "matched", value: (entry) => String(entry.matched_findings), align: "right" },
    ],
    measures,
  );
  return [
    `qaas scale bench — ${servers.length} corpus targets, roster ${roster.join(", ")}, ${os.availableParallelism()} cores`,
    table,
    "",
    ...model.lines,
  ].join("\n");
}

function fail(message: string): never {
  failBench("bench:scale", message);
}
