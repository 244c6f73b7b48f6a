import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type LoadedConfig, loadConfig } from "../config/load-config.ts";
import type { Limiter } from "../probes/http/concurrency.ts";
import {
  RUN_LIMITER_KEY,
  runAgentBudget,
  TARGET_RESTART_KEY,
  targetConcurrency,
} from "../probes/http/run-http.ts";
import type { RouterEvent } from "../router/run-state.ts";
import { createRunContext } from "../run/run-context.ts";
import { type SeatFactory, seatResolver } from "../run/seat-resolver.ts";
import { runInvocation } from "../runner/run-agent.ts";
import { loadTarget } from "../targets/load-target.ts";
import { loadProfileSecrets } from "../targets/secrets.ts";
import type { LoadedTarget } from "../tools/context.ts";
import { closeRunServices } from "../tools/run-end.ts";
import { RUN_ONCE_KEY, type RunOnce } from "../tools/run-once.ts";
import { abortablePause } from "./abortable-pause.ts";
import { bufferRunContext } from "./buffered-context.ts";
import { FleetHold } from "./fleet-limits.ts";
import type { InvocationJob, InvocationResult } from "./invocation-job.ts";
import type { InvocationJobRecord, JobQueue } from "./job-queue.ts";
import { type JobWorkspace, openJobWorkspace } from "./job-workspace.ts";
import { artifactStoreOf } from "./shared-artifacts.ts";
import { runOnceShared } from "./shared-once.ts";
import { requestTargetRestart } from "./shared-restarts.ts";
import { shareAgentSpend } from "./shared-spend.ts";

// `qaas worker`: takes invocation jobs from the queue one at a time, runs each agent against its target
// with the queue's shared store for reading (job-workspace.ts), and hands back how it ended with
// everything it recorded. It keeps
// its lease alive while it works; if it dies, the lease runs out and another worker takes the job.

export interface WorkerOptions {
  queue: JobQueue;
  /**
   * This worker's store folder. It may be the coordinator's (shared) or its own: runs, maps and memory
   * are read from the queue's store whenever this copy is behind.
   */
  home: string;
  signal: AbortSignal;
  workerId?: string;
  /** How long to wait before asking again when the queue is empty. */
  pollMs?: number;
  /** Tests inject seats here, as for `startRun`. */
  seatFactory?: SeatFactory;
  log?: (message: string) => void;
  /** Called as an invocation starts (tests use it to kill a worker mid-invocation). */
  onInvocationStart?: (job: InvocationJob) => void;
}

