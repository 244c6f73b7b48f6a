import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { familyOfParameter, isAuthOperation, isSafeWrite } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import type { CreatedResource } from "../api/resource-factory.ts";
import { markersIn, ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import { RecordCreator } from "../data/record-creator.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { EventNeedles } from "./frames.ts";

// Causing events through the target's own API, touching only data the probe creates: a documented,
// safe create operation (never sign-in, reset, delete-all and the like), then updates of that same
// resource. Each event carries unique markers (values with a random seed) so a frame about it can be
// recognised on any socket.

/** Where a record made under a parent is listed (its item path may not share the parent's values). */
export interface Listing {
  operation: Operation;
  pathValues: Record<string, string>;
}

export interface DrivenEvent {
  label: string;
  /** Probe clock when the request left. */
  at: number;
  needles: EventNeedles;
  exchange: HttpExchange;
  prepared: PreparedRequest;
  resource: CreatedResource;
  family: ResourceFamily;
  user: string | undefined;
  /** The list the record appears in, when it differs from its own family's (nested creations). */
  listing?: Listing;
}

/** Channel path words that say nothing about what the channel carries. */
const GENERIC_SEGMENT =
  /^(ws|wss|socket|sockets|websocket|websockets|realtime|live|events?|stream|streams|updates?|feed|api|v\d+|sub|subscribe|notifications?|changes|hub|channel|channels|\{[^}]+\})$/i;

/** A path segment's forms: the whole (`order-items` → `orderitem`) and each of its words (`order`, `item`). */
function segmentWords(segment: string): string[] {
  const parts = segment.split(/[-_.]/).filter((part) => part && !GENERIC_SEGMENT.test(part));
  return [...new Set([stem(segment), ...(parts.length > 1 ? parts.map(stem) : [])])];
}

/** Every form of every meaningful segment of a path (`/ws/order-items` → orderitem, order, item). */
function wordsOf(path: string): Set<string> {
  return new Set(
    path
      .split(/[/\s]+/)
      .filter((segment) => segment && !GENERIC_SEGMENT.test(segment))
      .flatMap(segmentWords),
  );
}

function stem(word: string): string {
  return word
    .toLowerCase()
    .replace(/[-_]/g, "")
    .replace(/(ies)$/, "y")
    .replace(/(es|s)$/, "");
}

/** Markers of the records each realtime probe of the run made, run-wide: probes running at once tell their
 * frames apart by them (see `EventNeedles.foreign`). */
type CausedMarkers = Map<object, Set<string>>;

function causedMarkersOf(run: ProbeRun): CausedMarkers {
  const key = `realtime:caused-markers:${run.target.baseUrl}`;
  let caused = run.context.shared.get(key) as CausedMarkers | undefined;
  if (!caused) {
    caused = new Map();
    run.context.shared.set(key, caused);
  }
  return caused;
}

export class EventDriver {
  readonly factory: ResourceFactory;
  /** Records the factory cannot make: created under a parent, addressed by their own id elsewhere. */
  readonly creator: RecordCreator;
  readonly events: DrivenEvent[] = [];
  private readonly caused: CausedMarkers;
  private readonly mine = new Set<string>();

  constructor(
    private readonly run: ProbeRun,
    private readonly clock: () => number,
  ) {
    this.factory = new ResourceFactory(run);
    this.creator = new RecordCreator(run);
    this.caused = causedMarkersOf(run);
    this.caused.set(this, this.mine);
  }

  /** Whether `text` carries a marker of a record another probe of the run made. */
  private readonly foreign = (text: string): boolean => {
    for (const [driver, markers] of this.caused) {
      if (driver === this) continue;
      for (const marker of markers) if (text.includes(marker)) return true;
    }
    return false;
  };

  /** Keeps the markers of every record this probe made so far (parents included). */
  private remember(markers: readonly string[]): void {
    for (const marker of markers) if (marker.length >= 6) this.mine.add(marker);
    for (const resource of this.factory.created)
      for (const marker of resource.markers) if (marker.length >= 6) this.mine.add(marker);
  }

  get writesAllowed(): boolean {
    return this.run.target.writesAllowed;
  }

