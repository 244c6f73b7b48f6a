import {
  APICallError,
  generateText,
  jsonSchema,
  type LanguageModelUsage,
  type ModelMessage,
  RetryError,
  stepCountIs,
  type ToolSet,
  tool,
} from "ai";
import type { SeatRef } from "../config/agent-schema.ts";
import { QaasError } from "../errors.ts";
import { timeoutSignal } from "../timeout-signal.ts";
import { DEFAULT_MAX_OUTPUT_TOKENS, meteredModel } from "./call-budget.ts";
import { addUsage, priceUsage, ZERO_USAGE } from "./pricing.ts";
import {
  type SeatRequest,
  type SeatResult,
  type SeatUsage,
  type SeatWarning,
  TransientSeatError,
} from "./seat.ts";
import { checkResolvedHost, type HostLookup } from "./seat-safety.ts";

// The tool-calling loop every model seat shares. Provider seats only build a LanguageModel (at call time,
// with the key read then); everything about turns, the stop hook, usage, cost and errors lives here so a
// change of provider changes nothing else.

// The SDK's warnings are returned in SeatResult.warnings for the runner to print and ledger; its own
// console logging would interleave raw lines with the run's progress. A logger someone set is kept.
globalThis.AI_SDK_LOG_WARNINGS ??= false;

/** Per HTTP request to the model, not per agent run: tool calls between requests may take long. */
export const DEFAULT_MODEL_TIMEOUT_SECONDS = 300;

export interface ModelLoopSeat {
  backend: string;
  ref: Pick<SeatRef, "model" | "price" | "is_local" | "max_output_tokens">;
}

type LoopModel = Parameters<typeof meteredModel>[0];

export async function runModelLoop(
  unmetered: LoopModel,
  request: SeatRequest,
  seat: ModelLoopSeat,
): Promise<SeatResult> {
  // The output limit is always sent: it bounds what one call can cost, which the budget check relies on.
  const maxOutputTokens = seat.ref.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const model =
    request.budget === undefined
      ? unmetered
      : meteredModel(unmetered, request.budget, seat.ref, maxOutputTokens);
  const fatal: { error?: unknown } = {};
  const tools = buildTools(request, fatal);
  let messages: ModelMessage[] = [{ role: "user", content: request.task }];
  let turns = 0;
  let usage: SeatUsage = ZERO_USAGE;
  const warnings: SeatWarning[] = [];
  let refusedOnce = false;

  const finish = (outcome: SeatResult["outcome"], finalText: string): SeatResult => {
    const priced = priceUsage(usage, seat.ref);
    return {
      outcome,
      turns,
      usage,
      costUsd: priced.costUsd,
      ...(finalText === "" ? {} : { finalText }),
      warnings: dedupeWarnings([...warnings, ...priced.warnings]),
    };
  };

  for (;;) {
    const result = await callModel(
      () =>
        generateText({
          model,
          system: request.system,
          messages,
          tools,
          maxOutputTokens,
          // A failing tool call ends the loop at once: its error is rethrown below, not shown to the model.
          stopWhen: [stepCountIs(Math.max(1, request.maxTurns - turns)), () => fatal.error !== undefined],
          // The router owns retries and their budget; a hidden SDK retry would spend it twice.
          maxRetries: 0,
          abortSignal: request.signal,
        }),
      request.signal,
      seat,
    );
    if (fatal.error !== undefined) throw fatal.error;
    turns += result.steps.length;
    usage = addUsage(usage, fromSdkUsage(result.totalUsage));
    for (const step of result.steps) warnings.push(...fromSdkWarnings(step.warnings));
    messages = [...messages, ...result.response.messages];

    const lastStep = result.steps.at(-1);
    if (lastStep !== undefined && lastStep.toolCalls.length > 0) return finish("max_turns", result.text);

    const stopCheck = request.checkStop();
    if (stopCheck.allow) return finish("completed", result.text);
    const reason = stopCheck.reason ?? "You may not finish yet: a required step is still missing.";
    if (refusedOnce || turns >= request.maxTurns) {
      const why = refusedOnce ? "stop refused again" : "stop refused with no turn left";
      request.log(`${request.agent}: ${why} (${reason}); letting the agent go`);
      return finish("stopped", result.text);
    }
    refusedOnce = true;
    request.log(`${request.agent}: not finished yet, telling the model once: ${reason}`);
    messages = [...messages, { role: "user", content: reason }];
  }
}

function buildTools(request: SeatRequest, fatal: { error?: unknown }): ToolSet {
  const tools: ToolSet = {};
  for (const seatTool of request.tools) {
    tools[seatTool.name] = tool({
      description: seatTool.description,
      inputSchema: jsonSchema<unknown>(seatTool.inputSchema as Parameters<typeof jsonSchema>[0]),
      // A ToolResult goes back as data, `err` included: a denial is information the model can act on.
      execute: async (input: unknown) => {
        try {
          return await request.callTool(seatTool.name, input);
        } catch (error) {
          // callTool answers err() for every failure it understands; a throw means the run itself is in
          // trouble (aborted, store gone) and must not be papered over as a tool error.
          fatal.error ??= error;
          return { ok: false, error: "internal error; the run is stopping" };
        }
      },
    });
  }
  return tools;
}

