import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import {
  familyForItem,
  isAuthOperation,
  lastStaticSegment,
  nounOf,
  pageNoun,
} from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { bodyKind, requestSchema } from "../api/request-builder.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";

// Where an operation takes the id of one object (OWASP API1): the last path parameter of an item path
// (`/invoices/{id}`, `/invoices/{id}/approve`), a query parameter (`?invoice_id=`) or a body field
// (`{ "id": … }`, `{ "account_id": … }`) of an operation beside a collection. Each slot names the resource
// family whose items it addresses, so the probe can make (or find) an object of the owner's to put there.

export type SlotPlace = "path" | "query" | "body";

export interface ObjectSlot {
  operation: Operation;
  /** The family whose items the id addresses. */
  family: ResourceFamily;
  place: SlotPlace;
  /** The path or query parameter, or the body property, that carries the id. */
  name: string;
}

/** `id`, `uuid`, `invoice_id`, `invoiceId`, `invoiceUuid`: names that carry one object's id. */
const BARE_ID = /^(id|uid|uuid|guid|key|ref)$/i;
const STEM_ID = /^(.+?)[_-]?(id|Id|ID|uid|Uid|uuid|Uuid|UUID)$/;

/** The stem a reference names (`invoice` for `invoice_id`), undefined for a bare id. */
export function idStem(name: string): string | undefined {
  if (BARE_ID.test(name)) return undefined;
  return name.match(STEM_ID)?.[1];
}

export function isIdName(name: string): boolean {
  return BARE_ID.test(name) || STEM_ID.test(name);
}

/** Every object slot of the map's operations, one per operation (the path's item first). */
export function objectSlots(
  operations: readonly Operation[],
  families: readonly ResourceFamily[],
): ObjectSlot[] {
  const slots: ObjectSlot[] = [];
  for (const operation of operations) {
    if (isAuthOperation(operation) || operation.graphql) continue;
    const slot = pathSlot(operation, families) ?? beside(operation, families);
    if (slot) slots.push(slot);
  }
  return slots;
}

function pathSlot(operation: Operation, families: readonly ResourceFamily[]): ObjectSlot | undefined {
  const names = pathParameterNames(operation.path);
  if (names.length === 0) return undefined;
  const family = familyForItem(families, operation.path);
  if (family?.idParameter) return { operation, family, place: "path", name: family.idParameter };
  // `/drivers/{id}/approve` where nothing else addresses `/drivers/{id}`: the collection before the last
  // parameter makes and lists the items the action takes.
  const template = toTemplateForm(operation.path);
  const last = names[names.length - 1]!;
  const collection = template.slice(0, template.lastIndexOf(`/{${last}}`));
  // `/admin/lockers/{id}/approve` acts on the lockers made at `/lockers`: the same noun elsewhere.
  const owner =
    families.find(
      (candidate) => candidate.collection === collection && (candidate.create || candidate.list),
    ) ??
    (pathParameterNames(collection).length === 0
      ? namedFamily(
          families.filter((candidate) => candidate.parentParameters.length === 0),
          lastStaticSegment(collection) ?? "",
          collection,
        )
      : undefined);
  return owner ? { operation, family: owner, place: "path", name: last } : undefined;
}

/**
 * An id in the query or the body of an operation that is not an item path: `GET /permits/detail?id=`,
 * `POST /ledgers/remove {id}`, `DELETE /answers?id=`. A bare id belongs to the collection the path sits
 * in; a named one (`invoice_id`) to the family of that noun nearest the path.
 */
function beside(operation: Operation, families: readonly ResourceFamily[]): ObjectSlot | undefined {
  const template = toTemplateForm(operation.path).replace(/\/+$/, "");
  const names: Array<{ place: SlotPlace; name: string }> = [
    ...operation.parameters
      .filter((parameter) => parameter.in === "query" && isIdName(parameter.name))
      .map((parameter) => ({ place: "query" as const, name: parameter.name })),
    ...bodyIdNames(operation).map((name) => ({ place: "body" as const, name })),
  ];
  const method = operation.method.toUpperCase();
  for (const { place, name } of names) {
    const stem = idStem(name);
    const family = stem
      ? namedFamily(families, stem, template)
      : (enclosingFamily(families, template, method, operation) ?? pageFamily(families, template, operation));
    // A create's own reference (`POST /tasks {project_id}`) makes a new object: not an access to one.
    if (!family || family.create === operation) continue;
    return { operation, family, place, name };
  }
  return undefined;
}

