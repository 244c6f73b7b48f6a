import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { FormInput, Operation, SystemMap } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { creationSteps, idStepsFor, NO_CREATION, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { chooseBranch, propertiesOf } from "../schema-values/json-schema.ts";
import { acceptedSubmission } from "../session/form-submission.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { isItemPath, operationKey } from "./operation-index.ts";
import { postingForms, SESSION_FIELD } from "./posting-forms.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { bodyKind, buildRequest, clonePrepared, requestSchema } from "./request-builder.ts";
import type { CreatedResource, ResourceFactory } from "./resource-factory.ts";
import { idOf, listItems, uniqueSeed } from "./resource-factory.ts";
import { echoes, looksLikeErrorPayload, valueAtPath } from "./value-tools.ts";

// A field that takes one of a few values (a priority, a status, a kind) where the operation's own schema
// says nothing of them — no document, or a document that forgot the enum. A tester learns the allowed set
// from what the application shows elsewhere: the options of the form that posts the field, or the same
// field in a sibling operation whose handler refuses values outside a set (create validates, the other
// write does not). The oracle: an in-set value is accepted, a value outside the set is accepted the same
// way AND is stored (a read of the record shows it, or, with no read, the answer returns it as the stored
// record), twice with two different values. A refusal (4xx), or an answer that does not store the value
// (a default substituted), clears it.

const MAX_CHOICES = 24;

interface Choices {
  field: string;
  values: string[];
  /** Where the set was learned: `the form at /page` or `POST /other`. */
  from: string;
}

function stringEnum(schema: JsonSchema | undefined): string[] | undefined {
  if (!schema) return undefined;
  const values = chooseBranch(schema).enum;
  if (!Array.isArray(values) || values.length < 2 || values.length > MAX_CHOICES) return undefined;
  return values.every((value) => typeof value === "string" && value !== "")
    ? (values as string[])
    : undefined;
}

/** Body field names apart from anti-forgery tokens. */
function fieldNames(schema: JsonSchema | undefined): string[] {
  return schema
    ? Object.keys(propertiesOf(chooseBranch(schema))).filter((name) => !SESSION_FIELD.test(name))
    : [];
}

/**
 * The allowed values of the operation's body fields that its own schema leaves open: a form's options for
 * it, else the enum of the same field in another operation taking a body of the same shape (at least two
 * other fields in common, so `status` of an order is not judged by `status` of a ticket).
 */
export function inferredChoices(map: SystemMap, operation: Operation): Choices[] {
  const schema = requestSchema(operation);
  const properties = schema ? propertiesOf(chooseBranch(schema)) : {};
  const own = fieldNames(schema);
  const found: Choices[] = [];
  const controls = postingForms(map, operation).flatMap(({ form }) => form.inputs ?? []);
  for (const field of own) {
    if (stringEnum(properties[field]) || schemaTypeIsNot(properties[field], "string")) continue;
    const options = controls
      .filter((control) => control.name === field && (control.type === "select" || control.type === "radio"))
      .flatMap((control) => control.options ?? [])
      .filter((value, index, all) => value !== "" && all.indexOf(value) === index);
    if (options.length >= 2 && options.length <= MAX_CHOICES) {
      found.push({ field, values: options, from: "the options of the form that posts it" });
      continue;
    }
    for (const other of map.operations) {
      if (other === operation) continue;
      const otherSchema = requestSchema(other);
      const values = stringEnum(otherSchema ? propertiesOf(chooseBranch(otherSchema))[field] : undefined);
      if (!values) continue;
      const shared = fieldNames(otherSchema).filter((name) => name !== field && own.includes(name));
      if (shared.length < 2) continue;
      found.push({ field, values, from: `${operationKey(other)}, which takes the same fields` });
      break;
    }
  }
  return found;
}

function schemaTypeIsNot(schema: JsonSchema | undefined, type: string): boolean {
  const declared = schema ? chooseBranch(schema).type : undefined;
  return typeof declared === "string" && declared !== type;
}

interface Sent {
  prepared: PreparedRequest;
  exchange: HttpExchange;
}

/** A 2xx that is neither an error payload nor the submitted form shown again. */
function accepted(exchange: HttpExchange | undefined): exchange is HttpExchange {
  return Boolean(exchange && acceptedSubmission(exchange) && !looksLikeErrorPayload(exchange.response?.json));
}

/**
 * For each body field with an inferred set of values, whether a value outside it is stored. At most
 * users + 1 + 2 × (1 + read) requests per field.
 */
export async function enumOutsideStored(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  users: ReadonlyArray<string | undefined>,
): Promise<EnvelopeDraft[]> {
  const method = operation.method.toUpperCase();
  if (!["POST", "PUT", "PATCH"].includes(method) || bodyKind(operation) === "unsupported") return [];
  const findings: EnvelopeDraft[] = [];
  for (const choices of inferredChoices(run.map, operation)) {
    const finding = await probeField(run, factory, operation, users, choices);
    if (finding) findings.push(finding);
  }
  return findings;
}

async function probeField(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  users: ReadonlyArray<string | undefined>,
  choices: Choices,
): Promise<EnvelopeDraft | undefined> {
  // The in-set baseline, as the least privileged user it is accepted for, on a resource of the probe's own.
  let inSet: (Sent & { user: string | undefined; resource?: CreatedResource }) | undefined;
  for (const user of users) {
    const located = await factory.pathValuesFor(operation, user);
    if (!located || (isItemPath(operation.path) && !located.owned)) continue;
    const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: located.values });
    if (!prepared.body || typeof prepared.body !== "object" || Array.isArray(prepared.body)) return undefined;
    prepared.body = { ...(prepared.body as Record<string, unknown>), [choices.field]: choices.values[0] };
    const exchange = await sendPrepared(run, user, prepared);
    if (accepted(exchange)) {
      inSet = { prepared, exchange, user, resource: located.resource };
      break;
    }
  }
  if (!inSet) return undefined;
  const outside: Array<Sent & { read?: HttpExchange }> = [];
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const value = `qaas-${uniqueSeed()}`;
    const prepared = clonePrepared(inSet.prepared);
    prepared.body = { ...(prepared.body as Record<string, unknown>), [choices.field]: value };
    const exchange = await sendPrepared(run, inSet.user, prepared);
    if (!accepted(exchange) || statusOf(exchange) !== statusOf(inSet.exchange)) return undefined;
    const stored = await storedValue(
      run,
      factory,
      operation,
      inSet.user,
      prepared,
      exchange,
      choices.field,
      value,
    );
    if (!stored.stored) return undefined;
    outside.push({ prepared, exchange, read: stored.read });
  }
  const [first, second] = outside as [Sent & { read?: HttpExchange }, Sent & { read?: HttpExchange }];
  const key = operationKey(operation);
  const sentValue = (sent: Sent) =>
    JSON.stringify((sent.prepared.body as Record<string, unknown>)[choices.field]);
  const created = inSet.resource ? creationSteps(inSet.resource) : NO_CREATION;
  return buildFinding(run, {
    domain: "api",
    defectClass: "validation-missing",
    title: `${key} stores a ${choices.field} outside its allowed values`,
    summary: `${key} answered ${statusOf(first.exchange)} to ${choices.field} = ${sentValue(first)} and to ${sentValue(second)} as it does to ${JSON.stringify(choices.values[0])}, and ${first.read ? "the record read back" : "the record it returned"} holds the value sent (twice); the allowed values (${choices.values.map((value) => JSON.stringify(value)).join(", ")}) come from ${choices.from}.`,
    impact:
      "A value the application does not know is stored: screens, filters, reports and workflows that branch on the field misbehave or hide the record.",
    location: endpointLocation(operation),
    severity: severityFor("validation-missing"),
    confidence: first.read ? 0.9 : 0.85,
    discriminator: `body:${choices.field}`,
    exchanges: [
      { label: "outside-set", exchange: first.exchange },
      ...(first.read ? [{ label: "read-back", exchange: first.read }] : []),
      { label: "in-set", exchange: inSet.exchange },
      { label: "outside-set-again", exchange: second.exchange },
      ...(second.read ? [{ label: "read-back-again", exchange: second.read }] : []),
    ],
    repro: {
      title: `${key} refuses a ${choices.field} outside ${choices.values.join(", ")}`,
      steps: [
        ...created.steps,
        stepFromPrepared("failing", first.prepared, inSet.user, idStepsFor(first.prepared, created)),
      ],
      assertions: [
        {
          kind: "not_success",
          step: "failing",
          message: `${key} must refuse ${choices.field} = ${sentValue(first)} with a 4xx`,
        },
      ],
    },
  });
}

