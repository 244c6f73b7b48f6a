import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { familyOfParameter, isAuthOperation, isSafeWrite, resourceFamilies } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, requestSchema, toSpec } from "../api/request-builder.ts";
import { extractId, markersIn, ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { nameForms, snakeCase } from "./naming.ts";

// Records of the probe's own, including the common shape the resource factory does not follow: a record
// created under its parent (`POST /boards/{id}/cards`) but read and deleted by its own id (`/cards/{id}`),
// and a parent that is itself such a record (`POST /cards/{id}/notes` needs a card, created under a board).
// Only what this creator made is ever changed or deleted.

export interface OwnedRecord {
  id: string;
  /** The family whose create operation made it (its collection may sit under a parent). */
  createFamily: ResourceFamily;
  /** The family that addresses it by id: the same collection, or one of the same name elsewhere. */
  itemFamily: ResourceFamily | undefined;
  owner: string | undefined;
  /** Path values of the collection it was created in (its parents' ids). */
  collectionValues: Record<string, string>;
  /** Path values of its item path, when it has one. */
  itemValues: Record<string, string> | undefined;
  parents: OwnedRecord[];
  request: PreparedRequest;
  exchange: HttpExchange;
  /** Unique strings planted in the body. */
  markers: string[];
  removed: boolean;
}

export interface CreateAttempt {
  record?: OwnedRecord;
  /** The create request and its answer, also when it was refused. */
  request?: PreparedRequest;
  exchange?: HttpExchange;
  reason: string;
}

interface Prepared {
  createFamily: ResourceFamily;
  request: PreparedRequest;
  seed: string;
  collectionValues: Record<string, string>;
  parents: OwnedRecord[];
}

export interface CreateOptions {
  /** Path values of the parents to create under (else the creator makes parents of its own). */
  parentValues?: Record<string, string>;
  /** Body properties to set after the valid body is built. */
  overrides?: Record<string, unknown>;
  seed?: string;
}

/** The last static segment of a path: the name of what its collection holds. */
export function collectionName(path: string): string {
  const segments = toTemplateForm(path)
    .split("/")
    .filter((segment) => segment && !segment.startsWith("{"));
  return snakeCase(segments[segments.length - 1] ?? "");
}

function sharedPrefix(left: string, right: string): number {
  const a = toTemplateForm(left).split("/").filter(Boolean);
  const b = toTemplateForm(right).split("/").filter(Boolean);
  let count = 0;
  while (count < a.length && count < b.length && a[count] === b[count] && !a[count]!.startsWith("{"))
    count += 1;
  return count;
}

function documented(operation: Operation | undefined): number {
  return operation?.documented ? 1 : 0;
}

export class RecordCreator {
  readonly families: ResourceFamily[];
  readonly created: OwnedRecord[] = [];
  private readonly factory: ResourceFactory;
  private readonly parents = new Map<string, Promise<OwnedRecord | undefined>>();
  /** Creates that needed their optional fields too (the first try with the required ones was refused). */
  private readonly everyField = new Set<Operation>();

  constructor(readonly run: ProbeRun) {
    this.families = resourceFamilies(run.map.operations);
    this.factory = new ResourceFactory(run);
  }

  get writesAllowed(): boolean {
    return this.run.target.writesAllowed;
  }

  /** Whether the probe may call this family's create operation at all. */
  creatable(family: ResourceFamily | undefined): boolean {
    return Boolean(
      family?.create &&
        this.writesAllowed &&
        isSafeWrite(family.create) &&
        !isAuthOperation(family.create) &&
        collectionName(family.collection) !== "",
    );
  }

  /** The family whose create makes records of `family`: itself, or a collection of the same name. */
  creationFamilyOf(family: ResourceFamily): ResourceFamily | undefined {
    if (this.creatable(family)) return family;
    const name = collectionName(family.collection);
    return this.families
      .filter(
        (candidate) =>
          candidate !== family && this.creatable(candidate) && collectionName(candidate.collection) === name,
      )
      .sort(
        (left, right) =>
          sharedPrefix(right.collection, family.collection) -
            sharedPrefix(left.collection, family.collection) ||
          documented(right.create) - documented(left.create) ||
          left.parentParameters.length - right.parentParameters.length,
      )[0];
  }

  /** The family that reads and deletes what `createFamily` creates: its own item, else a namesake's. */
  itemFamilyOf(createFamily: ResourceFamily): ResourceFamily | undefined {
    if (createFamily.item) return createFamily;
    const name = collectionName(createFamily.collection);
    return this.families
      .filter(
        (candidate) =>
          candidate !== createFamily &&
          candidate.item !== undefined &&
          candidate.idParameter !== undefined &&
          (candidate.read || candidate.remove) &&
          collectionName(candidate.collection) === name,
      )
      .sort(
        (left, right) =>
          documented(right.read ?? right.remove) - documented(left.read ?? left.remove) ||
          sharedPrefix(right.collection, createFamily.collection) -
            sharedPrefix(left.collection, createFamily.collection) ||
          left.parentParameters.length - right.parentParameters.length,
      )[0];
  }

  /** The family a path parameter of `collection` names (`{id}` of `/cards/{id}/notes` → the cards). */
  parentFamilyOf(collection: string, parameter: string): ResourceFamily | undefined {
    return familyOfParameter(this.families, collection, parameter);
  }

  /** One record of `family` per user, made on first use (for parents the probe only needs to exist). */
  ensure(family: ResourceFamily, user: string | undefined): Promise<OwnedRecord | undefined> {
    const key = `${family.collection}\u0000${user ?? ""}`;
    let pending = this.parents.get(key);
    if (!pending) {
      const creation = this.creationFamilyOf(family);
      pending = creation
        ? this.create(creation, user).then((attempt) => attempt.record)
        : Promise.resolve(undefined);
      this.parents.set(key, pending);
    }
    return pending;
  }

  /** A new record of `createFamily` as `user`, under the given parents or parents of its own. */
  async create(
    createFamily: ResourceFamily,
    user: string | undefined,
    options: CreateOptions = {},
  ): Promise<CreateAttempt> {
    let prepared = await this.prepare(createFamily, user, options);
    if (typeof prepared === "string") return { reason: prepared };
    const create = createFamily.create!;
    let exchange = await send(this.run, user, toSpec(this.run.target.baseUrl, prepared.request));
    if (exchange && !isSuccess(exchange) && statusOf(exchange) < 500 && !this.everyField.has(create)) {
      // A field the handler needs though nothing marks it required: every known field, from now on.
      this.everyField.add(create);
      const fuller = await this.prepare(createFamily, user, options);
      const more =
        typeof fuller !== "string" &&
        Object.keys(objectOf(fuller.request.body)).length >
          Object.keys(objectOf(prepared.request.body)).length;
      const retried = more
        ? await send(this.run, user, toSpec(this.run.target.baseUrl, fuller.request))
        : undefined;
      if (typeof fuller !== "string" && retried && statusOf(retried) < 500)
        [prepared, exchange] = [fuller, retried];
      if (!retried || !isSuccess(retried)) this.everyField.delete(create);
    }
    let request = prepared.request;
    const example = create.request_body?.example;
    if (
      exchange &&
      !options.overrides &&
      !isSuccess(exchange) &&
      statusOf(exchange) < 500 &&
      example !== undefined
    ) {
      // The document's own example may satisfy rules a schema cannot express.
      request = {
        ...buildRequest(create, { seed: prepared.seed, pathValues: prepared.collectionValues }),
        body: structuredClone(example),
      };
      exchange = await send(this.run, user, toSpec(this.run.target.baseUrl, request));
    }
    return this.finish({ ...prepared, request }, user, exchange);
  }

  /**
   * Creations sent at one instant: every request is built (parents made, references found) before the
   * first leaves, so that they reach the application together — what a race needs.
   */
  async createTogether(
    createFamily: ResourceFamily,
    user: string | undefined,
    count: number,
    options: CreateOptions = {},
  ): Promise<CreateAttempt[]> {
    const prepared = await Promise.all(
      Array.from({ length: count }, () => this.prepare(createFamily, user, options)),
    );
    // Together: a measurement window of another agent must not split the race this is for.
    const exchanges = await this.run.client.together(
      () =>
        Promise.all(
          prepared.map((entry) =>
            typeof entry === "string"
              ? undefined
              : send(this.run, user, toSpec(this.run.target.baseUrl, entry.request)),
          ),
        ),
      prepared.filter((entry) => typeof entry !== "string").length,
    );
    return prepared.map((entry, index) =>
      typeof entry === "string" ? { reason: entry } : this.finish(entry, user, exchanges[index]),
    );
  }

  private async prepare(
    createFamily: ResourceFamily,
    user: string | undefined,
    options: CreateOptions,
  ): Promise<Prepared | string> {
    const create = createFamily.create;
    if (!create || !this.creatable(createFamily)) return "the probe may not call its create";
    const collectionValues: Record<string, string> = {};
    const parents: OwnedRecord[] = [];
    for (const parameter of pathParameterNames(createFamily.collection)) {
      const given = options.parentValues?.[parameter];
      if (given !== undefined) {
        collectionValues[parameter] = given;
        continue;
      }
      const parentFamily = this.parentFamilyOf(createFamily.collection, parameter);
      const parent = parentFamily ? await this.ensure(parentFamily, user) : undefined;
      if (!parent) return `no ${parameter} of its own to create it under`;
      Object.assign(collectionValues, parent.itemValues ?? {}, { [parameter]: parent.id });
      parents.push(...parent.parents.filter((known) => !parents.includes(known)), parent);
    }
    const seed = options.seed ?? uniqueSeed();
    const references = await this.references(create, user);
    const request = buildRequest(create, {
      seed,
      pathValues: collectionValues,
      reference: (name) => references[name],
      includeOptional: this.everyField.has(create),
    });
    request.body = plantSeed(request.body, requestSchema(create), seed);
    if (options.overrides) request.body = { ...objectOf(request.body), ...options.overrides };
    return { createFamily, request, seed, collectionValues, parents };
  }

  private finish(
    prepared: Prepared,
    user: string | undefined,
    exchange: HttpExchange | undefined,
  ): CreateAttempt {
    const { createFamily, request, seed, collectionValues, parents } = prepared;
    if (!exchange) return { request, reason: "the request could not be sent" };
    if (!isSuccess(exchange)) return { request, exchange, reason: `answered ${statusOf(exchange)}` };
    const itemFamily = this.itemFamilyOf(createFamily);
    const id = extractId(exchange, itemFamily ?? createFamily);
    if (id === undefined) return { request, exchange, reason: "the answer names no id" };
    const record: OwnedRecord = {
      id,
      createFamily,
      itemFamily,
      owner: user,
      collectionValues,
      itemValues: itemValuesOf(itemFamily, createFamily, collectionValues, id),
      parents,
      request,
      exchange,
      markers: markersIn(request.body, seed),
      removed: false,
    };
    this.created.push(record);
    return { record, request, exchange, reason: "created" };
  }

  /** GET of the record through its item path, as `user`. */
  async read(record: OwnedRecord, user: string | undefined): Promise<HttpExchange | undefined> {
    const read = record.itemFamily?.read;
    if (!read || !record.itemValues) return undefined;
    const prepared = buildRequest(read, { seed: uniqueSeed(), pathValues: record.itemValues });
    return send(this.run, user, toSpec(this.run.target.baseUrl, prepared));
  }

  /** A write of `overrides` to the record through one of its update operations. */
  async update(
    record: OwnedRecord,
    operation: Operation,
    user: string | undefined,
    overrides: Record<string, unknown>,
  ): Promise<HttpExchange | undefined> {
    if (!record.itemValues || !isSafeWrite(operation) || !this.writesAllowed) return undefined;
    const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: record.itemValues });
    prepared.body = { ...objectOf(prepared.body), ...overrides };
    return send(this.run, user, toSpec(this.run.target.baseUrl, prepared));
  }

  /** DELETE of the record through its item path, as its owner. */
  async remove(record: OwnedRecord): Promise<HttpExchange | undefined> {
    const remove = record.itemFamily?.remove;
    if (!remove || !record.itemValues || record.removed || !isSafeWrite(remove)) return undefined;
    const prepared = buildRequest(remove, { seed: uniqueSeed(), pathValues: record.itemValues });
    const exchange = await send(this.run, record.owner, toSpec(this.run.target.baseUrl, prepared)).catch(
      () => undefined,
    );
    if (exchange && isSuccess(exchange)) record.removed = true;
    return exchange;
  }

  /** Deletes what this creator made, newest first (children before their parents). */
  async cleanUp(): Promise<{ removed: number; left: number }> {
    let removed = 0;
    let left = 0;
    for (const record of [...this.created].reverse()) {
      if (record.removed) continue;
      // A record whose parent is already gone may have gone with it.
      await this.remove(record);
      if (record.removed) removed += 1;
      else left += 1;
    }
    return { removed, left };
  }

  /** Ids for body properties that name another resource (`board_id` → a board of the same user). */
  private async references(operation: Operation, user: string | undefined): Promise<Record<string, string>> {
    const schema = requestSchema(operation);
    const result: Record<string, string> = {};
    if (!schema) return result;
    for (const name of Object.keys(propertiesOf(schema))) {
      const stem = name.match(/^(.+?)[_-]?(id|Id|ID)$/)?.[1];
      if (!stem) continue;
      const forms = nameForms(stem);
      const family = this.families.find(
        (candidate) =>
          candidate.item !== undefined &&
          candidate.parentParameters.length === 0 &&
          forms.includes(collectionName(candidate.collection)),
      );
      if (!family || family.create === operation) continue;
      const own = await this.ensure(family, user);
      if (own) {
        result[name] = own.id;
        continue;
      }
      const discovered = await this.factory.discover(family, user);
      if (discovered?.ids[0] !== undefined) result[name] = discovered.ids[0];
    }
    return result;
  }
}