function bodyIdNames(operation: Operation): string[] {
  const kind = bodyKind(operation);
  if (kind !== "json" && kind !== "form") return [];
  const schema = requestSchema(operation);
  if (!schema) return [];
  return Object.entries(propertiesOf(chooseBranch(schema)))
    .filter(([name, property]) => {
      const type = schemaType(chooseBranch(property));
      return (
        isIdName(name) && (type === "string" || type === "integer" || type === "number" || type === "any")
      );
    })
    .map(([name]) => name);
}

/** The collection a path sits in: `/permits` for `/permits/detail`, itself for `DELETE /answers?id=`. */
function enclosingFamily(
  families: readonly ResourceFamily[],
  template: string,
  method: string,
  operation: Operation,
): ResourceFamily | undefined {
  return (
    families
      // `GET /permits/detail?id=` makes a family of its own whose "list" is itself: it lists nothing.
      .filter((family) => family.create || (family.list && family.list !== operation))
      .filter((family) => {
        if (family.collection === template) return method !== "POST";
        if (!template.startsWith(`${family.collection}/`)) return false;
        // One static segment further: a verb or a view of the collection, not a nested collection of items.
        const rest = template.slice(family.collection.length + 1);
        return !rest.includes("/") && !rest.startsWith("{");
      })
      .sort((a, b) => b.collection.length - a.collection.length)[0]
  );
}

/**
 * The collection a server page that shows one item is named after: `/ticket.php?id=` (or
 * `/view_ticket.php?id=`) reads an item of what `/tickets.php` lists, a sibling page, not a sub-path.
 */
function pageFamily(
  families: readonly ResourceFamily[],
  template: string,
  operation: Operation,
): ResourceFamily | undefined {
  const segment = lastStaticSegment(template);
  if (!segment || operation.method.toUpperCase() !== "GET") return undefined;
  const parent = template.slice(0, template.lastIndexOf("/"));
  const noun = pageNoun(segment);
  return families.find(
    (family) =>
      family.list &&
      family.list !== operation &&
      family.parentParameters.length === 0 &&
      family.collection.slice(0, family.collection.lastIndexOf("/")) === parent &&
      nounOf(lastStaticSegment(family.collection) ?? "") === noun,
  );
}

/**
 * The family a reference names, preferring the one whose collection shares most of the path's segments,
 * then most of its start: `/api/admin/projects/batches/{id}/approve` acts on `/api/projects/batches`, not
 * on `/api/payroll/batches`, though both share only `/api` as a prefix.
 */
function namedFamily(
  families: readonly ResourceFamily[],
  stem: string,
  template: string,
): ResourceFamily | undefined {
  const noun = nounOf(stem);
  const segments = template.split("/");
  const inPath = new Set(segments.filter((segment) => segment !== "" && !segment.startsWith("{")));
  const common = (collection: string) =>
    new Set(collection.split("/").filter((segment) => inPath.has(segment))).size;
  const prefix = (collection: string) => {
    const a = collection.split("/");
    let index = 0;
    while (index < a.length && index < segments.length && a[index] === segments[index]) index += 1;
    return index;
  };
  return families
    .filter(
      (family) =>
        (family.create || family.list) && nounOf(lastStaticSegment(family.collection) ?? "") === noun,
    )
    .sort(
      (a, b) => common(b.collection) - common(a.collection) || prefix(b.collection) - prefix(a.collection),
    )[0];
}

/** Puts `id` where the slot takes it (a body keeps the value's JSON type when the schema says number). */
export function fillSlot(prepared: PreparedRequest, slot: ObjectSlot, id: string): void {
  if (slot.place === "path") prepared.pathValues[slot.name] = id;
  else if (slot.place === "query") prepared.query[slot.name] = id;
  else {
    const schema = requestSchema(slot.operation);
    const property = schema ? propertiesOf(chooseBranch(schema))[slot.name] : undefined;
    const type = property ? schemaType(chooseBranch(property)) : "any";
    // Ids that look numeric were numbers in the answer that gave them, unless the schema says string.
    const numeric = type !== "string" && /^-?\d+$/.test(id);
    const body =
      prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body)
        ? (prepared.body as Record<string, unknown>)
        : {};
    prepared.body = { ...body, [slot.name]: numeric ? Number(id) : id };
  }
}
