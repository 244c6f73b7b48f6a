import { AgentConfigSchema } from "../config/agent-schema.ts";
import { loadConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import { DefectMemory } from "../memory/defect-memory.ts";
import { createRunContext } from "../run/run-context.ts";
import { RunStore } from "../store/run-store.ts";
import { SystemMapStore } from "../store/system-map-store.ts";
import { type PreparedEnvironment, prepareEnvironment } from "../targets/environment.ts";
import { loadTarget } from "../targets/load-target.ts";
import type { ToolContext } from "../tools/context.ts";
import { closeRunServices } from "../tools/run-end.ts";
import { parseBudget } from "./budget.ts";
import { walkCharter } from "./charter-walker.ts";
import { renderReport } from "./report.ts";
import {
  type ExploreFinding,
  type ExploreRunFile,
  type ExploreStep,
  newRunFile,
  RunFileWriter,
} from "./run-file.ts";
import { EXPLORE_TOOLS, guardedStepCaller } from "./step-caller.ts";
import { type ExploreVerdict, verdictOf } from "./verdict.ts";

// One exploratory run, start to finish, the way `qaas run` does it: load the target, open a run in the
// store, bring the environment up, walk the charter with the guarded step tools, and always close the
// browser and the environment, whatever happened. The run file lives in the run's folder.

export const EXPLORER_AGENT = "EXPLORER";

export interface ExploreOptions {
  home: string;
  charter: string | undefined;
  target: string | undefined;
  persona?: string;
  budget?: string;
  configDir?: string;
  signal?: AbortSignal;
  /** Progress lines (one per step); silent when absent. */
  log?(line: string): void;
}

export interface ExploreOutcome {
  runId: string;
  runDir: string;
  run: ExploreRunFile;
  verdict: ExploreVerdict;
  report: string;
}

export async function exploreTarget(options: ExploreOptions): Promise<ExploreOutcome> {
  const charter = options.charter?.trim();
  if (!charter) throw new QaasError("NO_CHARTER", 'qaas explore needs --charter "<what to explore>"');
  if (!options.target)
    throw new QaasError("NO_TARGET", "qaas explore needs --target <name|path> (see config/targets/)");
  const { budget, clamped } = parseBudget(options.budget);
  const config = loadConfig(options.configDir);
  const target = loadTarget(options.target, { configDir: config.dir });
  const persona = options.persona?.trim() || "anonymous";
  const log = options.log ?? (() => {});
  for (const clamp of clamped) log(`budget ${clamp.field}: asked ${clamp.asked}, using ${clamp.used}`);

  const store = RunStore.create(options.home, { mode: "explore", target: target.profile.name });
  store.append("run_started", {
    run_id: store.runId,
    mode: "explore",
    target: target.profile.name,
    target_file: target.file,
    config_dir: config.dir,
    charter,
    persona,
  });
  const memory = DefectMemory.open(store.home);
  const runContext = createRunContext({
    store,
    system: config.system,
    target,
    memory,
    maps: new SystemMapStore(store.home),
    signal: options.signal ?? new AbortController().signal,
  });
  const context: ToolContext = {
    ...runContext,
    agent: AgentConfigSchema.parse({
      name: EXPLORER_AGENT,
      description: "walks a charter through the browser step tools",
      layer: "discover",
      phase: "discover",
      tools: [...EXPLORE_TOOLS],
    }),
    guard: { ticketsFiled: 0, filesChanged: new Map() },
  };
  const writer = new RunFileWriter(store.dir, newRunFile({ goal: charter, persona, budget, clamped }));
  log(`explore ${store.runId}: target ${target.profile.name}, as ${persona}, run file ${writer.file}`);

  let environment: PreparedEnvironment | undefined;
  let run: ExploreRunFile;
  try {
    try {
      environment = await prepareEnvironment(target, { home: store.home, log });
    } catch (error) {
      if (!(error instanceof QaasError)) throw error;
      // A target that is not up is the setup, not the product: one blocked step, and the run ends.
      const step = writer.addStep({
        title: "bring the target environment up",
        status: "blocked",
        code: "ENVIRONMENT_UNAVAILABLE",
        detail: error.message,
      });
      announce(log, step, undefined);
      run = writer.end("target-unreachable");
      return finish(store, run);
    }
    run = await walkCharter({
      charter,
      persona,
      entry: target.profile.ui?.entry ?? "/",
      call: guardedStepCaller(context, `${EXPLORER_AGENT.toLowerCase()}-${store.runId}`),
      writer,
      ...(options.signal ? { signal: options.signal } : {}),
      onStep: (step, finding) => announce(log, step, finding),
    });
  } finally {
    await closeRunServices(context);
    await environment?.stop();
    memory.close();
  }
  return finish(store, run);
}

/** Closes the run in the ledger too, so `qaas runs` lists it with its verdict instead of "incomplete". */
function finish(store: RunStore, run: ExploreRunFile): ExploreOutcome {
  const verdict = verdictOf(run);
  store.append("run_finished", {
    status: verdict,
    findings: run.findings.length,
    cost_usd: 0,
    tokens: run.usage.tokens,
    ended: run.ended?.reason ?? null,
  });
  return { runId: store.runId, runDir: store.dir, run, verdict, report: renderReport(run) };
}

function announce(log: (line: string) => void, step: ExploreStep, finding: ExploreFinding | undefined): void {
  const code = step.code ? ` [${step.code}]` : "";
  log(`step ${step.index} ${step.status}${code}: ${step.title}${step.detail ? ` (${step.detail})` : ""}`);
  if (finding) log(`  finding: [${finding.kind} sev ${finding.severity}] ${finding.title}`);
}
