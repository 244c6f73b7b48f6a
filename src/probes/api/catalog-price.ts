import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { get } from "../auditor/misconfig-support.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { statusOf } from "../http/http-types.ts";
import { chooseBranch, propertiesOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { freshNumber, MONEY_FIELD, type Submission, taken } from "./client-price.ts";
import { operationKey } from "./operation-index.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { bodyKind, clonePrepared, requestSchema } from "./request-builder.ts";

// The JSON side of a client-chosen price (CWE-472, CWE-602): a write names a catalogue record
// (`product_id`) and carries a money field (`price`, `unit_price`, `total`) the catalogue already serves
// for that record. The price is the server's to know; a handler that stores the one the request names
// lets anyone pay what they like. Two signals make the finding: the write is taken with the catalogue's
// own figure and with a six-digit number no catalogue answer showed, and the record read back afterwards
// (or, with no way to read it, the record the write answered) holds that number.
//
// Left alone: writes whose path names a negotiation (an offer, a bid, a quote: the figure is the user's to
// choose) and writes to the catalogue itself (an editor setting a product's price).

const REFERENCE = /^(.+?)(?:_id|Id|ID)$/;
const NEGOTIATION = /offer|bid|quote|proposal|auction|listing|budget|donat|tip|pledge|wish/i;
const PARAMETER = /^\{[^}]+\}$/;

interface Catalogue {
  /** The body field that names the catalogue record, and the record's own id value. */
  reference: string;
  id: string | number;
  /** The money field of the write and the figure the catalogue serves for it. */
  field: string;
  figure: number;
  read: HttpExchange;
}

/** A JSON write's catalogue price taken from the request: a draft per field whose tampered value was stored. */
export async function catalogPriceStored(run: ProbeRun, submission: Submission): Promise<EnvelopeDraft[]> {
  const { operation, user } = submission;
  if (!["POST", "PUT", "PATCH"].includes(operation.method.toUpperCase())) return [];
  if (bodyKind(operation) !== "json" || NEGOTIATION.test(operation.path)) return [];
  const body = submission.prepared.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return [];
  // The schema's fields as well as the body's: a baseline of the required fields may lack the price.
  const schema = requestSchema(operation);
  const declared = schema ? propertiesOf(chooseBranch(schema)) : {};
  const fields = [...new Set([...Object.keys(body as object), ...Object.keys(declared)])];
  const catalogue = await catalogueOf(run, operation, user, fields);
  if (!catalogue) return [];
  // A string-typed money field keeps its type: a handler may refuse a number where it reads text.
  const sent = (body as Record<string, unknown>)[catalogue.field];
  const asText =
    typeof sent === "string" || (sent === undefined && declared[catalogue.field]?.type === "string");
  const withPrice = (figure: number): PreparedRequest => {
    const prepared = clonePrepared(submission.prepared);
    const price = asText ? String(figure) : figure;
    prepared.body = { ...(body as object), [catalogue.reference]: catalogue.id, [catalogue.field]: price };
    return prepared;
  };
  const untouched = withPrice(catalogue.figure);
  const first = await sendPrepared(run, user, untouched);
  // The write as the catalogue prices it must be taken: a refusal of both says nothing of the price.
  if (!taken(first) || holds(first, catalogue.field, catalogue.figure) === false) return [];
  const digits = freshNumber([catalogue.read]);
  const prepared = withPrice(Number(digits));
  const exchange = await sendPrepared(run, user, prepared);
  if (!taken(exchange)) return [];
  const readBack = await readCreated(run, user, operation, exchange);
  const stored = readBack ?? exchange;
  if (holds(stored, catalogue.field, Number(digits)) !== true) return [];
  return [findingOf(run, submission, catalogue, { prepared, exchange, digits, readBack })];
}