/**
 * Free-text properties filled from the document's example (`"Looks good to me."`) would not tell this
 * record from any other: the seed is appended where the schema leaves the text free (no enum, pattern or
 * format) and its length allows, so an event or a list entry about it can be recognised.
 */
function plantSeed(body: unknown, schema: ReturnType<typeof requestSchema>, seed: string): unknown {
  if (!body || typeof body !== "object" || Array.isArray(body) || !schema) return body;
  const properties = propertiesOf(schema);
  const planted: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [name, value] of Object.entries(planted)) {
    const property = properties[name];
    if (typeof value !== "string" || value.includes(seed) || !property) continue;
    if (property.enum !== undefined || property.pattern !== undefined || property.format !== undefined)
      continue;
    if (/(^|_)id$|Id$/.test(name)) continue;
    const text = `${value} ${seed}`;
    const maxLength = typeof property.maxLength === "number" ? property.maxLength : Number.POSITIVE_INFINITY;
    if (text.length <= maxLength) planted[name] = text;
  }
  return planted;
}

function objectOf(body: unknown): Record<string, unknown> {
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

function itemValuesOf(
  itemFamily: ResourceFamily | undefined,
  createFamily: ResourceFamily,
  collectionValues: Record<string, string>,
  id: string,
): Record<string, string> | undefined {
  if (!itemFamily?.item || !itemFamily.idParameter) return undefined;
  const values: Record<string, string> = {};
  for (const name of pathParameterNames(itemFamily.item)) {
    if (name === itemFamily.idParameter) values[name] = id;
    else if (itemFamily === createFamily && collectionValues[name] !== undefined)
      values[name] = collectionValues[name]!;
    else return undefined;
  }
  return values;
}
