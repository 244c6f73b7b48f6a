import type { Operation } from "../../map/system-map.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isRedirect, isSuccess } from "../http/http-types.ts";
import { matchesTemplate, pathOfUrl, pathParameterNames } from "../http/target-url.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { CatalogueValues } from "./catalogue-values.ts";
import { linkedIds } from "./linked-ids.ts";
import type { ResourceFamily } from "./operation-index.ts";
import {
  familyForItem,
  familyOfParameter,
  isSafeWrite,
  nestedFamilyFor,
  resourceFamilies,
} from "./operation-index.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { buildRequest, requestSchema, serializeBody, toSpec } from "./request-builder.ts";
import { IdHarvest } from "./resource-harvest.ts";

/** A resource the probe created itself: the only kind it may modify or delete. */
export interface CreatedResource {
  family: ResourceFamily;
  id: string;
  owner: string | undefined;
  /** The resources it was created under (a project for a task), outermost first. */
  parents: CreatedResource[];
  /** Values for the item path: the parents' ids and its own. */
  pathValues: Record<string, string>;
  request: PreparedRequest;
  /** The create answer's JSON. */
  created: unknown;
  /** Unique strings planted in the body: finding them in another user's answer proves a leak. */
  markers: string[];
  exchange: HttpExchange;
}

