import type { Operation, SystemMap } from "../../map/system-map.ts";
import { graphqlEffect } from "../graphql/graphql-effect.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";

/** `GET /items/{id}`: the ledger's endpoint form, used as every finding's location. */
export function operationKey(operation: Pick<Operation, "method" | "path">): string {
  return `${operation.method.toUpperCase()} ${toTemplateForm(operation.path)}`;
}

/**
 * One operation of the map: its endpoint, and for a GraphQL field the field too (every field of a GraphQL API
 * shares one endpoint, so the endpoint alone would make them one).
 */
export function operationIdentity(operation: Pick<Operation, "method" | "path" | "graphql">): string {
  const graphql = operation.graphql;
  return `${operationKey(operation)}${graphql ? ` ${graphql.kind} ${graphql.field}` : ""}`;
}

function normalizedKey(key: string): string {
  return key.replace(/\{[^}]+\}/g, "{}").replace(/\/+$/, "");
}

/** Operations selected by `filter` (`METHOD /path`, a path, or an operation id); all when absent. */
export function selectOperations(map: SystemMap, filter?: string): Operation[] {
  if (!filter) return map.operations;
  const wanted = filter.trim();
  const asKey = /^[A-Za-z]+\s+\//.test(wanted)
    ? normalizedKey(`${wanted.split(/\s+/)[0]!.toUpperCase()} ${toTemplateForm(wanted.split(/\s+/)[1]!)}`)
    : undefined;
  return map.operations.filter((operation) => {
    if (operation.operation_id === wanted) return true;
    if (asKey) return normalizedKey(operationKey(operation)) === asKey;
    return normalizedKey(toTemplateForm(operation.path)) === normalizedKey(toTemplateForm(wanted));
  });
}

/**
 * The operations a behaviour probe exercises: every operation the map knows, whatever reader found it (the
 * document, the source, forms, the frontend, traffic). Checks against the document itself (declared
 * statuses, response schemas) still look at `documented`. A GraphQL field is probed when its schema lists it.
 */
export function probeableOperations(map: SystemMap, filter?: string): Operation[] {
  const operations = selectOperations(map, filter).filter(
    (operation) => operation.documented || !operation.graphql,
  );
  // The request budget is shared: what the document promises is checked first, what readers inferred after.
  return [
    ...operations.filter((operation) => operation.documented),
    ...operations.filter((operation) => !operation.documented),
  ];
}

export function isItemPath(path: string): boolean {
  return /\{[^}]+\}\/?$/.test(toTemplateForm(path));
}

/** A collection of resources and the operations on it: the unit of stateful sequences. */
export interface ResourceFamily {
  /** `/projects/{projectId}/tasks` */
  collection: string;
  /** `/projects/{projectId}/tasks/{taskId}` */
  item: string | undefined;
  /** `taskId` */
  idParameter: string | undefined;
  /** Parameters of the collection path (parents), e.g. `projectId`. */
  parentParameters: string[];
  create: Operation | undefined;
  list: Operation | undefined;
  read: Operation | undefined;
  updates: Operation[];
  remove: Operation | undefined;
  /** Other operations under the item path (`/tasks/{id}/comments`, `POST /tasks/{id}/close`). */
  children: Operation[];
}

/** Groups operations into resource families by collection path. */
export function resourceFamilies(operations: readonly Operation[]): ResourceFamily[] {
  const families = new Map<string, ResourceFamily>();
  const familyOf = (collection: string): ResourceFamily => {
    let family = families.get(collection);
    if (!family) {
      family = {
        collection,
        item: undefined,
        idParameter: undefined,
        parentParameters: pathParameterNames(collection),
        create: undefined,
        list: undefined,
        read: undefined,
        updates: [],
        remove: undefined,
        children: [],
      };
      families.set(collection, family);
    }
    return family;
  };
  for (const operation of operations) {
    const path = toTemplateForm(operation.path).replace(/\/+$/, "") || "/";
    const method = operation.method.toUpperCase();
    if (isItemPath(path)) {
      const collection = path.replace(/\/\{[^}]+\}$/, "") || "/";
      const family = familyOf(collection);
      family.item ??= path;
      family.idParameter ??= path.match(/\{([^}]+)\}$/)?.[1];
      if (method === "GET") family.read ??= operation;
      else if (method === "PUT" || method === "PATCH") family.updates.push(operation);
      else if (method === "DELETE") family.remove ??= operation;
      else family.children.push(operation);
    } else {
      const family = familyOf(path);
      if (method === "POST") family.create ??= operation;
      else if (method === "GET") family.list ??= operation;
    }
  }
  // Sub-resources and actions under an item belong to the item's family as children.
  for (const operation of operations) {
    const path = toTemplateForm(operation.path);
    for (const family of families.values()) {
      if (family.item && path.startsWith(`${family.item}/`)) family.children.push(operation);
    }
  }
  return [...families.values()];
}