  /**
   * Families whose create operation the probe may call, those named like the channel first
   * (`/ws/orders` → `/api/orders`), then top-level collections before nested ones. A collection whose
   * words the channel names more of goes before one sharing only its last word (`/library-molds` →
   * `/api/library/molds` before `/api/logistics/molds`). `hints` are weaker words (the event names a
   * socket.io server emits, which may belong to any of its namespaces): they only break ties.
   */
  families(channel: string, preferred?: string, hints = ""): ResourceFamily[] {
    const words = wordsOf(channel);
    const hinted = wordsOf(hints);
    const score = (family: ResourceFamily): number => {
      if (family.collection === preferred) return -1_000_000;
      const segments = family.collection
        .split("/")
        .filter((segment) => segment && !GENERIC_SEGMENT.test(segment))
        .map(segmentWords);
      const last = segments.at(-1) ?? [];
      const hit = (set: Set<string>) => (forms: string[]) => forms.some((form) => set.has(form));
      const named = segments.filter(hit(words)).length;
      const hintedCount = segments.filter(hit(hinted)).length;
      // The last word first (what the collection is), then how many of its words the channel names.
      return -((hit(words)(last) ? 1000 : 0) + named * 100 + (hit(hinted)(last) ? 10 : 0) + hintedCount);
    };
    return this.factory.families
      .filter(
        (family) =>
          family.create &&
          this.factory.canCreate(family) &&
          !isAuthOperation(family.create) &&
          (this.factoryCreates(family) || this.creator.creatable(family)),
      )
      .map((family, index) => ({ family, index, score: score(family) }))
      .sort(
        (left, right) =>
          left.score - right.score ||
          left.family.parentParameters.length - right.family.parentParameters.length ||
          left.index - right.index,
      )
      .map((entry) => entry.family);
  }

  /** Creates a resource of `family` as `user`: one event. */
  async create(
    family: ResourceFamily,
    user: string | undefined,
    label = `create ${family.collection}`,
  ): Promise<DrivenEvent | undefined> {
    const at = this.clock();
    const made = await this.createResource(family, user);
    if (!made) return undefined;
    const { resource, listing } = made;
    this.remember(resource.markers);
    const event: DrivenEvent = {
      label,
      at,
      needles: { markers: resource.markers, id: resource.id, foreign: this.foreign },
      exchange: resource.exchange,
      prepared: resource.request,
      resource,
      family,
      user,
      ...(listing ? { listing } : {}),
    };
    this.events.push(event);
    return event;
  }

  /** Whether the resource factory can make a record of `family` with parents of its own. */
  private factoryCreates(family: ResourceFamily): boolean {
    if (!family.idParameter) return false;
    return family.parentParameters.every((parameter) =>
      this.factory.canCreate(familyOfParameter(this.factory.families, family.collection, parameter)),
    );
  }

  private async createResource(
    family: ResourceFamily,
    user: string | undefined,
  ): Promise<{ resource: CreatedResource; listing?: Listing } | undefined> {
    if (this.factoryCreates(family)) {
      const resource = await this.factory.create(family, user);
      return resource ? { resource } : undefined;
    }
    const record = (await this.creator.create(family, user)).record;
    if (!record) return undefined;
    // Read through its own item path (`/comments/{id}`), listed under its parent (`/tasks/{id}/comments`).
    const item = record.itemFamily;
    const readable: ResourceFamily = item ? { ...item, create: family.create, list: item.list } : family;
    const resource: CreatedResource = {
      family: readable,
      id: record.id,
      owner: user,
      parents: [],
      pathValues: record.itemValues ?? record.collectionValues,
      request: record.request,
      created: record.exchange.response?.json,
      markers: record.markers,
      exchange: record.exchange,
    };
    const listing = family.list ? { operation: family.list, pathValues: record.collectionValues } : undefined;
    return { resource, ...(listing ? { listing } : {}) };
  }

  /** The update operation used to cause further events on one resource (PATCH before PUT). */
  updateOf(family: ResourceFamily): Operation | undefined {
    const safe = family.updates.filter((operation) => isSafeWrite(operation));
    return safe.find((operation) => operation.method.toUpperCase() === "PATCH") ?? safe[0];
  }

  /** Changes the resource of `previous` as `user`, with fresh markers: one more event about it. */
  async update(
    previous: DrivenEvent,
    user: string | undefined,
    label: string,
  ): Promise<DrivenEvent | undefined> {
    const operation = this.updateOf(previous.family);
    if (!operation || !this.writesAllowed) return undefined;
    const seed = uniqueSeed();
    const prepared = buildRequest(operation, { seed, pathValues: previous.resource.pathValues });
    const at = this.clock();
    const exchange = await send(this.run, user, toSpec(this.run.target.baseUrl, prepared));
    if (!exchange || !isSuccess(exchange)) return undefined;
    const markers = markersIn(prepared.body, seed);
    this.remember(markers);
    const event: DrivenEvent = {
      label,
      at,
      needles:
        markers.length > 0 ? { markers } : { markers: [], id: previous.resource.id, foreign: this.foreign },
      exchange,
      prepared,
      resource: previous.resource,
      family: previous.family,
      user,
    };
    this.events.push(event);
    return event;
  }

  /** One more event like `previous`: an update of its resource when possible, else a new resource. */
  async another(
    previous: DrivenEvent,
    user: string | undefined,
    label: string,
    prefer: "update" | "create",
  ): Promise<DrivenEvent | undefined> {
    if (prefer === "update" && this.updateOf(previous.family)) {
      const updated = await this.update(previous, user, label);
      if (updated) return updated;
    }
    return this.create(previous.family, user, label);
  }
}
