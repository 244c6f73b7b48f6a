import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { operationKey } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { bodyKind, buildRequest, clonePrepared, requestSchema } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { queryParameters } from "../auditor/exposure-observe.ts";
import { credentialOperations } from "../auth/credential-operations.ts";
import type { ReproScript } from "../evidence/failing-test.ts";
import { creationSteps, idStepsFor, NO_CREATION, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { missingFieldsNamed, namedFieldValue } from "../http/missing-fields.ts";
import { asSchema, propertiesOf } from "../schema-values/json-schema.ts";
import { validValue } from "../schema-values/valid-value.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { baseStats, untilBudget } from "../session/probe-run.ts";
import { loadFinding } from "./load-findings.ts";
import type { LoadRun } from "./load-run.ts";
import { cleanUp, openLoadRun, sendUnpaced } from "./load-run.ts";
import type { Addressed, Caller } from "./own-writes.ts";
import { addressFor } from "./own-writes.ts";
import { nestedRepetition } from "./redos-pattern.ts";

// probe_redos: regular expressions that backtrack catastrophically (CWE-1333). Fields a server checks
// against a pattern (an email, a URL, a phone number, a username) get a run of characters the pattern
// accepts (letters, or digits for numeric fields) that ends in one no pattern accepts (`aaaa…!`): a pattern
// with nested repetition tries every way to split the run before failing, so each extra character doubles
// the time. The run grows two characters at a time from a length nothing notices; it stops at the first
// slow answer, so the worst request costs a moment, never a frozen server. Three signals before a report:
// the time grew several-fold over the last two characters, a control of the same length that fails at its
// first character answers at once, and the growth shows again when measured anew. Requests that would
// write go only to what the probe may write: creations, and updates (PUT, PATCH) of a record it has just
// created itself (which the generated test creates too) or of an account it registered where the path
// names one (own-writes.ts). A field whose documented pattern repeats a repetition is tried first, with a
// character that pattern repeats (redos-pattern.ts).

const FIELD =
  /(^|_|-)(e-?mail|mail|email_?address|url|uri|link|website|homepage|web|phone|tel|mobile|user_?name|login|handle|slug|domain|host|hostname|zip|postal(_?code)?)$/i;
/** Fields whose patterns take digits: a run of letters would fail at its first character. */
const NUMERIC_FIELD = /(phone|tel|mobile|fax|zip|postal(_?code)?)$/i;
const FIRST_LENGTH = 12;
const LAST_LENGTH = 34;
/** An answer this slow (and several times the control) is a backtracking pattern, not noise. */
const SLOW_MS = 150;
const GROWTH = 3;
/** Slow answers without growth the first climb passes over before it calls the handler slow for all. */
const FLAT_ANSWERS = 2;
/** The generated test's longer input is timed at least this slow where the probe saw it. */
const REPLAY_MS = 400;
/** The warm climb starts this many letters below the first slow answer. */
const SPAN = 4;
/** The generated test's inputs are this many times apart in expected time (and it allows twice). */
const REPLAY_RATIO = 8;
const REPLAY_FACTOR = 2;
/** Letters the replay may add past the longest input the probe sent: a bound on what one request costs. */
const MAX_EXTRA = 4;
/** Sends of each timed input in the generated test, the fastest standing for it. */
const TIMED_SENDS = 3;
const MAX_FIELDS = 12;

export interface RedosOptions {
  operation?: string;
  max_fields?: number;
  max_requests?: number;
}

interface Field {
  operation: Operation;
  name: string;
  in: "query" | "body";
  /** The character the attack repeats: one the field's pattern accepts. */
  letter: string;
  /** An update: sent only to a record the probe creates for it. */
  update: boolean;
  /** The document's own pattern for the field repeats a repetition: the strongest hint there is. */
  documented: boolean;
}

const attack = (field: Field, length: number) => `${field.letter.repeat(length)}!`;
const control = (length: number) => "!".repeat(length + 1);

/**
 * Fields a pattern checks, in the query or a JSON or form body: those whose documented pattern repeats a
 * repetition, and those whose names say a format (an email, a URL) that code often checks with one.
 */
function fieldsOf(run: ProbeRun, operation: Operation, writesAllowed: boolean): Field[] {
  const method = operation.method.toUpperCase();
  if (operation.graphql) return [];
  // Reads, creations, and updates of an item the probe makes for them (tryField): nothing it did not make.
  const update = (method === "PUT" || method === "PATCH") && /\{[^}]+\}/.test(operation.path);
  if (method !== "GET" && method !== "POST" && !update) return [];
  if (method !== "GET" && !writesAllowed) return [];
  const fields: Field[] = [];
  const consider = (name: string, where: Field["in"], schema: unknown) => {
    const pattern = asSchema(schema ?? {}).pattern;
    const nested = typeof pattern === "string" ? nestedRepetition(pattern) : undefined;
    if (!nested && !FIELD.test(name)) return;
    const letter = nested?.letter ?? (NUMERIC_FIELD.test(name) ? "1" : "a");
    fields.push({ operation, name, in: where, letter, update, documented: nested !== undefined });
  };
  for (const parameter of queryParameters(run, operation))
    consider(parameter.name, "query", parameter.schema);
  const kind = bodyKind(operation);
  if (kind === "json" || kind === "form")
    for (const [name, schema] of Object.entries(propertiesOf(requestSchema(operation) ?? {})))
      consider(name, "body", schema);
  return fields;
}