/** The catalogue record a reference field of the body names, with the figure it serves for a money field. */
async function catalogueOf(
  run: ProbeRun,
  operation: Operation,
  user: string | undefined,
  fields: string[],
): Promise<Catalogue | undefined> {
  const money = fields.filter((field) => MONEY_FIELD.test(field));
  if (money.length === 0) return undefined;
  for (const reference of fields) {
    const stem = REFERENCE.exec(reference)?.[1]?.toLowerCase();
    if (!stem) continue;
    // The catalogue nearest the write (`/api/shop/products` for `/api/shop/orders`) when several match.
    const list = run.map.operations
      .filter(
        (candidate) =>
          candidate.method.toUpperCase() === "GET" &&
          namesCollection(candidate.path, stem) &&
          candidate.path !== operation.path,
      )
      .sort((a, b) => sharedPrefix(b.path, operation.path) - sharedPrefix(a.path, operation.path))[0];
    if (!list) continue;
    const read = await get(run, user, list.path);
    if (!read || statusOf(read) !== 200) continue;
    for (const item of itemsOf(read.response?.json)) {
      const id = item.id ?? item[reference];
      if (typeof id !== "number" && typeof id !== "string") continue;
      for (const field of money) {
        const figure = Number(item[field] ?? item.price);
        if (Number.isFinite(figure) && figure > 0) return { reference, id, field, figure, read };
      }
    }
  }
  return undefined;
}

/** `/api/products` for `product`: the last segment is the stem, plural or not, with no parameter after it. */
function namesCollection(path: string, stem: string): boolean {
  const segments = path.split("?")[0]!.split("/").filter(Boolean);
  const last = segments.at(-1)?.toLowerCase().replace(/-/g, "_");
  if (!last || PARAMETER.test(last)) return false;
  const plural = stem.endsWith("y") ? `${stem.slice(0, -1)}ies` : `${stem}s`;
  return last === stem || last === plural || last === `${stem}es`;
}

function sharedPrefix(a: string, b: string): number {
  let index = 0;
  while (index < a.length && a[index] === b[index]) index += 1;
  return index;
}

function itemsOf(json: unknown): Array<Record<string, unknown>> {
  const list = Array.isArray(json)
    ? json
    : json && typeof json === "object"
      ? Object.values(json as Record<string, unknown>).find(Array.isArray)
      : undefined;
  return (list ?? []).filter(
    (item): item is Record<string, unknown> => !!item && typeof item === "object" && !Array.isArray(item),
  );
}

/** Whether the record in an answer holds `figure` in `field`; undefined when it has no such field. */
function holds(exchange: HttpExchange | undefined, field: string, figure: number): boolean | undefined {
  const record = recordIn(exchange);
  if (!record || record[field] === undefined || record[field] === null) return undefined;
  return Math.abs(Number(record[field]) - figure) < 0.005;
}

/**
 * The record an answer holds: its JSON object, or the one object an envelope (`{ "order": {…} }`,
 * `{ "data": {…} }`) wraps. Undefined for anything but a JSON object.
 */
function recordIn(exchange: HttpExchange | undefined): Record<string, unknown> | undefined {
  const json = exchange?.response?.json;
  if (!json || typeof json !== "object" || Array.isArray(json)) return undefined;
  const values = Object.values(json);
  const wrapped = values.filter((value) => value && typeof value === "object" && !Array.isArray(value));
  return values.length <= 2 && wrapped.length === 1
    ? (wrapped[0] as Record<string, unknown>)
    : (json as Record<string, unknown>);
}

/** The created (or updated) record read through the write's own collection, when the map has that read. */
async function readCreated(
  run: ProbeRun,
  user: string | undefined,
  operation: Operation,
  exchange: HttpExchange,
): Promise<HttpExchange | undefined> {
  const path = createdPath(run, operation, exchange);
  if (!path) return undefined;
  const read = await get(run, user, path);
  return read && statusOf(read) === 200 ? read : undefined;
}