export function defaultWorkerId(): string {
  return `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/** Works until the signal aborts; answers how many jobs it finished. */
export async function runWorker(options: WorkerOptions): Promise<number> {
  const workerId = options.workerId ?? defaultWorkerId();
  const log = options.log ?? (() => {});
  const pollMs = options.pollMs ?? 500;
  setMaxListeners(256, options.signal);
  let finished = 0;
  // The worker's private copy of the shared defect memory, refreshed before each job.
  const memoryDir = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-worker-memory-"));
  log(`worker ${workerId}: waiting for jobs`);
  try {
    while (!options.signal.aborted) {
      await options.queue.touchWorker(workerId, null);
      const job = await options.queue.fetchInvocation();
      if (!job) {
        await abortablePause(pollMs, options.signal);
        continue;
      }
      await workOn(job, workerId, memoryDir, options, log);
      finished += 1;
    }
  } finally {
    fs.rmSync(memoryDir, { recursive: true, force: true });
  }
  return finished;
}

async function workOn(
  job: InvocationJobRecord,
  workerId: string,
  memoryDir: string,
  options: WorkerOptions,
  log: (message: string) => void,
): Promise<void> {
  const { queue } = options;
  const tryNumber = job.retryCount + 1;
  const label = `${job.data.run_id} ${job.data.invocation.id} (try ${tryNumber})`;
  log(`worker ${workerId}: ${label} started`);
  await queue.touchWorker(workerId, job.id);
  const heartbeat = setInterval(
    () => {
      void queue.heartbeat(job.id).catch(() => {});
      void queue.touchWorker(workerId, job.id).catch(() => {});
    },
    // Three beats per lease: one late beat never loses a job to another worker.
    Math.max(200, (leaseSecondsOf(job) * 1000) / 3),
  );
  try {
    options.onInvocationStart?.(job.data);
    const result = await runJob(job.data, { ...options, workerId, tryNumber, memoryDir });
    await queue.complete(job.id, result as unknown as object);
    log(`worker ${workerId}: ${label} ${result.event.type}`);
  } catch (error) {
    // The worker could not run the job at all (config unreadable, store missing): let the queue retry it
    // elsewhere, and dead-letter it after the last try.
    const message = error instanceof Error ? error.message : String(error);
    log(`worker ${workerId}: ${label} failed: ${message}`);
    await queue.fail(job.id, { message, worker: workerId }).catch(() => {});
  } finally {
    clearInterval(heartbeat);
  }
}

/** How often a job adds its requests to the agent's run-wide count (and learns the other jobs'). */
const SPEND_FLUSH_MS = 1000;

type JobOptions = WorkerOptions & { workerId: string; tryNumber: number; memoryDir: string };

async function runJob(job: InvocationJob, options: JobOptions): Promise<InvocationResult> {
  const config = loadConfig(job.config_dir);
  const target = loadTarget(job.target_file, { configDir: config.dir });
  // The coordinator that started the run loaded these on its own machine; this worker signs in too.
  loadProfileSecrets(target);
  // The target's limits hold over every worker: waited for before anything is opened.
  const hold = await FleetHold.enter({
    url: options.queue.url,
    target: targetIdentity(target),
    exclusive: config.agents.get(job.invocation.agent)?.config.exclusive ?? false,
    targetCap: targetConcurrency(target.profile),
    globalCap: config.system.queue.max_requests_in_flight,
    signal: options.signal,
  });
  try {
    return await runHeld(job, { config, target, limiter: hold.limiter }, options);
  } finally {
    await hold.leave();
  }
}

async function runHeld(
  job: InvocationJob,
  held: { config: LoadedConfig; target: LoadedTarget; limiter: Limiter },
  options: JobOptions,
): Promise<InvocationResult> {
  const { config } = held;
  const startedAt = new Date().toISOString();
  const workspace = await openJobWorkspace(options.queue.sql.bind(options.queue), {
    home: options.home,
    runId: job.run_id,
    target: job.target,
    memoryDir: options.memoryDir,
    artifacts: artifactStoreOf(config.system, config.dir),
  });
  try {
    return await runInWorkspace(job, held, workspace, options, startedAt);
  } finally {
    workspace.close();
  }
}

async function runInWorkspace(
  job: InvocationJob,
  held: { config: LoadedConfig; target: LoadedTarget; limiter: Limiter },
  workspace: JobWorkspace,
  options: JobOptions,
  startedAt: string,
): Promise<InvocationResult> {
  const { config, target } = held;
  const { store } = workspace;
  const base = createRunContext({
    store,
    system: config.system,
    target,
    memory: workspace.memory,
    maps: workspace.maps,
    signal: options.signal,
  });
  base.shared.set(RUN_LIMITER_KEY, held.limiter);
  // The run's coordinator holds a managed target's server: a target this job's requests kill is restarted there.
  if (target.profile.environment.mode === "managed") {
    base.shared.set(TARGET_RESTART_KEY, () =>
      requestTargetRestart(options.queue.sql.bind(options.queue), {
        runId: job.run_id,
        requestedBy: options.workerId,
        signal: options.signal,
      }),
    );
  }
  // What the run's agents do once for all (a reset before a phase's tests) is agreed through the queue.
  const runOnceAcrossWorkers: RunOnce = (key, work, { staleAfterMs }) =>
    runOnceShared(
      options.queue.sql.bind(options.queue),
      { runId: job.run_id, key, claimedBy: options.workerId, staleAfterMs, signal: options.signal },
      work,
    );
  base.shared.set(RUN_ONCE_KEY, runOnceAcrossWorkers);
  const buffered = bufferRunContext(base);
  const tickets = {
    filed: store.readLedger().entries.filter((entry) => entry.kind === "ticket_filed").length,
  };
  const resolveSeat = seatResolver(config, job.seat ?? undefined, options.seatFactory, (message) =>
    buffered.context.record("seat_notice", { message }),
  );
  const spend = await shareAgentSpend(
    options.queue.sql.bind(options.queue),
    { runId: job.run_id, agent: job.invocation.agent },
    runAgentBudget(base, job.invocation.agent),
  );
  const flushing = setInterval(() => void spend.flush().catch(() => {}), SPEND_FLUSH_MS);
  let event: RouterEvent;
  try {
    event = await runInvocation(job.invocation, {
      mode: job.mode,
      config,
      context: buffered.context,
      seatFor: (agent) => resolveSeat(agent),
      tickets,
      log: options.log ?? (() => {}),
    });
  } finally {
    clearInterval(flushing);
    await closeRunServices(base);
  }
  await spend.flush();
  const written = await workspace.finish();
  return {
    event,
    entries: buffered.entries,
    envelopes: buffered.envelopes,
    worker: options.workerId,
    try: options.tryNumber,
    started_at: startedAt,
    files: written.files,
    memory: written.memory,
  };
}

/** Runs on one service share its limits whatever their profiles are called: the origin, else the name. */
function targetIdentity(target: LoadedTarget): string {
  const baseUrl = target.profile.environment.base_url;
  return baseUrl ? new URL(baseUrl).origin : target.profile.name;
}

function leaseSecondsOf(job: InvocationJobRecord): number {
  const seconds = Number((job as { expireInSeconds?: unknown }).expireInSeconds);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 60;
}