/**
 * The fields most worth their requests first: those whose documented pattern backtracks, then those of
 * operations that take no credentials (a sign-in's account field is looked up more often than checked),
 * and within each, one field of each name in turn (an app with ten sign-in variants still gets its URL and
 * phone fields tried). Stable otherwise.
 */
function byPromise(run: ProbeRun, fields: readonly Field[]): Field[] {
  const credentials = new Set(
    credentialOperations(run.map, run.target.profile).map((entry) => entry.operation),
  );
  const rank = (field: Field) => (field.documented ? 0 : credentials.has(field.operation) ? 2 : 1);
  const seen = new Map<string, number>();
  const turns = new Map<Field, number>();
  for (const field of fields) {
    const key = `${rank(field)} ${field.name.toLowerCase()}`;
    turns.set(field, seen.get(key) ?? 0);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...fields].sort((a, b) => rank(a) - rank(b) || turns.get(a)! - turns.get(b)!);
}

function withValue(base: PreparedRequest, field: Field, value: string): PreparedRequest {
  const prepared = clonePrepared(base);
  if (field.in === "query") prepared.query[field.name] = value;
  else prepared.body = { ...bodyFields(base), [field.name]: value };
  return prepared;
}

export async function probeRedos(
  context: ToolContext,
  options: RedosOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const load = await openLoadRun(context, "probe_redos", options.max_requests ?? 300);
  if (typeof load === "string") return load;
  const writesAllowed = load.run.target.writesAllowed;
  const fields = byPromise(
    load.run,
    load.run.map.operations
      .filter((operation) => !options.operation || operationKey(operation) === options.operation)
      .flatMap((operation) => fieldsOf(load.run, operation, writesAllowed)),
  ).slice(0, options.max_fields ?? MAX_FIELDS);
  const candidates: EnvelopeDraft[] = [];
  const outcomes: Array<Record<string, unknown>> = [];
  try {
    await untilBudget(load.run, async () => {
      for (const field of fields) {
        if (context.signal.aborted) break;
        const outcome = await tryField(load, field);
        outcomes.push(outcome.summary);
        if (outcome.candidate) candidates.push(outcome.candidate);
      }
    });
  } finally {
    await cleanUp(load);
  }
  return { candidates, stats: { ...baseStats(load.run), fields: outcomes } };
}

