import { setMaxListeners } from "node:events";
import os from "node:os";
import path from "node:path";
import type { SeatRef } from "../config/agent-schema.ts";
import { type LoadedAgent, type LoadedConfig, loadConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import { DefectMemory } from "../memory/defect-memory.ts";
import { TARGET_RESTART_KEY } from "../probes/http/run-http.ts";
import { JobQueue, type QueueSettings } from "../queue/job-queue.ts";
import { queueDispatcher } from "../queue/queue-dispatcher.ts";
import { artifactStoreOf, fetchArtifacts } from "../queue/shared-artifacts.ts";
import { type RestartServer, serveTargetRestarts } from "../queue/shared-restarts.ts";
import { RunPublisher } from "../queue/shared-runs.ts";
import { execute, replay } from "../router/executor.ts";
import { initialState, type RouterEvent, type RunState } from "../router/run-state.ts";
import { runInvocation } from "../runner/run-agent.ts";
import type { OrchestratorSeat, WorkerSeat } from "../seats/seat.ts";
import { writeFileAtomic } from "../store/atomic-write.ts";
import type { LedgerEntry } from "../store/ledger-kinds.ts";
import { PROGRESS_FILE, RunStore } from "../store/run-store.ts";
import { SystemMapStore } from "../store/system-map-store.ts";
import { type PreparedEnvironment, prepareEnvironment } from "../targets/environment.ts";
import { loadTarget } from "../targets/load-target.ts";
import type { LoadedTarget } from "../tools/context.ts";
import { TARGET_ENVIRONMENT_KEY } from "../tools/environment-swap.ts";
import { closeRunServices } from "../tools/run-end.ts";
import { buildPlan } from "./build-plan.ts";
import { buildReport, type RunReport } from "./build-report.ts";
import { type FinalCatch, runFinalCatch } from "./final-catch.ts";
import { gitFacts } from "./git-facts.ts";
import { Progress } from "./progress.ts";
import { activityOf, RUN_ACTIVITY_KEY } from "./run-activity.ts";
import { createRunContext } from "./run-context.ts";
import { preflightSeats } from "./seat-preflight.ts";
import { type SeatFactory, seatResolver } from "./seat-resolver.ts";
import { SpendMeter } from "./spend-meter.ts";
import { noteSkippedProbes } from "./target-health.ts";

// One run, start to finish: load, record the start, bring the environment up, hand the plan to the
// router's executor, bring the environment down, write the report. `resumeRun` does the same from a
// killed run's ledger without redoing what finished.

export interface RunOptions {
  home: string;
  configDir?: string;
  mode: string;
  target: string;
  agents?: string[];
  /** `--seat backend[:model]`: every agent on this worker seat. */
  seat?: string;
  tickets?: string[];
  /** bug-bash: the charters to walk; recorded on run_started, where the bug_bash tools read them. */
  charters?: string[];
  json?: boolean;
  /** Tests inject seats (MockSeat) here. */
  seatFactory?: SeatFactory;
  /** Tests inject the orchestrator seat here; otherwise system.yaml's. */
  orchestrator?: OrchestratorSeat;
  signal?: AbortSignal;
  /** Queue mode: agents run on `qaas worker`s that take jobs from this PostgreSQL queue. */
  queueUrl?: string;
  queueSettings?: Partial<QueueSettings>;
  /** Called once the run exists (its run_started written), before anything runs: a queue coordinator
   * stores the id on its run job so that a successor resumes this run instead of starting another. */
  onRunCreated?: (runId: string) => Promise<void>;
}

export interface RunOutcome {
  runId: string;
  report: RunReport;
}

export async function startRun(options: RunOptions): Promise<RunOutcome> {
  const config = loadConfig(options.configDir);
  const target = loadTarget(options.target, { configDir: config.dir });
  const plan = buildPlan(config, { mode: options.mode, only: options.agents, tickets: options.tickets });
  // Injected seats (tests) are the caller's business; configured ones must work before anything starts.
  if (!options.seatFactory) {
    await preflightSeats(config, plan, {
      ...(options.seat ? { seat: options.seat } : {}),
      skipOrchestrator: options.orchestrator !== undefined,
    });
  }
  const store = RunStore.create(options.home, { mode: options.mode, target: target.profile.name });
  const git = await gitFacts(target.root);
  store.append("run_started", {
    run_id: store.runId,
    mode: options.mode,
    target: target.profile.name,
    target_file: target.file,
    config_dir: config.dir,
    ...(target.goldenLedger ? { golden_ledger: target.goldenLedger } : {}),
    target_commit: git.commit,
    target_branch: git.branch,
    target_dirty: git.dirty,
    roster: plan.agents.map((agent) => agent.name),
    agents_filter: options.agents ?? null,
    seat: options.seat ?? null,
    tickets: options.tickets ?? [],
    ...(options.charters && options.charters.length > 0 ? { charters: options.charters } : {}),
  });
  await options.onRunCreated?.(store.runId);
  return drive(store, config, target, { ...options }, initialState(), { type: "run.start", plan });
}

export async function resumeRun(options: {
  home: string;
  runId: string;
  json?: boolean;
  seatFactory?: SeatFactory;
  signal?: AbortSignal;
  queueUrl?: string;
  queueSettings?: Partial<QueueSettings>;
}): Promise<RunOutcome> {
  const store = RunStore.open(options.home, options.runId);
  const { entries, warnings } = store.readLedger();
  const started = entries.find((entry) => entry.kind === "run_started");
  if (!started)
    throw new QaasError("RUN_NOT_RESUMABLE", `run ${options.runId} never started (no run_started entry)`);
  if (entries.some((entry) => entry.kind === "run_finished")) {
    throw new QaasError(
      "RUN_FINISHED",
      `run ${options.runId} has already finished; see \`qaas show ${options.runId}\``,
    );
  }
  const data = started.data as Record<string, unknown>;
  const config = loadConfig(typeof data.config_dir === "string" ? data.config_dir : undefined);
  const target = loadTarget(String(data.target_file), { configDir: config.dir });
  const state = replay(entries);
  store.append("run_resumed", {
    run_id: store.runId,
    ledger_warnings: warnings,
    finished_invocations: Object.keys(state.ended).length,
    interrupted_invocations: Object.keys(state.running),
  });
  const runOptions: RunOptions = {
    home: options.home,
    mode: String(data.mode),
    target: target.file,
    ...(typeof data.seat === "string" ? { seat: data.seat } : {}),
    ...(options.json ? { json: true } : {}),
    ...(options.seatFactory ? { seatFactory: options.seatFactory } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.queueUrl ? { queueUrl: options.queueUrl } : {}),
    ...(options.queueSettings ? { queueSettings: options.queueSettings } : {}),
  };
  // A run killed before the router recorded its first event starts its plan now.
  const firstEvent: RouterEvent =
    state.status === "idle"
      ? {
          type: "run.start",
          plan: buildPlan(config, {
            mode: runOptions.mode,
            only: Array.isArray(data.agents_filter) ? (data.agents_filter as string[]) : undefined,
            tickets: Array.isArray(data.tickets) ? (data.tickets as string[]) : undefined,
          }),
        }
      : { type: "run.resume" };
  return drive(store, config, target, runOptions, state, firstEvent);
}

/**
 * The managed server this run started on this machine and did not stop — its process was killed — so that
 * the process resuming the run stops it before starting its own; undefined when there is none.
 */
function serverLeftRunning(entries: readonly LedgerEntry[]): number | undefined {
  let pid: number | undefined;
  for (const entry of entries) {
    if (entry.kind === "environment_stopped") pid = undefined;
    if (entry.kind !== "environment_started") continue;
    pid =
      entry.data.host === os.hostname() && typeof entry.data.pid === "number" ? entry.data.pid : undefined;
  }
  return pid;
}

async function drive(
  store: RunStore,
  config: LoadedConfig,
  target: LoadedTarget,
  options: RunOptions,
  state: RunState,
  firstEvent: RouterEvent,
): Promise<RunOutcome> {
  const progress = new Progress(options.json === true, path.join(store.dir, PROGRESS_FILE));
  const signal = options.signal ?? new AbortController().signal;
  // Every running agent, test process and request listens for the stop: dozens at once is normal here.
  setMaxListeners(256, signal);
  const maps = new SystemMapStore(store.home);
  // An agent run alone (`--agent`) reads the newest map when MAPPER is not in its roster.
  if (!maps.loadPinned(store)) {
    const latest = maps.latest(target.profile.name);
    if (latest) maps.pin(store, target.profile.name, latest.version);
  }
  const memory = DefectMemory.open(store.home);
  const context = createRunContext({ store, system: config.system, target, memory, maps, signal });
  const record = context.record;
  context.record = (kind, data, agent) => {
    const entry = record(kind, data, agent);
    if (kind === "envelope_emitted") progress.findings += 1;
    if (kind === "agent_finished") progress.spentUsd += Number(data.cost_usd ?? 0);
    if (kind === "target_down") progress.line(String(data.message));
    return entry;
  };
  const resolveSeat = seatResolver(config, options.seat, options.seatFactory, (message) =>
    store.append("seat_notice", { message }),
  );
  const tickets = {
    filed: store.readLedger().entries.filter((entry) => entry.kind === "ticket_filed").length,
  };
  // Every model call is checked against the caps as it is made; a resumed run starts from what it spent.
  const meter = new SpendMeter(
    firstEvent.type === "run.start" ? firstEvent.plan : state.plan,
    state.spend,
    state.agentSpend,
  );

  const announcedSkips = new Set<string>();
  let environment: PreparedEnvironment | undefined;
  let queue: JobQueue | undefined;
  let publisher: RunPublisher | undefined;
  let restarts: RestartServer | undefined;
  let finalState = state;
  // The queue outlives the agents: the run is published once more after its report is written.
  try {
    try {
      if (options.queueUrl) {
        queue = await JobQueue.open(options.queueUrl, options.queueSettings);
        publisher = new RunPublisher(queue.sql.bind(queue), store);
      }
      const leftoverPid = serverLeftRunning(store.readLedger().entries);
      environment = await prepareEnvironment(target, {
        home: store.home,
        ...(leftoverPid !== undefined ? { leftoverPid } : {}),
        log: (message) => progress.line(message),
      });
      const started = environment;
      const recordStart = (restarted: boolean) =>
        store.append("environment_started", {
          mode: started.mode,
          base_url: started.baseUrl ?? null,
          pid: started.pid ?? null,
          host: os.hostname(),
          ...(restarted ? { restarted: true } : {}),
        });
      recordStart(false);
      // Whoever takes the run over must know the server is up, even if this process dies before its first job
      // (a failed publish is tried again as the first job goes out).
      await publisher?.push().catch(() => {});
      if (started.restart) {
        const restart = async () => {
          await started.restart?.();
          recordStart(true);
        };
        context.shared.set(TARGET_RESTART_KEY, restart);
        // In queue mode the agents that crash the target run on workers; they ask this process to restart it.
        if (queue) restarts = serveTargetRestarts(queue.sql.bind(queue), store.runId, restart);
      }
      // env_control swaps the running target (a fix branch's build, then the checkout's again) through this.
      context.shared.set(TARGET_ENVIRONMENT_KEY, environment);
      progress.line(`run ${store.runId}: mode ${options.mode}, target ${target.profile.name}`);
      finalState = await execute(state, firstEvent, {
        // Tools read what the run is doing now (run-activity.ts); only this process's agents are seen.
        observe: queue ? undefined : (current) => context.shared.set(RUN_ACTIVITY_KEY, activityOf(current)),
        record: (kind, data) => {
          // A per-finding agent is skipped once per finding; saying so once is enough.
          if (kind === "agent_skipped" && !announcedSkips.has(String(data.agent))) {
            announcedSkips.add(String(data.agent));
            progress.line(`${String(data.agent)} skipped: ${String(data.reason)}`);
          }
          if (kind === "agent_dead_lettered")
            progress.line(`${String(data.agent)} gave up: ${String(data.error)}`);
          if (kind === "budget_exceeded")
            progress.line(`budget reached (${String(data.scope)}): stopping dispatch`);
          if (kind === "escalation") progress.line(`escalated to a person: ${String(data.reason)}`);
          return store.append(kind, data);
        },
        dispatch: queue
          ? queueDispatcher({
              queue,
              job: {
                run_id: store.runId,
                mode: options.mode,
                target: target.profile.name,
                target_file: target.file,
                config_dir: config.dir,
                seat: options.seat ?? null,
              },
              store: {
                readEnvelopes: () => store.readEnvelopes(),
                writeEnvelope: (envelope) => store.writeEnvelope(envelope),
                writeRunFile: (name, content) => writeFileAtomic(path.join(store.dir, name), content),
                record: (kind, data, agent) => context.record(kind, data, agent),
              },
              record: (kind, data) => context.record(kind, data),
              settledJobs: () =>
                new Set(
                  store
                    .readLedger()
                    .entries.filter((entry) => entry.kind === "job_finished")
                    .map((entry) => String(entry.data.job)),
                ),
              publish: () => publisher?.push() ?? Promise.resolve(),
              signal,
            })
          : (invocation) =>
              runInvocation(invocation, {
                mode: options.mode,
                config,
                context,
                seatFor: (agent: LoadedAgent): { seat: WorkerSeat; ref: SeatRef } => resolveSeat(agent),
                tickets,
                log: (message) => progress.line(message),
                meter,
              }),
        signal,
      });
      noteSkippedProbes(context, store, progress);
    } finally {
      await restarts?.stop();
      await closeRunServices(context);
      if (environment) {
        await environment.stop();
        store.append("environment_stopped", { pid: environment.pid ?? null });
      }
      memory.close();
    }

    // Workers on other machines published their artifacts to the shared store: the report cites them.
    if (queue) await fetchRunArtifacts(config, store, progress);
    let finalCatch: FinalCatch | undefined;
    if (finalState.status === "done") {
      finalCatch = await runFinalCatch(store.readEnvelopes(), config.system, context, options.orchestrator);
    }
    const report = buildReport({
      runId: store.runId,
      mode: options.mode,
      entries: store.readLedger().entries,
      envelopes: store.readEnvelopes(),
      state: finalState,
      finalCatch,
    });
    store.writeReport(report);
    if (finalState.status === "done") {
      store.append("run_finished", {
        status: report.status,
        findings: report.findings.total,
        cost_usd: report.budget.used_usd,
        tokens: report.budget.used_tokens,
      });
    }
    progress.line(
      `run ${store.runId} ${report.status}: ${report.findings.total} finding(s), ${report.tickets.length} ticket(s), $${report.budget.used_usd.toFixed(4)}`,
    );
    // Every machine reads the finished run, its report included, from the queue's store. Should that fail,
    // the coordinator publishes it again before it lets the run's job go.
    await publisher?.push().catch((error: unknown) => {
      progress.line(
        `run ${store.runId}: not yet in the queue's store (${error instanceof Error ? error.message : String(error)})`,
      );
    });
    return { runId: store.runId, report };
  } finally {
    await queue?.close();
  }
}

async function fetchRunArtifacts(config: LoadedConfig, store: RunStore, progress: Progress): Promise<void> {
  try {
    const artifacts = artifactStoreOf(config.system, config.dir);
    if (artifacts) await fetchArtifacts(artifacts, store);
  } catch (error) {
    progress.line(
      `run ${store.runId}: artifacts not fetched from the shared store (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}