async function callModel<Result>(
  call: () => Promise<Result>,
  signal: AbortSignal,
  seat: ModelLoopSeat,
): Promise<Result> {
  try {
    return await call();
  } catch (error) {
    throw classifySeatError(error, signal, seat);
  }
}

function fromSdkUsage(usage: LanguageModelUsage): SeatUsage {
  return { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 };
}

function fromSdkWarnings(warnings: ReadonlyArray<unknown> | undefined): SeatWarning[] {
  return (warnings ?? []).map((warning) => {
    const record = warning as { type?: string; feature?: string; details?: string; message?: string };
    const text = record.message ?? record.details ?? record.feature ?? "model warning";
    return record.type === "unsupported"
      ? {
          type: "unsupported",
          ...(record.feature === undefined ? {} : { feature: record.feature }),
          message: text,
        }
      : {
          type: "notice",
          ...(record.feature === undefined ? {} : { feature: record.feature }),
          message: text,
        };
  });
}

function dedupeWarnings(warnings: SeatWarning[]): SeatWarning[] {
  const seen = new Set<string>();
  return warnings.filter((warning) => {
    const key = `${warning.type}|${warning.feature ?? ""}|${warning.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const NETWORK_ERROR_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/**
 * Turns what the AI SDK throws into what the router understands: `TransientSeatError` for failures worth
 * retrying (HTTP 408/409/429/5xx, timeouts, connection resets), a `QaasError` naming the seat for the
 * rest (401, 400…). A cancelled run's abort passes through untouched.
 */
export function classifySeatError(error: unknown, signal: AbortSignal, seat: ModelLoopSeat): unknown {
  if (signal.aborted) return error;
  const label = `${seat.backend} seat (model ${seat.ref.model ?? "unnamed"})`;
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode;
    if (status === undefined) {
      return new TransientSeatError(`${label}: cannot reach ${cause.url}: ${cause.message}`, { cause });
    }
    if (cause.isRetryable || status === 408 || status === 429 || status >= 500) {
      return new TransientSeatError(`${label}: HTTP ${status} from ${cause.url}: ${cause.message}`, {
        cause,
      });
    }
    const hint =
      status === 401 || status === 403
        ? "; check the API key in the variable named by api_key_env"
        : status === 404
          ? "; check base_url and the model name"
          : "";
    return Object.assign(
      new QaasError(
        "SEAT_CALL_FAILED",
        `${label}: HTTP ${status} from ${cause.url}: ${cause.message}${hint}`,
      ),
      { cause },
    );
  }
  if (isTimeout(cause))
    return new TransientSeatError(`${label}: the model did not answer in time`, { cause });
  const networkCode = findNetworkErrorCode(cause);
  if (networkCode !== undefined)
    return new TransientSeatError(`${label}: connection failed (${networkCode})`, { cause });
  return error;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === "TimeoutError";
}

function findNetworkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_ERROR_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export interface SeatFetchOptions {
  timeoutSeconds: number;
  isLocal: boolean;
  /** Name resolution for the call-time address check (tests inject one). */
  resolve?: HostLookup;
}

/** The fetch options a seat's reference implies: its timeout and whether it is marked local. */
export function seatFetchOptions(ref: SeatRef, resolve: HostLookup | undefined): SeatFetchOptions {
  return {
    timeoutSeconds: ref.timeout_seconds ?? DEFAULT_MODEL_TIMEOUT_SECONDS,
    isLocal: ref.is_local === true,
    ...(resolve === undefined ? {} : { resolve }),
  };
}

/**
 * The fetch model seats use: it refuses a host that resolves to an address the seat may not reach, and
 * gives up on one HTTP request after `timeoutSeconds` (as well as on the caller's abort).
 */
export function seatFetch(options: SeatFetchOptions): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const refusal = await checkResolvedHost(url, options.isLocal, options.resolve);
    if (refusal !== undefined) throw new QaasError("SEAT_REFUSED", refusal);
    const timeout = Math.max(1, Math.round(options.timeoutSeconds * 1000));
    return fetch(input, { ...init, signal: timeoutSignal(timeout, init?.signal ?? undefined) });
  };
}

/**
 * Reads a seat's key from the environment at call time, never earlier, so a key is neither stored in a
 * seat object nor needed to build one. `undefined` when the seat names no variable.
 */
export function readApiKey(variable: string | undefined, backend: string): string | undefined {
  if (variable === undefined) return undefined;
  const value = process.env[variable];
  if (value === undefined || value.trim() === "") {
    throw new QaasError(
      "SEAT_KEY_MISSING",
      `the ${backend} seat reads its API key from the environment variable ${variable}, which is not set; ` +
        `export ${variable} before the run, or point api_key_env at the variable that holds the key`,
    );
  }
  return value;
}