function sendAs(load: LoadRun, caller: Caller, prepared: PreparedRequest) {
  return sendUnpaced(load, caller.user, prepared, caller.account);
}

/** One request alone on the target, timed. */
async function timed(load: LoadRun, caller: Caller, prepared: PreparedRequest) {
  const exchange = await load.run.client.quietly(() => sendAs(load, caller, prepared));
  return exchange?.response && !exchange.error ? exchange : undefined;
}

/**
 * The faster of two answers when the first took `againFrom` ms or more: a slow answer alone may be the
 * machine, not the pattern (and a control slowed by it would excuse any growth, so it is always taken twice).
 */
async function timedTwice(load: LoadRun, caller: Caller, prepared: PreparedRequest, againFrom = SLOW_MS) {
  const first = await timed(load, caller, prepared);
  if (!first || first.durationMs < againFrom) return first;
  const second = await timed(load, caller, prepared);
  return second && second.durationMs < first.durationMs ? second : first;
}

async function tryField(
  load: LoadRun,
  field: Field,
): Promise<{ summary: Record<string, unknown>; candidate?: EnvelopeDraft }> {
  const key = operationKey(field.operation);
  const where = `${key} ${field.in} ${field.name}`;
  const addressed = await addressFor(load, field.operation, { update: field.update });
  if (typeof addressed === "string") return { summary: { field: where, result: addressed } };
  const { caller } = addressed;
  const seed = uniqueSeed();
  const base = buildRequest(field.operation, { seed, pathValues: addressed.values });
  // Every other field a plausible value: a handler that checks its inputs in turn must get to this one.
  for (const parameter of queryParameters(load.run, field.operation))
    base.query[parameter.name] ??= String(
      validValue(asSchema(parameter.schema ?? { type: "string" }), { seed, name: parameter.name }),
    );
  const { completed, added } = await withNamedFields(load, caller, base, field, seed);
  const times: Array<{ length: number; ms: number }> = [];
  const note = added.length > 0 ? { added_fields: added } : {};
  let flat = 0;
  for (let length = FIRST_LENGTH; length <= LAST_LENGTH; length += 2) {
    const exchange = await timedTwice(load, caller, withValue(completed, field, attack(field, length)));
    if (!exchange) return { summary: { field: where, result: "no answer", times, ...note } };
    const earlier = times.slice(-2).map((time) => time.ms);
    times.push({ length, ms: Math.round(exchange.durationMs) });
    if (exchange.durationMs < SLOW_MS) continue;
    // Against the faster of the two shorter inputs: an engine that compiled the pattern between them
    // (V8 does after a few runs) hides part of the growth in one step, not in two.
    // One slow answer without growth may be a busy machine; a second says the handler is slow for all.
    if (earlier.length === 0 || exchange.durationMs < GROWTH * Math.max(Math.min(...earlier), 10)) {
      flat += 1;
      if (flat < FLAT_ANSWERS) continue;
      return { summary: { field: where, result: "slow without growth", times, ...note } };
    }
    const confirmed = await confirm(load, field, completed, addressed, { length, exchange, times });
    return { ...confirmed, summary: { ...confirmed.summary, ...note } };
  }
  return { summary: { field: where, result: "no slowdown", times, ...note } };
}

/** Rounds of "the answer names a field the request lacked": a handler rarely checks more before a pattern. */
const NAMING_ROUNDS = 3;

/**
 * The request with the fields its answers say are missing (each given a plausible value), found by sending
 * the first, harmless input untimed: a handler that checks another field before this one never runs its
 * pattern on a request that lacks it.
 */