/**
 * Whether the value is stored: a read of the record (the family's read of the written or created id, else
 * its row in the list) shows it; with no read at all, the answer returns it as the stored record.
 */
async function storedValue(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  user: string | undefined,
  prepared: PreparedRequest,
  exchange: HttpExchange,
  field: string,
  value: string,
): Promise<{ stored: boolean; read?: HttpExchange }> {
  const family =
    factory.familyOf(operation) ?? factory.families.find((candidate) => candidate.create === operation);
  const answer = exchange.response?.json;
  const id =
    (family?.idParameter && prepared.pathValues[family.idParameter]) ||
    (family ? idOf(unwrapOne(answer), family) : undefined);
  if (family && id !== undefined && (family.read || family.list)) {
    const reader = family.read ?? family.list!;
    const pathValues = {
      ...prepared.pathValues,
      ...(family.idParameter ? { [family.idParameter]: id } : {}),
    };
    const read = await sendPrepared(run, user, buildRequest(reader, { seed: uniqueSeed(), pathValues }));
    if (read && isSuccess(read)) {
      const record = family.read
        ? read.response?.json
        : listItems(read.response?.json).find((item) => idOf(item, family) === id);
      if (record !== undefined) return { stored: echoes(record, field, value), read };
    }
  }
  // An answer that merely echoes the request (a search, a preview) stores nothing: only a created record
  // (201, or a record carrying an id) returning the value witnesses it.
  const record = unwrapOne(answer);
  const isRecord =
    statusOf(exchange) === 201 ||
    Boolean(record && typeof record === "object" && ID_KEY.test(Object.keys(record as object).join(" ")));
  return { stored: isRecord && (echoes(answer, field, value) || valueAtPath(record, field) === value) };
}

const ID_KEY = /(^|\s)(id|_id|uuid)(\s|$)/;

/** `{data: {...}}` → the record inside; a record stays itself. */
function unwrapOne(json: unknown): unknown {
  if (!json || typeof json !== "object" || Array.isArray(json)) return json;
  const values = Object.values(json as Record<string, unknown>);
  const inner = values.filter((item) => item && typeof item === "object" && !Array.isArray(item));
  return values.length === 1 && inner.length === 1 ? inner[0] : json;
}
