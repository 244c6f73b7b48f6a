import { QaasError } from "../errors.ts";
import { type BugBashReport, renderBugBash } from "../explore/bug-bash/bash-report.ts";
import { resolveQueueUrl } from "../queue/queue-url.ts";
import { dryRun, renderDryRun } from "./dry-run.ts";
import { assertSomethingRan } from "./nothing-ran.ts";
import { resumeRun, startRun } from "./start-run.ts";

export interface RunCommandOptions {
  home: string;
  mode: string;
  target?: string;
  agent?: string[];
  seat?: string;
  ticket?: string[];
  /** bug-bash: charters to walk (`--charter`, repeated). */
  charter?: string[];
  config?: string;
  dryRun?: boolean;
  resume?: string;
  json?: boolean;
  /** `--repo <path|git URL>`: clone it into the home and run on its profile (found or guessed). */
  repo?: string;
  ref?: string;
  /** `--queue [url]`: run the agents on `qaas worker`s through this PostgreSQL queue (or $QAAS_QUEUE_URL). */
  queue?: string | boolean;
}

export async function runCommand(options: RunCommandOptions): Promise<void> {
  const queueUrl =
    options.queue === undefined || options.queue === false
      ? undefined
      : resolveQueueUrl(options.queue === true ? undefined : options.queue);
  const agents = options.agent?.flatMap((value) => value.split(",")).map((name) => name.trim().toUpperCase());
  if (options.resume) {
    const controller = interruptible();
    const outcome = await resumeRun({
      home: options.home,
      runId: options.resume,
      json: options.json,
      signal: controller.signal,
      ...(queueUrl ? { queueUrl } : {}),
    });
    print(outcome.report, options.json);
    return;
  }
  if (options.repo) {
    if (options.target) throw new QaasError("BAD_OPTIONS", "pass --target or --repo, not both");
    const { checkoutRepo } = await import("./repo-checkout.ts");
    const checkout = await checkoutRepo({
      home: options.home,
      repo: options.repo,
      ...(options.ref ? { ref: options.ref } : {}),
      ...(options.config ? { configDir: options.config } : {}),
    });
    process.stderr.write(
      `qaas: cloned ${options.repo} into ${checkout.root}; ${checkout.guessed ? "guessed profile" : "profile"} ${checkout.profile}\n`,
    );
    options = { ...options, target: checkout.profile };
  }
  if (!options.target)
    throw new QaasError(
      "NO_TARGET",
      "qaas run needs --target <name|path> (see config/targets/) or --repo <path|URL>",
    );
  if (options.dryRun) {
    const result = dryRun({
      configDir: options.config,
      mode: options.mode,
      target: options.target,
      agents,
      seat: options.seat,
    });
    process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : renderDryRun(result));
    return;
  }
  const controller = interruptible();
  const outcome = await startRun({
    home: options.home,
    configDir: options.config,
    mode: options.mode,
    target: options.target,
    agents,
    seat: options.seat,
    tickets: options.ticket,
    ...(options.charter && options.charter.length > 0 ? { charters: options.charter } : {}),
    json: options.json,
    signal: controller.signal,
    ...(queueUrl ? { queueUrl } : {}),
  });
  print(outcome.report, options.json);
  assertSomethingRan(outcome.report);
}

/** Ctrl-C stops dispatching; running agents finish, the run stays resumable with --resume. */
function interruptible(): AbortController {
  const controller = new AbortController();
  process.once("SIGINT", () => {
    process.stderr.write(
      "qaas: stopping after the running agents finish (Ctrl-C again to kill; resume with --resume)\n",
    );
    controller.abort();
    process.once("SIGINT", () => process.kill(process.pid, "SIGKILL"));
  });
  return controller;
}

function print(
  report: { run_id: string; status: string; findings: { total: number }; bug_bash?: BugBashReport },
  json: boolean | undefined,
) {
  if (json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    // A bug bash answers with its sessions and every candidate's fate, confirmed or rejected and why.
    if (report.bug_bash) process.stdout.write(renderBugBash(report.bug_bash));
    process.stdout.write(
      `run ${report.run_id}: ${report.status}, ${report.findings.total} finding(s). See: qaas show ${report.run_id}\n`,
    );
  }
}
