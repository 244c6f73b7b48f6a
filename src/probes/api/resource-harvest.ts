import type { Operation } from "../../map/system-map.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { isAuthOperation, lastStaticSegment, nounOf } from "./operation-index.ts";
import { sendPrepared } from "./probe-support.ts";
import { buildRequest } from "./request-builder.ts";

// Ids a user can already see, for the item operations nothing else can address (no create, no list of
// their own): the user's own id from the sign-in answer and "me"-style endpoints, the ids of items in the
// user's collection reads, and `<name>_id` references inside those answers (`assignee_id` → a user).
// Harvested ids are for reads only: the probe never changes or deletes what it did not create.

/** Paths that answer about the caller: their id is the id of a user-like resource. */
const SELF_SEGMENT =
  /^(me|self|whoami|current|current-?user|myself|profile|my-?profile|account|my-?account|userinfo)$/i;
/** Fields that name a person: their id is a user id whatever the field is called. */
const PERSON_NOUN =
  /^(user|owner|assignee|author|creator|reporter|member|manager|reviewer|approver|sender|recipient|requester|actor|person|account|employee|colleague|createdby|updatedby|assignedto|invitedby)$/;
/** Collections of people, best first. */
const PERSON_COLLECTIONS = ["user", "account", "member", "person", "profile", "employee", "colleague"];
const REFERENCE_KEY = /^(.+?)[_-]?(id|Id|ID)$/;
const WRAPPER_KEY = /^(items|data|results|records|rows|entries|content|list)$/i;
const ID_KEY = /^(id|_id|uuid)$/;
const MAX_IDS_PER_FAMILY = 50;
const MAX_READS = 24;

type Found = Map<ResourceFamily, string[]>;

/** Whether a family's items are people (users, accounts, members, profiles). */
export function isPersonFamily(family: ResourceFamily): boolean {
  return PERSON_COLLECTIONS.includes(nounOf(lastStaticSegment(family.collection) ?? ""));
}

/** Per user, staged so a family found early costs no further reads: self answers, then lists. */
export class IdHarvest {
  private readonly stages = new Map<string, Promise<Found>>();
  private readonly selves = new Map<string, Promise<unknown[]>>();

  constructor(
    private readonly run: ProbeRun,
    private readonly families: readonly ResourceFamily[],
  ) {}

  /**
   * Ids of `family` that `user` saw, own id first for user-like families; [] when none. Stops at the first
   * stage that yields any unless `every` asks for all of them (other users' ids come from the later ones).
   */
  async idsFor(
    family: ResourceFamily,
    user: string | undefined,
    options: { every?: boolean } = {},
  ): Promise<string[]> {
    const wanted = lastStaticSegment(family.collection);
    const all: string[] = [];
    for (let stage = 0; stage < 3; stage += 1) {
      const found = await this.stage(user, stage, wanted ? nounOf(wanted) : "");
      for (const id of found.get(family) ?? []) if (!all.includes(id)) all.push(id);
      if (all.length > 0 && !options.every) return all;
    }
    return all;
  }

  /** The family a reference stem (`project`, `assignee`) or a key (`user`) names, if any. */
  familyForStem(stem: string): ResourceFamily | undefined {
    return this.familiesForStem(stem)[0];
  }

  /**
   * Every family a stem names, shortest collection first: an app may address one noun at several paths
   * (`/people/{id}` under two areas), and each is a place the id works.
   */
  familiesForStem(stem: string): ResourceFamily[] {
    const noun = nounOf(stem);
    const addressable = this.families
      .filter((family) => family.item && family.idParameter && family.parentParameters.length === 0)
      .sort((a, b) => a.collection.length - b.collection.length);
    const named = (wanted: string) =>
      addressable.filter((family) => nounOf(lastStaticSegment(family.collection) ?? "") === wanted);
    const byName = named(noun);
    if (byName.length > 0 || !PERSON_NOUN.test(noun)) return byName;
    for (const person of PERSON_COLLECTIONS) {
      const found = named(person);
      if (found.length > 0) return found;
    }
    return [];
  }

  /**
   * What the application says about `user` itself: the sign-in answer and every "me"-like read, in that
   * order (cached per user).
   */
  selfAnswers(user: string): Promise<unknown[]> {
    let pending = this.selves.get(user);
    if (!pending) {
      pending = (async () => {
        const answers: unknown[] = [];
        const credential = await this.run.sessions.signIn(user, this.run.client).catch(() => undefined);
        const signIn = credential?.exchange?.response?.json;
        if (signIn && typeof signIn === "object") answers.push(signIn);
        await this.read(user, this.selfReads(), (json) => {
          if (json && typeof json === "object" && !Array.isArray(json)) answers.push(json);
        });
        return answers;
      })();
      this.selves.set(user, pending);
    }
    return pending;
  }

