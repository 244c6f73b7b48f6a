import { QaasError } from "../errors.ts";
import { resolveSecret } from "../targets/secrets.ts";

// Where the job queue lives: `--queue <url>`, `--queue secret_ref:NAME` (the URL in that variable, so a
// password never sits in a shell history or a cron line), or QAAS_QUEUE_URL. Only PostgreSQL URLs.

type Environment = Record<string, string | undefined>;

export function resolveQueueUrl(option: string | undefined, env: Environment = process.env): string {
  const given = option ?? env.QAAS_QUEUE_URL;
  if (given === undefined || given.trim() === "") {
    throw new QaasError(
      "QUEUE_URL_MISSING",
      "no job queue given: pass --queue postgresql://host/db (or secret_ref:ENV_NAME), or set QAAS_QUEUE_URL",
    );
  }
  const url = given.startsWith("secret_ref:") ? resolveSecret(given, env, "--queue") : given;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QaasError(
      "QUEUE_URL_INVALID",
      `queue URL "${describeQueueUrl(url)}" is not a URL; write postgresql://user@host:port/database`,
    );
  }
  if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") {
    throw new QaasError(
      "QUEUE_URL_INVALID",
      `queue URL "${describeQueueUrl(url)}" uses ${parsed.protocol.replace(/:$/, "")}; the queue is PostgreSQL: write postgresql://user@host:port/database`,
    );
  }
  return url;
}

/** The URL with any password masked: what error messages and status lines may show. */
export function describeQueueUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}
