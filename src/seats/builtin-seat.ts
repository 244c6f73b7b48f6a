import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Playbook, PlaybookSession } from "../agents/playbook.ts";
import { QaasError } from "../errors.ts";
import type { ToolResult } from "../tools/result.ts";
import { SEAT_SPECIFICATION_VERSION, type SeatRequest, type SeatResult, type WorkerSeat } from "./seat.ts";

/**
 * The default seat: no model, no key, no cost. It runs the agent's deterministic playbook with the same
 * guarded `callTool` a model would use.
 */
export class BuiltinSeat implements WorkerSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend = "builtin";
  readonly model = "playbook";

  async run(request: SeatRequest): Promise<SeatResult> {
    const playbook = await loadPlaybook(request);
    let turns = 0;
    const session: PlaybookSession = {
      agent: request.agent,
      task: request.taskData,
      call: <Data>(tool: string, input: unknown) => {
        turns += 1;
        return request.callTool(tool, input) as Promise<ToolResult<Data>>;
      },
      log: (message) => request.log(message),
      signal: request.signal,
    };
    await playbook(session);

    const stopCheck = request.checkStop();
    const result: SeatResult = {
      outcome: "completed",
      turns,
      usage: { inputTokens: 0, outputTokens: 0 },
      costUsd: 0,
      warnings: [],
    };
    if (stopCheck.allow) return result;
    // A deterministic playbook would do the same thing again: telling it the reason changes nothing.
    request.log(
      `${request.agent}: playbook finished but may not stop yet (${stopCheck.reason ?? "no reason given"}); ` +
        "a playbook cannot be talked round, letting it go",
    );
    return { ...result, outcome: "stopped" };
  }
}

async function loadPlaybook(request: SeatRequest): Promise<Playbook> {
  const modulePath = request.playbook;
  if (modulePath === undefined || modulePath === "") {
    throw new QaasError(
      "PLAYBOOK_MISSING",
      `agent ${request.agent} runs on the builtin seat but has no playbook; add src/agents/playbooks/` +
        `<name>.ts (or set "playbook:" in its YAML), or give the agent a model seat`,
    );
  }
  if (!path.isAbsolute(modulePath)) {
    throw new QaasError(
      "PLAYBOOK_INVALID",
      `agent ${request.agent}: playbook path "${modulePath}" must be absolute (the registry resolves it)`,
    );
  }
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(modulePath).href)) as { default?: unknown };
  } catch (error) {
    throw Object.assign(
      new QaasError(
        "PLAYBOOK_LOAD_FAILED",
        `agent ${request.agent}: cannot load playbook ${modulePath}: ${error instanceof Error ? error.message : String(error)}`,
      ),
      { cause: error },
    );
  }
  if (typeof loaded.default !== "function") {
    throw new QaasError(
      "PLAYBOOK_INVALID",
      `agent ${request.agent}: playbook ${modulePath} must default-export a function ` +
        "(export default definePlaybook(async (session) => { ... }))",
    );
  }
  return loaded.default as Playbook;
}
