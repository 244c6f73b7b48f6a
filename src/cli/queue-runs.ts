import fs from "node:fs";
import pg from "pg";
import { loadConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import { queueUnreachable } from "../queue/job-queue.ts";
import { describeQueueUrl, resolveQueueUrl } from "../queue/queue-url.ts";
import { artifactStoreOf, fetchArtifacts } from "../queue/shared-artifacts.ts";
import { materializeRuns, type SqlRunner } from "../queue/shared-runs.ts";
import { openRunArgument } from "./open-run.ts";

// `--queue` on the commands that read runs (runs, show, score, report): the queue's runs are copied into
// the local store first (only those it lacks or holds less of), then read like any local run, so a
// report written by `qaas report` stays beside its run. The run a command shows also gets the artifacts
// its evidence cites, from the artifact store its configuration names (system.yaml `queue.artifacts`).

export interface CopyQueueRunsOptions {
  /** The run (an id, or `latest`) whose artifacts are fetched too. */
  artifactsOf?: string;
  /** The configuration naming the artifact store; by default the run's own, when it is on this machine. */
  configDir?: string;
}

export async function copyQueueRuns(
  queueOption: string | undefined,
  home: string,
  options: CopyQueueRunsOptions = {},
): Promise<void> {
  if (queueOption === undefined) return;
  const url = resolveQueueUrl(queueOption);
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    throw queueUnreachable(url, error);
  }
  const sql: SqlRunner = async (text, values) => (await client.query(text, values)).rows;
  try {
    await materializeRuns(sql, home);
  } catch (error) {
    if ((error as { code?: string }).code === "42P01") {
      throw new QaasError(
        "QUEUE_HAS_NO_RUNS",
        `no run has been published to ${describeQueueUrl(url)}: a queue holds runs once a coordinator (\`qaas worker\`) has started one`,
      );
    }
    throw error;
  } finally {
    await client.end().catch(() => {});
  }
  if (options.artifactsOf !== undefined) await copyRunArtifacts(home, options.artifactsOf, options.configDir);
}

/** Fetches the artifacts of a run copied from the queue that this machine lacks; answers how many. */
export async function copyRunArtifacts(home: string, run: string, configDir?: string): Promise<number> {
  const store = openRunArgument(home, run);
  const started = store.readLedger().entries.find((entry) => entry.kind === "run_started");
  const runConfig = started?.data.config_dir;
  const dir =
    configDir ?? (typeof runConfig === "string" && fs.existsSync(runConfig) ? runConfig : undefined);
  const config = loadConfig(dir);
  const artifacts = artifactStoreOf(config.system, config.dir);
  return artifacts ? await fetchArtifacts(artifacts, store) : 0;
}