let counter = 0;
/** Short, unique per process and run: keeps generated names and emails from colliding. */
export function uniqueSeed(): string {
  counter += 1;
  return `${Date.now().toString(36).slice(-4)}${counter.toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}

const ID_KEYS = ["id", "_id", "uuid", "ID", "Id", "key", "slug"];

/** Creates, caches and finds resources for stateful sequences (create → read → update → delete). */
export class ResourceFactory {
  readonly families: ResourceFamily[];
  readonly created: CreatedResource[] = [];
  readonly harvest: IdHarvest;
  private readonly cache = new Map<string, Promise<CreatedResource | undefined>>();
  /** Families whose creation failed once and was tried again (a busy target's timeout is not a verdict). */
  private readonly retried = new Set<string>();
  private readonly catalogue: CatalogueValues;

  constructor(private readonly run: ProbeRun) {
    this.families = resourceFamilies(run.map.operations);
    this.harvest = new IdHarvest(run, this.families);
    this.catalogue = new CatalogueValues(run, listItems);
  }

  familyOf(operation: Operation): ResourceFamily | undefined {
    return familyForItem(this.families, operation.path);
  }

  /**
   * The family whose create operation makes items of `family`: its own, else a nested collection of the
   * same name (a task addressed as `/tasks/{id}` is created by `POST /projects/{id}/tasks`).
   */
  creatorOf(family: ResourceFamily | undefined): ResourceFamily | undefined {
    if (!family) return undefined;
    return family.create ? family : nestedFamilyFor(this.families, family, "create");
  }

  canCreate(family: ResourceFamily | undefined): boolean {
    const creator = this.creatorOf(family);
    return Boolean(creator?.create && this.run.target.writesAllowed && isSafeWrite(creator.create));
  }

  /** One resource per family and user, created on first use and reused for reads. */
  ensure(family: ResourceFamily, user: string | undefined): Promise<CreatedResource | undefined> {
    const key = `${family.collection}\u0000${user ?? ""}`;
    let pending = this.cache.get(key);
    if (!pending) {
      pending = this.create(family, user).then(async (created) => {
        // One more try after a failure; a second failure stands for the rest of the run.
        if (created || this.retried.has(key)) return created;
        this.retried.add(key);
        return this.create(family, user);
      });
      this.cache.set(key, pending);
    }
    return pending;
  }

  /** A new resource every call: for sequences that change or delete it. */
  create(
    family: ResourceFamily,
    user: string | undefined,
    edit?: (request: PreparedRequest) => void,
  ): Promise<CreatedResource | undefined> {
    return this.make(family, user, edit, true);
  }

  /**
   * A new record even when no item path addresses it (`POST /ledgers` with only `POST /ledgers/remove`
   * taking the id in its body): its id is known, its `pathValues` hold only its parents' ids.
   */
  createRecord(
    family: ResourceFamily,
    user: string | undefined,
    edit?: (request: PreparedRequest) => void,
  ): Promise<CreatedResource | undefined> {
    return this.make(family, user, edit, false);
  }

  private async make(
    family: ResourceFamily,
    user: string | undefined,
    edit: ((request: PreparedRequest) => void) | undefined,
    addressable: boolean,
  ): Promise<CreatedResource | undefined> {
    const creator = this.creatorOf(family);
    if (!creator?.create || !this.canCreate(family)) return undefined;
    const create = creator.create;
    const pathValues: Record<string, string> = {};
    const parents: CreatedResource[] = [];
    for (const parameter of creator.parentParameters) {
      const parentFamily = familyOfParameter(this.families, creator.collection, parameter);
      const parent = parentFamily ? await this.ensure(parentFamily, user) : undefined;
      if (!parent) {
        // A parent no family lists or creates (`{org}` of `/orgs/{org}/invoices`): the caller's own,
        // named in its sign-in or "me" answer; never a guessed id.
        const own =
          parentFamily || user === undefined ? undefined : await this.harvest.selfReference(user, parameter);
        if (own === undefined) return undefined;
        pathValues[parameter] = own;
        continue;
      }
      Object.assign(pathValues, parent.pathValues);
      if (!parents.includes(parent))
        parents.push(...parent.parents.filter((known) => !parents.includes(known)), parent);
    }
    const references = await this.references(create, user);
    const seed = uniqueSeed();
    const attempt = async (request: PreparedRequest) => {
      edit?.(request);
      const exchange = await send(this.run, user, toSpec(this.run.target.baseUrl, request));
      return exchange;
    };
    const made = (answer: HttpExchange | undefined) =>
      answer !== undefined && (isSuccess(answer) || redirectedToItem(answer, family));
    const refused = (answer: HttpExchange | undefined) =>
      answer !== undefined && !made(answer) && (answer.response?.status ?? 0) < 500;
    const built = (includeOptional: boolean) =>
      buildRequest(create, { seed, pathValues, reference: (name) => references[name], includeOptional });
    let request = built(false);
    let exchange = await attempt(request);
    const everyField = built(true);
    if (refused(exchange) && serializeBody(everyField) !== serializeBody(built(false))) {
      // A field the handler needs though nothing marks it required (read in a helper, converted in a try).
      const retried = await attempt(everyField);
      if (made(retried) || refused(retried)) {
        request = everyField;
        exchange = retried;
      }
    }
    if (refused(exchange)) {
      // A generated code the server does not know (`sku`, `currency`): the values its own lists show.
      for await (const candidate of this.catalogue.candidates(create, request, user)) {
        const retried = await attempt(candidate);
        if (made(retried)) {
          request = candidate;
          exchange = retried;
          break;
        }
        if ((retried?.response?.status ?? 0) >= 500) break;
      }
    }
    const example = create.request_body?.example;
    if (refused(exchange) && example !== undefined) {
      // The document's own example may satisfy rules a schema cannot express.
      request = { ...buildRequest(create, { seed, pathValues }), body: structuredClone(example) };
      exchange = await attempt(request);
    }
    if (!exchange || !made(exchange)) return undefined;
    // A create that answers only "added" keeps the key the client chose: a title, a name, a slug sent in
    // the body under the item path's own parameter name.
    const id = extractId(exchange, family) ?? sentKey(request, family);
    if (id === undefined || (addressable && !family.idParameter)) return undefined;
    const resource: CreatedResource = {
      family,
      id,
      owner: user,
      parents,
      pathValues: family.idParameter ? { ...pathValues, [family.idParameter]: id } : { ...pathValues },
      request,
      created: exchange.response?.json,
      markers: markersIn(request.body, seed),
      exchange,
    };
    this.created.push(resource);
    return resource;
  }

  /**
   * Ids `user` can see through the family's list operation, or through a nested list of the same name
   * (for targets where nothing may be created). A list under a parent tries up to three parents.
   */
  async discover(
    family: ResourceFamily,
    user: string | undefined,
  ): Promise<{ ids: string[]; pathValues: Record<string, string> } | undefined> {
    const lister = family.list ? family : nestedFamilyFor(this.families, family, "list");
    if (!lister?.list) return undefined;
    const list = lister.list;
    let last: { ids: string[]; pathValues: Record<string, string> } | undefined;
    for (const pathValues of await this.parentValueSets(lister, user)) {
      const request = buildRequest(list, { seed: uniqueSeed(), pathValues });
      const exchange = await send(this.run, user, toSpec(this.run.target.baseUrl, request));
      if (!exchange || !isSuccess(exchange)) continue;
      const json = exchange.response?.json;
      const ids =
        json === undefined
          ? linkedIds(exchange, family, pathValues)
          : listItems(json)
              .map((item) => idOf(item, family))
              .filter((id): id is string => id !== undefined);
      last = { ids, pathValues };
      if (ids.length > 0) return last;
    }
    return last;
  }

  /** Path values for a collection's parents: the first id of outer ones, up to three of the innermost. */
  private async parentValueSets(
    lister: ResourceFamily,
    user: string | undefined,
  ): Promise<Array<Record<string, string>>> {
    const parameters = lister.parentParameters;
    if (parameters.length === 0) return [{}];
    const base: Record<string, string> = {};
    for (const [index, parameter] of parameters.entries()) {
      const parentFamily = familyOfParameter(this.families, lister.collection, parameter);
      if (!parentFamily) {
        const own = user === undefined ? undefined : await this.harvest.selfReference(user, parameter);
        if (own === undefined) return [];
        if (index === parameters.length - 1) return [{ ...base, [parameter]: own }];
        base[parameter] = own;
        continue;
      }
      const parent = await this.discover(parentFamily, user);
      const idParameter = parentFamily.idParameter;
      if (!idParameter || !parent || parent.ids.length === 0) return [];
      if (index === parameters.length - 1)
        return parent.ids.slice(0, 3).map((id) => ({ ...base, ...parent.pathValues, [idParameter]: id }));
      Object.assign(base, parent.pathValues, { [idParameter]: parent.ids[0] });
    }
    return [];
  }

  /**
   * Path values for `operation` as `user`: a resource of the probe's own when it can create one (`fresh`
   * for a new one), else one the user can list. `owned` tells whether the probe may change it.
   */
  async pathValuesFor(
    operation: Operation,
    user: string | undefined,
    options: { fresh?: boolean } = {},
  ): Promise<{ values: Record<string, string>; resource?: CreatedResource; owned: boolean } | undefined> {
    const names = pathParameterNames(operation.path);
    if (names.length === 0) return { values: {}, owned: true };
    const family = this.familyOf(operation);
    if (family && this.canCreate(family)) {
      const resource = options.fresh ? await this.create(family, user) : await this.ensure(family, user);
      if (resource && names.every((name) => resource.pathValues[name] !== undefined)) {
        return { values: { ...resource.pathValues }, resource, owned: true };
      }
    }
    if (family) {
      const discovered = await this.discover(family, user);
      const first = discovered?.ids[0];
      if (discovered && first !== undefined && family.idParameter) {
        const values = { ...discovered.pathValues, [family.idParameter]: first };
        if (names.every((name) => values[name] !== undefined)) return { values, owned: false };
      }
    }
    // Ids the user saw elsewhere address reads only: never a write to something the probe did not create.
    const method = operation.method.toUpperCase();
    if (family?.idParameter && (method === "GET" || method === "HEAD")) {
      const idParameter = family.idParameter;
      if (names.every((name) => name === idParameter)) {
        const [first] = await this.harvest.idsFor(family, user);
        if (first !== undefined) return { values: { [idParameter]: first }, owned: false };
      }
    }
    return undefined;
  }

  /** Ids of `family` that `user` saw in its own answers (sign-in, "me", lists, references): reads only. */
  harvestedIds(
    family: ResourceFamily,
    user: string | undefined,
    options: { every?: boolean } = {},
  ): Promise<string[]> {
    return this.harvest.idsFor(family, user, options);
  }

  /** Ids for body properties that name another resource (`projectId` → a project of the same user). */
  private async references(operation: Operation, user: string | undefined): Promise<Record<string, string>> {
    const schema = requestSchema(operation);
    const result: Record<string, string> = {};
    if (!schema) return result;
    for (const name of Object.keys(propertiesOf(schema))) {
      const stem = name.match(/^(.+?)[_-]?(id|Id|ID)$/)?.[1]?.toLowerCase();
      if (!stem) continue;
      const family = this.families.find((candidate) => {
        const last = candidate.collection.split("/").filter(Boolean).pop()?.toLowerCase() ?? "";
        return (
          last === stem || last === `${stem}s` || last === `${stem}es` || last === stem.replace(/y$/, "ies")
        );
      });
      if (!family || family.create === operation) continue;
      const resource = (await this.ensure(family, user)) ?? undefined;
      if (resource) result[name] = resource.id;
      else {
        const discovered = await this.discover(family, user);
        if (discovered?.ids[0] !== undefined) result[name] = discovered.ids[0];
      }
    }
    return result;
  }
}

/** The array of items in a list answer: the body itself, or its one array-valued field. */
export function listItems(json: unknown): unknown[] {
  if (Array.isArray(json)) return json;
  if (!json || typeof json !== "object") return [];
  const record = json as Record<string, unknown>;
  for (const key of ["items", "data", "results", "records", "rows", "entries", "content", "list"]) {
    if (Array.isArray(record[key])) return record[key] as unknown[];
  }
  const arrays = Object.values(record).filter(Array.isArray);
  return arrays.length === 1 ? (arrays[0] as unknown[]) : [];
}

export function idOf(item: unknown, family: ResourceFamily): string | undefined {
  if (!item || typeof item !== "object") return undefined;
  const record = item as Record<string, unknown>;
  const parameter = family.idParameter;
  const keys = parameter ? [parameter, snake(parameter), ...ID_KEYS] : ID_KEYS;
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string" && value.length > 0) return value;
    if (typeof value === "number") return String(value);
  }
  return undefined;
}

/**
 * The value a create's body sent under the item path's parameter name (`{book_title}` ← `book_title`,
 * `{slug}` ← `slug`): the object's key when the server chose none of its own.
 */
export function sentKey(request: PreparedRequest, family: ResourceFamily): string | undefined {
  const parameter = family.idParameter;
  const body = request.body;
  if (!parameter || !body || typeof body !== "object" || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  for (const key of [parameter, snake(parameter)]) {
    const value = record[key];
    if (typeof value === "string" && value.length > 0 && value.length <= 200) return value;
    if (typeof value === "number") return String(value);
  }
  return undefined;
}

function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

/**
 * A form's create answered the way server-rendered applications do (post/redirect/get): a redirect to the
 * new item's own page (`303 → /invoices/57`). A redirect anywhere else (the sign-in page, the form again)
 * says nothing was made.
 */
function redirectedToItem(exchange: HttpExchange, family: ResourceFamily): boolean {
  const location = exchange.response?.headers.location;
  if (!isRedirect(exchange) || !location || !family.item) return false;
  const values = matchesTemplate(family.item, pathOfUrl(new URL(location, exchange.request.url).toString()));
  return (
    values !== undefined &&
    Object.values(values).every((value) => value !== "" && !/^(new|edit|create|add)$/i.test(value))
  );
}

/** The new resource's id: in the body (or its one wrapped object), else the Location header. */
export function extractId(exchange: HttpExchange, family: ResourceFamily): string | undefined {
  const json = exchange.response?.json;
  const direct = idOf(json, family);
  if (direct !== undefined) return direct;
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const objects = Object.values(json as Record<string, unknown>).filter(
      (value) => value && typeof value === "object" && !Array.isArray(value),
    );
    if (objects.length === 1) {
      const nested = idOf(objects[0], family);
      if (nested !== undefined) return nested;
    }
  }
  const location = exchange.response?.headers.location;
  if (location)
    return (
      decodeURIComponent(
        pathOfUrl(new URL(location, "http://localhost").toString()).split("/").filter(Boolean).pop() ?? "",
      ) || undefined
    );
  return undefined;
}

/** Every string in a body that carries the seed: how a probe recognises its own planted values. */
export function markersIn(body: unknown, seed: string): string[] {
  const markers: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === "string" && value.includes(seed)) markers.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(body);
  return markers;
}
