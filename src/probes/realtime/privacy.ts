import { buildRequest, toSpec } from "../api/request-builder.ts";
import type { CreatedResource } from "../api/resource-factory.ts";
import { listItems } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { Listing } from "./event-driver.ts";

// Whether someone may see a resource, asked of the HTTP API itself: the channel leaks only if the API
// would refuse the same reader. A read answering 401/403/404 is a refusal; an answer carrying the
// resource's data is an allowance; anything else (a 200 page without the data, a 5xx) proves nothing.

export interface ReadVerdict {
  verdict: "denied" | "allowed" | "unknown";
  how: string;
  exchange?: HttpExchange;
}

const REFUSED = new Set([401, 403, 404]);

function carries(exchange: HttpExchange, resource: CreatedResource): boolean {
  const body = exchange.response?.body ?? "";
  if (resource.markers.some((marker) => marker.length >= 6 && body.includes(marker))) return true;
  return resource.markers.length === 0 && body.includes(`"${resource.id}"`);
}

export async function canRead(
  run: ProbeRun,
  resource: CreatedResource,
  user: string | undefined,
  listing?: Listing,
): Promise<ReadVerdict> {
  const who = user ?? "anonymous";
  const family = resource.family;
  const list =
    listing ?? (family.list ? { operation: family.list, pathValues: resource.pathValues } : undefined);
  if (family.read) {
    const prepared = buildRequest(family.read, { seed: "read", pathValues: resource.pathValues });
    const exchange = await send(run, user, toSpec(run.target.baseUrl, prepared));
    if (!exchange) return { verdict: "unknown", how: `GET ${family.item} could not be sent as ${who}` };
    const status = statusOf(exchange);
    if (REFUSED.has(status))
      return { verdict: "denied", how: `GET ${family.item} answers ${status} to ${who}`, exchange };
    if (isSuccess(exchange) && carries(exchange, resource)) {
      return { verdict: "allowed", how: `GET ${family.item} shows it to ${who}`, exchange };
    }
    const unknown: ReadVerdict = {
      verdict: "unknown",
      how: `GET ${family.item} answers ${status || exchange.error} to ${who} without the resource`,
      exchange,
    };
    // A read that answers neither the record nor a refusal (`200 null`) leaves the list to decide.
    if (!listing) return unknown;
    const listed = await listVerdict(run, resource, user, listing);
    return listed.verdict === "unknown" ? unknown : { ...listed, how: `${unknown.how}; ${listed.how}` };
  }
  if (list) return listVerdict(run, resource, user, list);
  return { verdict: "unknown", how: `no read or list operation for ${family.collection}` };
}

/** Whether `user`'s list shows the record, refuses the list, or omits what the owner's list shows. */
async function listVerdict(
  run: ProbeRun,
  resource: CreatedResource,
  user: string | undefined,
  listing: Listing,
): Promise<ReadVerdict> {
  const who = user ?? "anonymous";
  const path = listing.operation.path;
  const list = async (as: string | undefined) =>
    send(
      run,
      as,
      toSpec(
        run.target.baseUrl,
        buildRequest(listing.operation, { seed: "list", pathValues: listing.pathValues }),
      ),
    );
  const exchange = await list(user);
  if (!exchange) return { verdict: "unknown", how: `GET ${path} could not be sent as ${who}` };
  const status = statusOf(exchange);
  if (REFUSED.has(status))
    return { verdict: "denied", how: `GET ${path} answers ${status} to ${who}`, exchange };
  if (!isSuccess(exchange))
    return { verdict: "unknown", how: `GET ${path} answers ${status || exchange.error} to ${who}`, exchange };
  if (carries(exchange, resource))
    return { verdict: "allowed", how: `GET ${path} lists it for ${who}`, exchange };
  // Absent from a list proves nothing unless the owner's own list shows it (pagination, sorting).
  const owners = await list(resource.owner);
  if (
    owners &&
    isSuccess(owners) &&
    carries(owners, resource) &&
    listItems(owners.response?.json).length > 0
  ) {
    return { verdict: "denied", how: `GET ${path} lists it for its owner but not for ${who}`, exchange };
  }
  return {
    verdict: "unknown",
    how: `GET ${path} does not show it to ${who} nor clearly to its owner`,
    exchange,
  };
}
