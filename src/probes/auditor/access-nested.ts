import type { Operation } from "../../map/system-map.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { byPrivilege, isAdminLike, outsidersOf } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Leak } from "./authz-support.ts";
import { answer } from "./authz-support.ts";
import { carriesData, sameData } from "./same-data.ts";

// Nested objects known only from the pages a crawl visited (`/orders/7/invoices/31` linked from an order
// page, with no JSON list to create or discover them): the child of a parent the owner holds, asked for by
// another user under a parent of THEIR OWN. A server that checks the parent against the caller but never
// the child against the parent serves the owner's child there. Three signals make it a leak: the answer
// shows what the owner sees; the same path with a child that does not exist does not (the page is not
// generic); and the caller's own child under that parent, when it has one, shows something else.

/** Concrete crawled paths tried per operation, and outsiders per path. */
const SAMPLES = 3;
const OUTSIDERS = 3;
const MISSING_ID = "987654321";

interface Template {
  operation: Operation;
  names: string[];
  /** Matches a concrete path, one group per parameter. */
  pattern: RegExp;
}

function templateOf(operation: Operation): Template | undefined {
  const path = toTemplateForm(operation.path);
  const names = pathParameterNames(path);
  if (names.length < 2) return undefined;
  const source = path
    .split(/\{[^}/]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("([^/?#]+)");
  return { operation, names, pattern: new RegExp(`^${source}/?$`) };
}

function valuesOf(template: Template, path: string): Record<string, string> | undefined {
  const match = template.pattern.exec(path.split(/[?#]/)[0]!);
  if (!match) return undefined;
  return Object.fromEntries(
    template.names.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]),
  );
}

/** The template cut before `{name}` (`/orders` for `{orderId}`), and through it (`/orders/{orderId}`). */
function prefixes(operation: Operation, name: string): { collection: string; item: string } {
  const path = toTemplateForm(operation.path);
  const at = path.indexOf(`{${name}}`);
  return {
    collection: path.slice(0, at).replace(/\/$/, "") || "/",
    item: path.slice(0, at + name.length + 2),
  };
}

function getOperation(run: ProbeRun, path: string): Operation {
  return (
    run.map.operations.find(
      (operation) => operation.method.toUpperCase() === "GET" && toTemplateForm(operation.path) === path,
    ) ?? {
      method: "GET",
      path,
      security: "unknown",
      parameters: [],
      responses: {},
      seen_in: ["link"],
      documented: false,
    }
  );
}

function request(operation: Operation, values: Record<string, string>): PreparedRequest {
  return buildRequest(operation, { seed: uniqueSeed(), pathValues: values });
}

function readsData(exchange: HttpExchange | undefined): exchange is HttpExchange {
  return Boolean(
    exchange && isSuccess(exchange) && carriesData(exchange.response?.json, exchange.response?.body ?? ""),
  );
}

/** Same-origin link paths in an answer (HTML `href`/`action`, or path-looking JSON strings). */
function linkPaths(exchange: HttpExchange, baseUrl: string): string[] {
  const body = exchange.response?.body ?? "";
  const found = new Set<string>();
  for (const match of body
    .slice(0, 500_000)
    .matchAll(/(?:href|action)\s*=\s*["']([^"']+)["']|"(\/[^"\s]+)"/g)) {
    const raw = (match[1] ?? match[2] ?? "").replace(/&amp;/g, "&");
    try {
      const url = new URL(raw, baseUrl);
      if (url.origin === new URL(baseUrl).origin) found.add(url.pathname);
    } catch {
      // not a URL
    }
  }
  return [...found];
}

/**
 * `user`'s own values for the operation's parent parameters, read from the links of the parent's collection
 * (and each parent's page) as `user` sees them: a value differing from the owner's, of a parent `user` reads.
 */
async function ownParents(
  run: ProbeRun,
  template: Template,
  user: string,
  ownerValues: Record<string, string>,
): Promise<{ values: Record<string, string>; page: HttpExchange } | undefined> {
  const values: Record<string, string> = {};
  let page: HttpExchange | undefined;
  for (const name of template.names.slice(0, -1)) {
    const { collection, item } = prefixes(template.operation, name);
    const listing = await sendPrepared(run, user, request(getOperation(run, collection), values));
    if (!listing || !isSuccess(listing)) return undefined;
    const itemTemplate = templateFor(item);
    const candidates = linkPaths(listing, run.target.baseUrl)
      .map((path) => itemTemplate.exec(path)?.[1])
      .filter(
        (value): value is string =>
          value !== undefined && value !== ownerValues[name] && sameShape(value, ownerValues[name]),
      );
    let chosen: string | undefined;
    for (const candidate of [...new Set(candidates)].slice(0, 3)) {
      const read = await sendPrepared(
        run,
        user,
        request(getOperation(run, item), { ...values, [name]: candidate }),
      );
      if (readsData(read)) {
        chosen = candidate;
        page = read;
        break;
      }
    }
    if (chosen === undefined) return undefined;
    values[name] = chosen;
  }
  return page ? { values, page } : undefined;
}

/** Ids of one kind: both numbers, both UUIDs, or both carrying a digit (`new`, `export` are routes). */
function sameShape(candidate: string, known: string | undefined): boolean {
  if (known === undefined) return /\d/.test(candidate);
  const numeric = /^\d+$/;
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  if (numeric.test(known)) return numeric.test(candidate);
  if (uuid.test(known)) return uuid.test(candidate);
  return /\d/.test(candidate) === /\d/.test(known) && candidate.length === known.length;
}

/** `/orders/{orderId}` (with earlier parents filled by anything) as a prefix pattern whose group is the id. */
function templateFor(item: string): RegExp {
  const parts = item.split(/\{[^}/]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const last = parts.pop() ?? "";
  return new RegExp(`^${parts.join("[^/?#]+")}([^/?#]+)${last}(?:[/?#]|$)`);
}

/** Child reads of crawled nested pages, tried by each outsider under a parent of their own. */
export async function checkNestedPages(
  run: ProbeRun,
  operations: readonly Operation[],
  users: readonly ProfileUser[],
): Promise<Leak[]> {
  const leaks: Leak[] = [];
  for (const operation of operations) {
    if (operation.method.toUpperCase() !== "GET" || operation.security === "public") continue;
    const template = templateOf(operation);
    if (!template) continue;
    const samples = run.map.pages
      .filter((page) => (page.status ?? 200) < 300)
      .map((page) => ({ page, values: valuesOf(template, page.path) }))
      .filter((sample) => sample.values !== undefined)
      .slice(0, SAMPLES);
    let leak: Leak | undefined;
    for (const { page, values } of samples) {
      leak = await checkSample(run, template, values!, page.roles ?? [], users);
      if (leak) break;
    }
    // The crawl's ids may be gone or its user changed since: each user's own children, found the same way.
    if (!leak && samples.length > 0)
      for (const user of byPrivilege(users)
        .filter((candidate) => !isAdminLike(candidate.role))
        .slice(0, 3)) {
        const values = await ownChild(run, template, user.name);
        if (values) leak = await checkSample(run, template, values, [user.role], users);
        if (leak) break;
      }
    if (leak) leaks.push(leak);
  }
  return leaks;
}

/** A child of `user`'s own, linked from the page of a parent of theirs. */
async function ownChild(
  run: ProbeRun,
  template: Template,
  user: string,
): Promise<Record<string, string> | undefined> {
  const own = await ownParents(run, template, user, {});
  if (!own) return undefined;
  const parents = template.names.slice(0, -1);
  return linkPaths(own.page, run.target.baseUrl)
    .map((path) => valuesOf(template, path))
    .find((found) => found && parents.every((name) => found[name] === own.values[name]));
}

async function checkSample(
  run: ProbeRun,
  template: Template,
  values: Record<string, string>,
  roles: readonly string[],
  users: readonly ProfileUser[],
): Promise<Leak | undefined> {
  const { operation } = template;
  const prepared = request(operation, values);
  const child = template.names.at(-1)!;
  // The owner: the least privileged user of a role the crawl saw the page as who reads it.
  const candidates = byPrivilege(users).filter(
    (user) =>
      !isAdminLike(user.role) &&
      (roles.length === 0 || roles.some((role) => role.toLowerCase() === user.role.toLowerCase())),
  );
  let owner: ProfileUser | undefined;
  let ownerExchange: HttpExchange | undefined;
  for (const user of candidates) {
    const read = await sendPrepared(run, user.name, prepared);
    if (readsData(read)) {
      owner = user;
      ownerExchange = read;
      break;
    }
  }
  if (!owner || !ownerExchange) return undefined;
  const reference = answer(ownerExchange);
  for (const { user, relation } of outsidersOf(owner, users).slice(0, OUTSIDERS)) {
    // The parent must be protected from this user: otherwise the path itself leaks (the item check's).
    const direct = await sendPrepared(run, user.name, prepared);
    if (!direct) continue;
    if (isSuccess(direct) && sameData(reference, answer(direct))) return undefined;
    const own = await ownParents(run, template, user.name, values);
    if (!own) continue;
    const crossed = request(operation, { ...own.values, [child]: values[child]! });
    const other = await sendPrepared(run, user.name, crossed);
    if (!readsData(other) || !sameData(reference, answer(other))) continue;
    if (!(await distinctFromOthers(run, template, own, user.name, values[child]!, reference))) continue;
    const confirm = await sendPrepared(run, user.name, crossed);
    if (!readsData(confirm) || !sameData(reference, answer(confirm))) continue;
    return {
      operation,
      principal: { user, relation },
      action: "read",
      ownerExchange,
      otherExchange: other,
      confirmExchange: confirm,
      steps: [stepFromPrepared("owner", prepared, owner.name), stepFromPrepared("other", crossed, user.name)],
      owner: owner.name,
      assertion: {
        kind: "status_in",
        step: "other",
        values: [401, 403, 404],
        message: `${user.name} must not read ${owner.name}'s ${child} under a parent of their own`,
      },
    };
  }
  return undefined;
}

/**
 * The second signal: under the caller's own parent a child that does not exist, and the caller's own
 * child (linked from its parent page) when there is one, must both show something else.
 */
async function distinctFromOthers(
  run: ProbeRun,
  template: Template,
  own: { values: Record<string, string>; page: HttpExchange },
  user: string,
  ownerChild: string,
  reference: { json: unknown; text: string },
): Promise<boolean> {
  const child = template.names.at(-1)!;
  const missing = await sendPrepared(
    run,
    user,
    request(template.operation, { ...own.values, [child]: MISSING_ID }),
  );
  if (!missing || (isSuccess(missing) && sameData(reference, answer(missing)))) return false;
  const ownChild = linkPaths(own.page, run.target.baseUrl)
    .map((path) => valuesOf(template, path))
    .find(
      (found) =>
        found &&
        found[child] !== ownerChild &&
        template.names.slice(0, -1).every((name) => found[name] === own.values[name]),
    );
  if (!ownChild) return true;
  const mine = await sendPrepared(run, user, request(template.operation, ownChild));
  return !mine || !isSuccess(mine) || !sameData(reference, answer(mine));
}