  /** `user`'s own id: the top-level id of a "me" answer, else of a `user`-like object in the sign-in answer. */
  async ownId(user: string): Promise<string | undefined> {
    const answers = (await this.selfAnswers(user)).filter(
      (answer): answer is Record<string, unknown> => Boolean(answer) && typeof answer === "object",
    );
    for (const answer of answers) {
      const own = scalarId(idValue(answer));
      if (own !== undefined) return own;
    }
    for (const answer of answers) {
      for (const [key, inner] of Object.entries(answer)) {
        if (!PERSON_NOUN.test(nounOf(key)) || !inner || typeof inner !== "object") continue;
        const nested = scalarId(idValue(inner as Record<string, unknown>));
        if (nested !== undefined) return nested;
      }
    }
    return undefined;
  }

  /**
   * The value `user`'s own answers give for a path parameter no resource family lists (`{org}` in
   * `/orgs/{org}/invoices` when nothing lists orgs): `org_id`/`orgId` in a "me" answer, an `org: {id}`
   * object, or the first of `orgs: [{id}]`. The caller's own parent, never a guess.
   */
  async selfReference(user: string, parameter: string): Promise<string | undefined> {
    const stem = parameter.match(REFERENCE_KEY)?.[1] ?? parameter;
    const wanted = nounOf(stem);
    if (wanted.length < 2) return undefined;
    const matches = (key: string) => {
      const noun = nounOf(key.match(REFERENCE_KEY)?.[1] ?? key);
      return (
        noun === wanted ||
        (noun.length >= 3 && wanted.length >= 3 && (noun.startsWith(wanted) || wanted.startsWith(noun)))
      );
    };
    for (const answer of await this.selfAnswers(user)) {
      const found = referenceIn(answer, matches, 0);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private stage(user: string | undefined, stage: number, noun: string): Promise<Found> {
    const key = `${user ?? ""}\u0000${stage}${stage === 1 ? `\u0000${noun}` : ""}`;
    let pending = this.stages.get(key);
    if (!pending) {
      pending = this.collect(user, stage, noun);
      this.stages.set(key, pending);
    }
    return pending;
  }

  private async collect(user: string | undefined, stage: number, noun: string): Promise<Found> {
    const found: Found = new Map();
    const add = (family: ResourceFamily | undefined, id: unknown) => {
      if (!family) return;
      const text = typeof id === "number" ? String(id) : typeof id === "string" ? id : undefined;
      if (!text || text.length > 64) return;
      const ids = found.get(family) ?? [];
      if (!ids.includes(text) && ids.length < MAX_IDS_PER_FAMILY) ids.push(text);
      found.set(family, ids);
    };
    const reads = this.collectionReads();
    if (stage === 0) {
      if (user !== undefined) {
        for (const answer of await this.selfAnswers(user)) this.harvestSelf(answer, add);
      } else {
        await this.read(user, this.selfReads(), (json) => this.harvestSelf(json, add));
      }
      return found;
    }
    const lists = reads.filter((operation) => !SELF_SEGMENT.test(lastStaticSegment(operation.path) ?? ""));
    const sameNoun = (operation: Operation) => nounOf(lastStaticSegment(operation.path) ?? "") === noun;
    // Lists named like the family first; every other list only when those showed none.
    const chosen = stage === 1 ? lists.filter(sameNoun) : lists;
    await this.read(user, chosen.slice(0, MAX_READS), (json, operation) => {
      const listFamily = this.listFamily(operation);
      for (const item of itemsOf(json)) {
        if (item && typeof item === "object" && !Array.isArray(item)) {
          add(listFamily, idValue(item as Record<string, unknown>));
        }
      }
      this.harvestReferences(json, add, 0);
    });
    return found;
  }

  /** Reads that answer about the caller ("me", "profile", "whoami"). */
  private selfReads(): Operation[] {
    return this.collectionReads().filter((operation) =>
      SELF_SEGMENT.test(lastStaticSegment(operation.path) ?? ""),
    );
  }

  /**
   * Reads without path parameters the user may make: the places ids are visible from. Documented ones
   * when there is a document (pages and debug routes found in the source carry no ids worth a request).
   */
  private collectionReads(): Operation[] {
    const reads = this.run.map.operations.filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" &&
        pathParameterNames(operation.path).length === 0 &&
        operation.security !== "public" &&
        !isAuthOperation(operation),
    );
    const documented = reads.filter((operation) => operation.documented);
    return documented.length > 0 ? documented : reads;
  }

  private async read(
    user: string | undefined,
    operations: Operation[],
    visit: (json: unknown, operation: Operation) => void,
  ): Promise<void> {
    await mapConcurrent(operations, 4, async (operation) => {
      const prepared = buildRequest(operation, { seed: "harvest" });
      const exchange = await sendPrepared(this.run, user, prepared);
      if (exchange && isSuccess(exchange) && exchange.response?.json !== undefined)
        visit(exchange.response.json, operation);
    });
  }

  /** A "me" answer: its top-level id is the caller's, nested `user: {id}`-like objects name their family. */
  private harvestSelf(json: unknown, add: (family: ResourceFamily | undefined, id: unknown) => void): void {
    if (!json || typeof json !== "object" || Array.isArray(json)) return;
    const own = idValue(json as Record<string, unknown>);
    if (own !== undefined) for (const family of this.familiesForStem("user")) add(family, own);
    this.harvestReferences(json, add, 0);
  }

  private harvestReferences(
    value: unknown,
    add: (family: ResourceFamily | undefined, id: unknown) => void,
    depth: number,
  ): void {
    if (depth > 4 || !value || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const item of value.slice(0, 100)) this.harvestReferences(item, add, depth + 1);
      return;
    }
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      const stem = key.match(REFERENCE_KEY)?.[1];
      if (stem && (typeof inner === "number" || typeof inner === "string")) {
        add(this.familyForStem(stem), inner);
        continue;
      }
      if (inner && typeof inner === "object" && !WRAPPER_KEY.test(key)) {
        const family = this.familyForStem(key);
        if (Array.isArray(inner)) {
          for (const item of inner.slice(0, 100))
            if (item && typeof item === "object") add(family, idValue(item as Record<string, unknown>));
        } else add(family, idValue(inner as Record<string, unknown>));
      }
      this.harvestReferences(inner, add, depth + 1);
    }
  }

  /** The family a list's items belong to: the list's own, else the one its last segment names. */
  private listFamily(operation: Operation): ResourceFamily | undefined {
    const path = toTemplateForm(operation.path).replace(/\/+$/, "");
    const own = this.families.find((family) => family.collection === path && family.item);
    return own ?? this.familyForStem(lastStaticSegment(path) ?? "");
  }
}

