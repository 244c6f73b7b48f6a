import type { SeatRef } from "../config/agent-schema.ts";
import { SeatRefSchema } from "../config/agent-schema.ts";
import type { LoadedAgent, LoadedConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import { createWorkerSeat } from "../seats/create-seat.ts";
import type { WorkerSeat } from "../seats/seat.ts";

/** Makes the seat for an agent; tests replace it to put MockSeats in seats. */
export type SeatFactory = (ref: SeatRef, agent: LoadedAgent) => WorkerSeat;

/**
 * Which seat an agent sits in: `--seat` for the whole run, else the agent's own, else the system's worker
 * seat. A seat is built once per agent and reused; building never needs the network or a key.
 */
export function seatResolver(
  config: LoadedConfig,
  seatOption: string | undefined,
  factory: SeatFactory | undefined,
  notice: (message: string) => void,
): (agent: LoadedAgent) => { seat: WorkerSeat; ref: SeatRef } {
  const override = seatOption ? parseSeatOption(seatOption, config) : undefined;
  const built = new Map<string, { seat: WorkerSeat; ref: SeatRef }>();
  return (agent) => {
    const cached = built.get(agent.config.name);
    if (cached) return cached;
    const ref = override ?? agent.config.seat ?? config.system.seats.worker;
    let seat: WorkerSeat;
    if (factory) {
      seat = factory(ref, agent);
    } else {
      const created = createWorkerSeat(ref);
      for (const warning of created.warnings) notice(`${agent.config.name}: ${warning.message}`);
      seat = created.seat;
    }
    const result = { seat, ref };
    built.set(agent.config.name, result);
    return result;
  };
}

/** `builtin`, `anthropic:claude-sonnet-4-5`, `openai-compatible:llama3.1` — the rest of the ref comes from system.yaml's worker seat when the backend matches. */
export function parseSeatOption(option: string, config: LoadedConfig): SeatRef {
  const [backend, ...modelParts] = option.split(":");
  const model = modelParts.join(":") || undefined;
  const worker = config.system.seats.worker;
  const base = worker.backend === backend ? worker : {};
  const parsed = SeatRefSchema.safeParse({ ...base, backend, ...(model ? { model } : {}) });
  if (!parsed.success) {
    throw new QaasError(
      "BAD_SEAT",
      `--seat ${option}: backend must be one of builtin, openai-compatible, anthropic, claude-code (optionally :model)`,
    );
  }
  return parsed.data;
}