async function withNamedFields(
  load: LoadRun,
  caller: Caller,
  base: PreparedRequest,
  field: Field,
  seed: string,
): Promise<{ completed: PreparedRequest; added: string[] }> {
  let completed = base;
  const added: string[] = [];
  for (let round = 0; round < NAMING_ROUNDS; round += 1) {
    const probe = withValue(completed, field, attack(field, FIRST_LENGTH));
    const exchange = await sendAs(load, caller, probe);
    const sent = field.in === "query" ? Object.keys(probe.query) : Object.keys(bodyFields(probe));
    const missing = missingFieldsNamed(exchange, [...sent, field.name]).slice(0, 3);
    if (missing.length === 0) break;
    for (const name of missing) {
      completed = withValue(completed, { ...field, name }, namedFieldValue(name, seed));
      added.push(name);
    }
  }
  return { completed, added };
}

function bodyFields(prepared: PreparedRequest): Record<string, unknown> {
  const body = prepared.body;
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

async function confirm(
  load: LoadRun,
  field: Field,
  base: PreparedRequest,
  addressed: Addressed,
  found: { length: number; exchange: HttpExchange; times: Array<{ length: number; ms: number }> },
): Promise<{ summary: Record<string, unknown>; candidate?: EnvelopeDraft }> {
  const key = operationKey(field.operation);
  const where = `${key} ${field.in} ${field.name}`;
  // Engines speed a pattern up once it has run (V8 compiles it, ten times faster and more), so the
  // second signal is a second climb, warm, from four letters fewer up to the first slow answer again: it
  // must grow as steeply, beside a control of the same length that fails at its first character. The
  // climb ends a few letters past the first slow length (the compiled pattern is that much faster): a
  // pattern that backtracks is slow again there, while a busy machine's spike turns up anywhere.
  const { caller } = addressed;
  const controlled = await timedTwice(load, caller, withValue(base, field, control(found.length)), 0);
  if (!controlled) return { summary: { field: where, times: found.times, result: "no answer to confirm" } };
  const climb: Array<{ length: number; ms: number }> = [];
  let slow: { length: number; exchange: HttpExchange } | undefined;
  const highest = Math.min(LAST_LENGTH, found.length + MAX_EXTRA);
  for (let length = found.length - SPAN; length <= highest; length += 2) {
    const exchange = await timedTwice(load, caller, withValue(base, field, attack(field, length)));
    if (!exchange) break;
    const earlier = climb.slice(-2).map((time) => time.ms);
    climb.push({ length, ms: Math.round(exchange.durationMs) });
    if (exchange.durationMs < SLOW_MS) continue;
    // A slow answer short of the first climb's, without growth, is the machine: go on to that length.
    const grew = earlier.length > 0 && exchange.durationMs >= GROWTH * Math.max(Math.min(...earlier), 5);
    if (grew || length >= found.length) {
      slow = { length, exchange };
      break;
    }
  }
  const summary = {
    field: where,
    times: found.times,
    control_ms: Math.round(controlled.durationMs),
    climb_again: climb,
  };
  const before = climb.slice(-3, -1).map((time) => time.ms);
  if (
    !slow ||
    before.length === 0 ||
    slow.exchange.durationMs < GROWTH * Math.max(Math.min(...before), 5) ||
    slow.exchange.durationMs < GROWTH * Math.max(controlled.durationMs, 5)
  )
    return { summary: { ...summary, result: "did not grow again" } };
  const again = slow.exchange;
  const { account } = caller;
  const candidate = loadFinding(load, {
    defectClass: "slow-endpoint",
    operation: field.operation,
    title: `${key} backtracks on ${field.name}: ${found.length + 1} characters took ${Math.round(found.exchange.durationMs)} ms (ReDoS)`,
    summary: `${field.name} (${field.in}) of ${key} is checked by a pattern that backtracks catastrophically: ${found.times.map((time) => `${time.length + 1} chars ${time.ms} ms`).join(", ")} for a run of "${field.letter}" ending in "!", growing several-fold per two characters, while a control of the same length that fails at its first character took ${Math.round(controlled.durationMs)} ms; measured again from four letters fewer: ${climb.map((time) => `${time.length + 1} chars ${time.ms} ms`).join(", ")}.${account ? ` Sent as an account the run registered for the purpose (${account.identity}), since the path names an account.` : ""} A few more characters stall the server for seconds or minutes. Fix: a pattern without nested repetition (or a length limit before it runs), or a parser instead of a regular expression.`,
    impact:
      "One short request can keep the server's CPU busy for as long as its sender likes; a single-threaded server answers no one meanwhile.",
    severity: "high",
    confidence: 0.85,
    discriminator: field.name,
    // The test sends its own input: it replays on any data, a freshly reset target's included.
    needsProbeData: false,
    exchanges: [
      ...(account?.exchanges.map((exchange, index) => ({
        label: index === 0 ? "account registered" : "account signed in",
        exchange,
      })) ?? []),
      { label: "slow", exchange: found.exchange },
      { label: "again", exchange: again },
      { label: "control", exchange: controlled },
    ],
    measurements: { ...summary, in: field.in },
    // A generated test signs in as profile users only: an account the run registered has no test.
    ...(account ? {} : { repro: timedRepro(key, field, addressed, replayLengths(climb, slow.length), base) }),
  });
  return { summary: { ...summary, result: "redos" }, candidate };
}

/** The failing test: the shorter and the longer input, timed, after the steps that make the record they change. */
function timedRepro(
  key: string,
  field: Field,
  addressed: Addressed,
  { length, span }: { length: number; span: number },
  base: PreparedRequest,
): ReproScript {
  const attacked = withValue(base, field, attack(field, length));
  const shorter = withValue(base, field, attack(field, length - span));
  // A record the probe made is made by the test too: it replays on a freshly reset target.
  const created = addressed.resource ? creationSteps(addressed.resource) : NO_CREATION;
  const onRecord = (name: string, prepared: PreparedRequest) =>
    stepFromPrepared(name, prepared, addressed.caller.user, idStepsFor(prepared, created));
  return {
    title: `${key} checks ${field.name} in time that does not grow with the input`,
    steps: [
      ...created.steps,
      // Compiles the pattern where the engine would, so both timed inputs run the same code.
      { ...onRecord("warm-up", shorter), once: true },
      // The fastest of a few: on a busy target one slow answer to the shorter input hides the growth.
      { ...onRecord("shorter", shorter), fastestOf: TIMED_SENDS },
      { ...onRecord("longer", attacked), fastestOf: TIMED_SENDS },
    ],
    assertions: [
      {
        // A linear check takes about as long for either input; a backtracking one some sixteen times longer.
        kind: "duration_growth_below",
        steps: ["shorter", "longer"],
        factor: REPLAY_FACTOR,
        // Small: each input is timed by its fastest of three sends, so the noise left is small too.
        slackMs: 40,
        message: `${key} must check ${length + 1} characters of ${field.name} in about the time of ${length + 1 - span}`,
      },
    ],
  };
}

/**
 * The generated test's inputs, from the warm climb's growth per two letters: the longer one slow enough
 * to stand out of a busy machine's noise (REPLAY_MS, extrapolated, at most MAX_EXTRA letters past the
 * slowest the probe sent), the shorter one far enough below that a backtracking check takes REPLAY_RATIO
 * times longer for the longer. A pattern that only doubles every two letters needs twice the span of one
 * that quadruples; a linear check takes about as long for both either way.
 */
export function replayLengths(
  climb: ReadonlyArray<{ length: number; ms: number }>,
  slowest: number,
): { length: number; span: number } {
  const last = climb.at(-1);
  const before = climb.at(-2);
  const growth = last && before && before.ms > 0 ? Math.max(1.5, last.ms / before.ms) : 4;
  let length = slowest;
  let expected = last?.ms ?? REPLAY_MS;
  while (expected < REPLAY_MS && length < slowest + MAX_EXTRA) {
    length += 2;
    expected *= growth;
  }
  let span = SPAN;
  while (growth ** (span / 2) < REPLAY_RATIO && span < 3 * SPAN) span += 2;
  return { length, span: Math.min(span, length - 2) };
}