function scalarId(value: unknown): string | undefined {
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.length > 0 && value.length <= 64 ? value : undefined;
}

/** A `<stem>_id` scalar, a `<stem>: {id}` object or the first of `<stem>s: [{id}]` the predicate names. */
function referenceIn(value: unknown, matches: (key: string) => boolean, depth: number): string | undefined {
  if (depth > 3 || !value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  for (const [key, inner] of Object.entries(record)) {
    if (ID_KEY.test(key) || !matches(key)) continue;
    if (REFERENCE_KEY.test(key)) {
      const found = scalarId(inner);
      if (found !== undefined) return found;
    } else if (Array.isArray(inner)) {
      const first = inner.find((item) => item && typeof item === "object");
      const found = first ? scalarId(idValue(first as Record<string, unknown>)) : undefined;
      if (found !== undefined) return found;
    } else if (inner && typeof inner === "object") {
      const found = scalarId(idValue(inner as Record<string, unknown>));
      if (found !== undefined) return found;
    }
  }
  for (const [key, inner] of Object.entries(record)) {
    if (inner && typeof inner === "object" && !Array.isArray(inner) && !WRAPPER_KEY.test(key)) {
      const found = referenceIn(inner, matches, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function idValue(record: Record<string, unknown>): unknown {
  for (const [key, value] of Object.entries(record)) if (ID_KEY.test(key)) return value;
  return undefined;
}

function itemsOf(json: unknown): unknown[] {
  if (Array.isArray(json)) return json;
  if (!json || typeof json !== "object") return [];
  const record = json as Record<string, unknown>;
  const wrapped = Object.entries(record).filter(
    ([key, value]) => WRAPPER_KEY.test(key) && Array.isArray(value),
  );
  return wrapped.length === 1 ? (wrapped[0]![1] as unknown[]) : [];
}
