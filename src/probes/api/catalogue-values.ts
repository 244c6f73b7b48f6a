import type { Operation } from "../../map/system-map.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { operationKey } from "./operation-index.ts";
import { sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { buildRequest } from "./request-builder.ts";

// Values a create must reuse because the server accepts only codes it already knows (a catalogue's `sku`,
// a `currency`): read from the target's own parameterless lists, for each user, on demand. Several lists
// may carry a field of the same name with other meanings (an alert's `sku` label beside the product
// catalogue's), so each list that has one is a separate candidate, tried in turn. Lists whose documented
// answer names a wanted field are read first, then those sharing words with the create, and a list is read
// only when the candidates so far were refused: on an application with a hundred lists the catalogue is
// rarely among the first few.

const READINGS_KEY = "api:catalogue-readings";
type Readings = Map<string, Promise<Map<string, unknown> | undefined>>;

/** Lists read per user at most, across every request for values. */
const MAX_VALUE_LISTS = 60;
/** Lists offering a wanted field that a create tries, at most. */
const MAX_CANDIDATES = 4;

const FREE_TEXT =
  /^(title|name|description|body|text|content|notes?|comments?|message|summary|label|subject)$/i;

/** What one list showed: for each field, the first scalar value among its first items. */
interface Source {
  list: Operation;
  values: Map<string, unknown>;
}

interface UserValues {
  sources: Source[];
  read: Set<Operation>;
  /** Readings are chained: two creates asking at once must not read the same list twice. */
  queue: Promise<unknown>;
}

export class CatalogueValues {
  private readonly byUser = new Map<string, UserValues>();

  constructor(
    private readonly run: ProbeRun,
    private readonly listItems: (json: unknown) => unknown[],
  ) {}

  /**
   * Versions of `request` (built for `create`) with its generated codes replaced by values the target
   * showed, one per list offering them, the most promising list first; a further list is read only when
   * the caller asks past the ones read so far. Nothing when there is nothing to fill.
   */
  async *candidates(
    create: Operation,
    request: PreparedRequest,
    user: string | undefined,
  ): AsyncGenerator<PreparedRequest> {
    // Codes are strings; a number the schema generated is rarely what the server refuses.
    const body = request.body as Record<string, unknown> | undefined;
    const wanted = replaceableFields(request).filter((name) => typeof body?.[name] === "string");
    if (wanted.length === 0) return;
    const state = this.stateOf(user);
    const tried = new Set<Source>();
    const untried = () =>
      state.sources.find((source) => !tried.has(source) && wanted.some((name) => source.values.has(name)));
    while (tried.size < MAX_CANDIDATES) {
      let source = untried();
      if (!source) {
        const reading = state.queue.then(() => this.readUntil(user, state, create, wanted, untried));
        state.queue = reading.catch(() => undefined);
        await reading;
        source = untried();
        if (!source) return;
      }
      tried.add(source);
      const filled = withValues(request, source.values);
      if (filled) yield filled;
    }
  }

  private stateOf(user: string | undefined): UserValues {
    const key = user ?? "";
    let state = this.byUser.get(key);
    if (!state) {
      state = { sources: [], read: new Set(), queue: Promise.resolve() };
      this.byUser.set(key, state);
    }
    return state;
  }

  /** Reads the next lists, the most promising first, until one offers a value not tried yet. */
  private async readUntil(
    user: string | undefined,
    state: UserValues,
    create: Operation,
    wanted: readonly string[],
    found: () => Source | undefined,
  ) {
    for (const list of this.listsFor(create, wanted)) {
      if (found() || state.read.size >= MAX_VALUE_LISTS) return;
      if (state.read.has(list)) continue;
      state.read.add(list);
      const values = await this.valuesOf(user, list);
      if (values && values.size > 0) state.sources.push({ list, values });
    }
  }

  /** The list as the user saw it, read once per run whichever probe asks (each probe has its own factory). */
  private valuesOf(user: string | undefined, list: Operation): Promise<Map<string, unknown> | undefined> {
    let readings = this.run.context.shared.get(READINGS_KEY) as Readings | undefined;
    if (!readings) {
      readings = new Map();
      this.run.context.shared.set(READINGS_KEY, readings);
    }
    const key = `${user ?? ""}\n${operationKey(list)}`;
    let reading = readings.get(key);
    if (!reading) {
      reading = this.read(user, list);
      readings.set(key, reading);
    }
    return reading;
  }

  /** For each field, the first scalar value among the list's first items; paced like any probe request. */
  private async read(user: string | undefined, list: Operation): Promise<Map<string, unknown> | undefined> {
    const exchange = await sendPrepared(this.run, user, buildRequest(list, { seed: "v" }));
    if (!exchange || !isSuccess(exchange)) return undefined;
    const values = new Map<string, unknown>();
    for (const item of this.listItems(exchange.response?.json).slice(0, 20)) {
      if (!item || typeof item !== "object" || Array.isArray(item)) continue;
      for (const [name, value] of Object.entries(item)) {
        if ((typeof value === "string" || typeof value === "number") && !values.has(name))
          values.set(name, value);
      }
    }
    return values;
  }

  /** Parameterless GET lists: those whose documented answer names a wanted field, then related ones. */
  private listsFor(create: Operation, wanted: readonly string[]): Operation[] {
    const lists = this.run.map.operations.filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" &&
        !operation.graphql &&
        pathParameterNames(operation.path).length === 0 &&
        !operation.parameters.some((parameter) => parameter.required && parameter.in === "query"),
    );
    const names = (operation: Operation) => {
      const answer = JSON.stringify(operation.responses ?? {});
      return wanted.some((name) => answer.includes(`"${name}"`)) ? 1 : 0;
    };
    return lists
      .map((list, index) => ({ list, index, rank: names(list), kin: kinship(list, create) }))
      .sort((a, b) => b.rank - a.rank || b.kin - a.kin || a.index - b.index)
      .map((entry) => entry.list);
  }
}

