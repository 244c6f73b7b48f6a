import type { RequestBudget } from "../probes/http/http-client.ts";
import type { SqlRunner } from "./shared-runs.ts";

// An agent's request budget holds for the whole run (profile.budgets.max_requests_per_agent): embedded,
// every invocation of the agent draws on one counter. In queue mode its invocations run on several
// workers, and a killed worker's try is run again, so the counter lives in the queue's PostgreSQL: a job
// starts from what the agent has spent in the run so far, adds its own requests every few moments, and
// learns what the others spent meanwhile. Two jobs of one agent at once can overshoot by what they send
// between two flushes, never by a whole budget.

export const SHARED_SPEND_SCHEMA = `
CREATE TABLE IF NOT EXISTS qaas_request_spend (
  run_id text NOT NULL,
  agent text NOT NULL,
  used integer NOT NULL,
  PRIMARY KEY (run_id, agent)
);`;

export interface SharedSpend {
  /** Adds this job's requests since the last flush and takes in what the other jobs spent. */
  flush(): Promise<void>;
}

/** Starts `budget` from what the agent already spent in the run. */
export async function shareAgentSpend(
  sql: SqlRunner,
  key: { runId: string; agent: string },
  budget: RequestBudget,
): Promise<SharedSpend> {
  let reported = await addSpend(sql, key, 0);
  budget.used += reported;
  let flushing: Promise<void> = Promise.resolve();
  const flush = async () => {
    const own = budget.used - reported;
    const total = await addSpend(sql, key, own);
    // What the others sent since this job last asked, counted as spent here too.
    budget.used += total - reported - own;
    reported = total;
  };
  return {
    flush() {
      flushing = flushing.then(flush, flush);
      return flushing;
    },
  };
}

async function addSpend(
  sql: SqlRunner,
  key: { runId: string; agent: string },
  requests: number,
): Promise<number> {
  const [row] = await sql<{ used: number }>(
    `INSERT INTO qaas_request_spend (run_id, agent, used) VALUES ($1, $2, $3)
     ON CONFLICT (run_id, agent) DO UPDATE SET used = qaas_request_spend.used + $3 RETURNING used`,
    [key.runId, key.agent, requests],
  );
  return row?.used ?? requests;
}