/**
 * Where the written record is read: a POST's new id under the collection's item read, or the very path a
 * PUT or PATCH wrote, when the map has a GET there.
 */
function createdPath(run: ProbeRun, operation: Operation, exchange: HttpExchange): string | undefined {
  const reads = (pattern: RegExp) =>
    run.map.operations.some(
      (candidate) => candidate.method.toUpperCase() === "GET" && pattern.test(candidate.path),
    );
  if (operation.method.toUpperCase() !== "POST")
    return reads(new RegExp(`^${asPattern(operation.path)}$`))
      ? new URL(exchange.request.url).pathname
      : undefined;
  const id = recordIn(exchange)?.id;
  if (typeof id !== "number" && typeof id !== "string") return undefined;
  // The concrete collection the write went to, and the new id under it.
  return reads(new RegExp(`^${asPattern(operation.path)}/\\{[^}/]+\\}$`))
    ? `${new URL(exchange.request.url).pathname}/${encodeURIComponent(String(id))}`
    : undefined;
}

/** A path template as a pattern its concrete paths (and other templates of it) match. */
const asPattern = (text: string) =>
  text.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}/]+\}/g, "(?:[^/]+)");

function findingOf(
  run: ProbeRun,
  submission: Submission,
  catalogue: Catalogue,
  proof: { prepared: PreparedRequest; exchange: HttpExchange; digits: string; readBack?: HttpExchange },
): EnvelopeDraft {
  const { operation, user } = submission;
  const key = operationKey(operation);
  const { field, figure, reference, id } = catalogue;
  const marked = (text: string | undefined) => text?.split(proof.digits).join("{{unique-number}}");
  const write = stepFromPrepared("tampered", proof.prepared, user, {}, { captureId: !!proof.readBack });
  if (write.body !== undefined) write.body = marked(write.body);
  const steps: ReproStep[] = [write];
  let checked = "tampered";
  if (proof.readBack) {
    const readPath = new URL(proof.readBack.request.url).pathname;
    // A POST's record is the one the test's own write creates: its id is captured, not the probe's.
    const path =
      operation.method.toUpperCase() === "POST"
        ? `${readPath.slice(0, readPath.lastIndexOf("/"))}/{{tampered.id}}`
        : readPath;
    steps.push({ name: "read", as: user, method: "GET", path });
    checked = "read";
  }
  const catalogueRead = new URL(catalogue.read.request.url).pathname;
  const where = proof.readBack
    ? `read back from ${new URL(proof.readBack.request.url).pathname}`
    : "answered";
  return buildFinding(run, {
    domain: "api",
    defectClass: "validation-missing",
    title: `${key} takes ${field} from the client: ${proof.digits} was stored where ${catalogueRead} prices ${reference} ${id} at ${figure}`,
    summary: `${catalogueRead} serves ${reference} ${id} with ${field} ${figure}. ${key} took the write with that figure, and again with ${field} = ${proof.digits} (answered ${statusOf(proof.exchange)}); the record ${where} holds ${proof.digits}: the server stored the ${field} the request named instead of the catalogue's.`,
    impact: "Anyone can pay what they like: the price of what they order is whatever the request says.",
    location: endpointLocation(operation),
    related: [{ kind: "endpoint", value: `GET ${catalogueRead}` }],
    severity: "high",
    confidence: proof.readBack ? 0.9 : 0.8,
    discriminator: `client-price:${field}`,
    exchanges: [
      { label: "catalogue", exchange: catalogue.read },
      { label: "tampered", exchange: proof.exchange },
      ...(proof.readBack ? [{ label: "read-back", exchange: proof.readBack }] : []),
    ],
    repro: {
      title: `${key} does not store a ${field} the client chose`,
      steps,
      assertions: [
        {
          kind: "number_lacks",
          step: checked,
          digits: "{{unique-number}}",
          message: `the stored ${field} must be the catalogue's, not the one the request named`,
        },
      ],
    },
  });
}
