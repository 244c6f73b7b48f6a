// The `--queue` option of the commands that read runs. Kept apart from queue-runs.ts, which loads the
// PostgreSQL client: the CLI imports it only when a command runs, so `qaas --help` stays fast.
export const QUEUE_READ_OPTION = [
  "--queue <url>",
  "also read the runs a distributed mode's coordinators published to this queue: postgresql://… or secret_ref:ENV_NAME",
] as const;