/** Words two operations share in their paths and summaries (an order line "for a product" and the product catalogue). */
function kinship(a: Operation, b: Operation): number {
  const words = (operation: Operation) =>
    new Set(
      `${operation.path} ${operation.summary ?? ""}`
        .toLowerCase()
        .split(/[^a-z]+/)
        .filter((word) => word.length >= 4 && !STOP_WORDS.has(word))
        .map((word) => word.replace(/(ies)$/, "y").replace(/s$/, "")),
    );
  const theirs = words(b);
  return [...words(a)].filter((word) => theirs.has(word)).length;
}

const STOP_WORDS = new Set(["with", "from", "that", "this", "list", "lists", "every", "their", "your"]);

/** Body fields whose generated value a seen one may replace: codes, not free text, ids or objects. */
function replaceableFields(request: PreparedRequest): string[] {
  const body = request.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return [];
  return Object.entries(body as Record<string, unknown>)
    .filter(
      ([name, value]) => !FREE_TEXT.test(name) && !/(^|_)id$|Id$/.test(name) && typeof value !== "object",
    )
    .map(([name]) => name);
}

/**
 * The request with each replaceable field's value swapped for the one seen under its name (a number field
 * keeps its number when a string was seen); undefined when nothing would change.
 */
function withValues(request: PreparedRequest, seen: Map<string, unknown>): PreparedRequest | undefined {
  const filled: Record<string, unknown> = { ...(request.body as Record<string, unknown>) };
  let changed = false;
  for (const name of replaceableFields(request)) {
    const value = filled[name];
    const known = seen.get(name);
    if (known === undefined || known === value) continue;
    filled[name] = typeof value === "number" && typeof known === "string" ? value : known;
    changed = true;
  }
  return changed ? { ...request, body: filled } : undefined;
}
