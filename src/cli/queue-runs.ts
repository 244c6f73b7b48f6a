import pg from "pg";
import { QaasError } from "../errors.ts";
import { queueUnreachable } from "../queue/job-queue.ts";
import { describeQueueUrl, resolveQueueUrl } from "../queue/queue-url.ts";
import { materializeRuns, type SqlRunner } from "../queue/shared-runs.ts";

// `--queue` on the commands that read runs (runs, show, score, report): the queue's runs are copied into
// the local store first (only those it lacks or holds less of), then read like any local run, so a
// report written by `qaas report` stays beside its run.

export async function copyQueueRuns(queueOption: string | undefined, home: string): Promise<void> {
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
}