/** The family whose item path is the longest prefix of `path` (the resource a path's last id refers to). */
export function familyForItem(families: readonly ResourceFamily[], path: string): ResourceFamily | undefined {
  const template = toTemplateForm(path);
  return families
    .filter((family) => family.item && (template === family.item || template.startsWith(`${family.item}/`)))
    .sort((a, b) => (b.item?.length ?? 0) - (a.item?.length ?? 0))[0];
}

/** The family that owns a path parameter: the one whose item path ends with `{parameter}`. */
export function familyOfParameter(
  families: readonly ResourceFamily[],
  path: string,
  parameter: string,
): ResourceFamily | undefined {
  const template = toTemplateForm(path);
  const index = template.indexOf(`{${parameter}}`);
  if (index < 0) return undefined;
  const prefix = template.slice(0, index + parameter.length + 2);
  return families.find((family) => family.item === prefix);
}

// Writes that could hurt the target beyond the probe's own data, or end the probe's own sessions.
const DANGEROUS_SEGMENT =
  /^(logout|log-out|signout|sign-out|reset|reset-password|purge|drop|wipe|truncate|shutdown|restart|reboot|destroy|clear|flush|seed|migrate|migrations|password|passwords|change-password|credentials|deactivate|disable|ban|suspend|impersonate|revoke|rotate|bulk-delete|delete-all|import|restore|backup)$/i;

/**
 * Whether a write may be sent at all (dangerous paths never; DELETE only on an item of the probe's; an
 * update of the caller itself only `byOwnAccount`, an account the run made).
 */
export function isSafeWrite(operation: Operation, options: { byOwnAccount?: boolean } = {}): boolean {
  if (operation.graphql) return isSafeGraphqlField(operation.graphql);
  const method = operation.method.toUpperCase();
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return true;
  if (hasSegment(operation.path, DANGEROUS_SEGMENT)) return false;
  if (updatesCaller(operation) && !options.byOwnAccount) return false;
  // PUT, PATCH and DELETE on a path with no id change state every user shares (settings, a whole
  // collection): a probe may only change what it created itself, so these are never sent.
  if ((method === "DELETE" || method === "PUT" || method === "PATCH") && !isItemPath(operation.path))
    return false;
  return true;
}

// Every GraphQL field travels as a POST: its kind and leading verb say what it does. Reads are safe; of the
// writes only those that create something new are, since an update or an action may change what others own.
// A verb anywhere in the name counts (`systemUpdate`, `pasteDelete`): names put it first or last.
const CREATING_FIELD = /^(create|add|insert|register|signup|upload|submit|post|new)(?=[A-Z0-9_]|$)/;
const ACTION_WORD =
  /^(update|delete|remove|destroy|drop|purge|reset|wipe|truncate|clear|erase|revoke|deactivate|disable|ban|shutdown|restart|reboot|kill|terminate|cancel|set|edit|change|modify|patch|put|replace|import|restore|migrate|run|exec|execute|trigger|transfer|pay|charge|refund|grant|approve)$/i;

// `importPaste(url)` makes one new paste from what it fetches; `importDatabase`, `importUsers` or a bare
// `import` may replace what others own, so only an import of one named thing counts as a creation.
const IMPORT_OF_ONE = /^import([A-Z][a-z]+)$/;
const BULK_NOUN =
  /^(all|data|database|db|dump|backup|snapshot|state|settings|config|configuration|everything|bulk|batch|csv|file|archive)$/i;

function isSafeGraphqlField(graphql: NonNullable<Operation["graphql"]>): boolean {
  const effect = graphqlEffect(graphql);
  if (effect === "destructive") return false;
  const imported = IMPORT_OF_ONE.exec(graphql.field)?.[1];
  if (imported && !BULK_NOUN.test(imported) && !/s$/.test(imported)) return true;
  const words = graphql.field.split(/_|(?=[A-Z])/).filter(Boolean);
  if (words.some((word) => ACTION_WORD.test(word))) return false;
  if (effect === "read") return true;
  return CREATING_FIELD.test(`${graphql.field.charAt(0).toLowerCase()}${graphql.field.slice(1)}`);
}

// Where an application keeps the signed-in account's own record, addressed without an id.
const CALLER_SEGMENT =
  /^(me|my|self|myself|whoami|current-?user|userinfo|profile|my-?profile|account|my-?account|settings|preferences)$/i;

/** A path about the caller itself (`/api/me`, `/profile.php`, `/account/settings`): no id, a self-like name. */
export function isCallerPath(path: string): boolean {
  return (
    pathParameterNames(path).length === 0 && CALLER_SEGMENT.test(segmentName(lastStaticSegment(path) ?? ""))
  );
}

/**
 * A write to the caller's own record (`PATCH /api/me`, a profile form posting to its page): sent in a
 * seeded account's session it overwrites that account, which the run did not create, and can change what
 * later checks compare (its role, its e-mail). Only an account the run made itself may send one.
 */
