import type { LoadedConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import type { RunPlan } from "../router/run-state.ts";

export interface PlanOptions {
  mode: string;
  /** Run only these agents of the roster (`--agent`). */
  only?: string[];
  tickets?: string[];
}

/** The router's plan for one run: the mode's roster with what the router needs to know of each agent. */
export function buildPlan(config: LoadedConfig, options: PlanOptions): RunPlan {
  const mode = config.system.run_modes[options.mode];
  if (!mode) {
    throw new QaasError(
      "UNKNOWN_MODE",
      `no run mode "${options.mode}" in ${config.dir}/system.yaml; modes: ${Object.keys(config.system.run_modes).join(", ")}`,
    );
  }
  let roster = mode.roster;
  if (options.only && options.only.length > 0) {
    const unknown = options.only.filter((name) => !config.agents.has(name));
    if (unknown.length > 0) {
      throw new QaasError(
        "UNKNOWN_AGENT",
        `no agent ${unknown.join(", ")}; agents: ${[...config.agents.keys()].join(", ")}`,
      );
    }
    roster = options.only;
  }
  return {
    agents: roster.map((name) => {
      const loaded = config.agents.get(name);
      if (!loaded)
        throw new QaasError(
          "UNKNOWN_AGENT",
          `run mode ${options.mode} names agent ${name}, which has no YAML`,
        );
      const agent = loaded.config;
      return {
        name,
        phase: agent.phase,
        cardinality: agent.cardinality,
        exclusive: agent.exclusive,
        ...(agent.loop_role ? { loopRole: agent.loop_role } : {}),
        budget: { ...agent.budget },
      };
    }),
    concurrency: config.system.concurrency,
    budget: { ...mode.budget },
    retries: { attempts: config.system.retries.attempts, backoffMs: config.system.retries.backoff_ms },
    loop: { maxReopens: config.system.loop.max_reopens, maxRoundTrips: config.system.loop.max_round_trips },
    tickets: (options.tickets ?? []).map((key) => ({ key })),
  };
}