export function updatesCaller(operation: Operation): boolean {
  const method = operation.method.toUpperCase();
  return (
    (method === "POST" || method === "PUT" || method === "PATCH") &&
    !operation.graphql &&
    isCallerPath(operation.path)
  );
}

const AUTH_SEGMENT =
  /^(login|log-in|signin|sign-in|auth|authenticate|token|tokens|oauth|oauth2|session|sessions|register|signup|sign-up|refresh)$/i;

/** Sign-in and token endpoints: they hand out credentials by design. */
export function isAuthOperation(operation: Pick<Operation, "path">): boolean {
  return hasSegment(operation.path, AUTH_SEGMENT);
}

/**
 * Whether a segment of the path, read as a name, matches `pattern`: a server page's extension is no part
 * of its name (`logout.php` signs out like `/logout`).
 */
export function hasSegment(path: string, pattern: RegExp): boolean {
  return toTemplateForm(path)
    .split("/")
    .filter(Boolean)
    .some((segment) => pattern.test(segmentName(segment)));
}

/** A path segment as a name: without a server page's or a format's extension (`profile.php` → `profile`). */
export function segmentName(segment: string): string {
  return segment.replace(PAGE_EXTENSION, "");
}

/** The raw OpenAPI operation object, for fields the map does not carry (description, tags, scopes). */
export function rawOperation(map: SystemMap, operation: Operation): Record<string, unknown> | undefined {
  const paths = map.openapi?.document.paths as Record<string, Record<string, unknown>> | undefined;
  if (!paths) return undefined;
  const shape = (path: string) =>
    toTemplateForm(path)
      .replace(/\{[^}]+\}/g, "{}")
      .replace(/\/+$/, "");
  const wanted = shape(operation.path);
  const entries = Object.entries(paths);
  // Exact first; else the document path is the operation's path minus a server base path.
  const match =
    entries.find(([path]) => shape(path) === wanted) ??
    entries.find(([path]) => wanted.endsWith(shape(path)) && shape(path).length > 1);
  const raw = match?.[1]?.[operation.method.toLowerCase()];
  return raw && typeof raw === "object" ? (raw as Record<string, unknown>) : undefined;
}

/** The last segment of a path that is not a parameter: `tasks` for `/projects/{id}/tasks`. */
export function lastStaticSegment(path: string): string | undefined {
  return toTemplateForm(path)
    .split("/")
    .filter((segment) => segment.length > 0 && !segment.startsWith("{"))
    .pop();
}

/** A server page's or a format's extension: `tickets.php`, `Orders.aspx`, `users.json` name a collection too. */
const PAGE_EXTENSION = /\.(php\d?|phtml|aspx?|ashx|jspx?|do|action|cgi|pl|cfm|html?|json|xml)$/i;

/**
 * A resource name in its singular, lower-case form, so `tasks`, `Task`, `task_id`'s stem and a server
 * page `tasks.php` compare equal.
 */
export function nounOf(name: string): string {
  const lower = name.replace(PAGE_EXTENSION, "").toLowerCase().replace(/[-_]/g, "");
  if (lower === "people") return "person";
  if (lower.endsWith("ies") && lower.length > 4) return `${lower.slice(0, -3)}y`;
  if (/(sses|xes|ches|shes)$/.test(lower)) return lower.slice(0, -2);
  if (lower.endsWith("s") && !lower.endsWith("ss") && lower.length > 2) return lower.slice(0, -1);
  return lower;
}

/** What a page that shows one item is named for: `view_ticket.php`, `ticket-details.php`, `showTicket` → `ticket`. */
export function pageNoun(segment: string): string {
  const bare = segment
    .replace(PAGE_EXTENSION, "")
    .replace(/^(view|show|display|read|get|open|detail|details)[-_]?(?=[a-z])/i, "")
    .replace(/[-_]?(view|detail|details|page|info|display)$/i, "");
  return nounOf(bare || segment);
}

/**
 * Where items of `family` are made or listed when its own collection does neither: a nested collection of
 * the same name (`POST /projects/{id}/tasks` creates what `/tasks/{taskId}` addresses). `role` picks the
 * create or the list operation. The shortest such collection wins; undefined when none matches.
 */
export function nestedFamilyFor(
  families: readonly ResourceFamily[],
  family: ResourceFamily,
  role: "create" | "list",
): ResourceFamily | undefined {
  if (!family.item || !family.idParameter) return undefined;
  const name = lastStaticSegment(family.collection);
  if (!name) return undefined;
  const noun = nounOf(name);
  return families
    .filter(
      (candidate) =>
        candidate !== family &&
        candidate[role] !== undefined &&
        candidate.parentParameters.length > 0 &&
        // Items made under one of their own kind (sub-tasks of a task) would need themselves first.
        !candidate.collection.startsWith(`${family.item}/`) &&
        nounOf(lastStaticSegment(candidate.collection) ?? "") === noun &&
        family.parentParameters.every((parameter) => candidate.parentParameters.includes(parameter)),
    )
    .sort((a, b) => a.collection.length - b.collection.length)[0];
}
