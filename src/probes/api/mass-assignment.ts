import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { creationSteps, idStepsFor, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { asSchema, chooseBranch, propertiesOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { usableUsers } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import { severityFor } from "../severity.ts";
import type { PrivilegedField } from "./mass-assignment-fields.ts";
import { holds, privilegedFields, valuesFor } from "./mass-assignment-fields.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { isSafeWrite, operationKey } from "./operation-index.ts";
import { endpointLocation, sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { bodyKind, buildRequest } from "./request-builder.ts";
import type { CreatedResource, ResourceFactory } from "./resource-factory.ts";
import { uniqueSeed } from "./resource-factory.ts";
import { valueAtPath } from "./value-tools.ts";

// Mass assignment (OWASP API3, CWE-915): a field that decides privileges, ownership or a server-computed
// value, sent on a create or an update that does not document it. Only objects the probe creates itself are
// created or updated; only a read-back that shows the value sent, where the object created or read without
// it showed another, counts, and a field where a coincidence is possible (an amount) must take a second,
// different value too.

interface ReadBack {
  json: unknown;
  exchange?: HttpExchange;
  prepared?: PreparedRequest;
}

/** The object as its creator reads it now; the answer given when nothing reads it (or the read refuses). */
async function readBack(
  run: ProbeRun,
  resource: CreatedResource,
  user: string | undefined,
  fallback: unknown,
): Promise<ReadBack> {
  const read = resource.family.read;
  if (read) {
    const prepared = buildRequest(read, { seed: uniqueSeed(), pathValues: resource.pathValues });
    const exchange = await sendPrepared(run, user, prepared);
    if (exchange && isSuccess(exchange)) return { json: unwrap(exchange.response?.json), exchange, prepared };
  }
  return { json: unwrap(fallback) };
}

function unwrap(json: unknown): unknown {
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const values = Object.values(json);
    if (values.length === 1 && values[0] && typeof values[0] === "object" && !Array.isArray(values[0]))
      return values[0];
  }
  return json;
}

/** A fresh object of the family's: addressable by its item path, or only by the id its creation answered. */
function make(
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: string | undefined,
  edit?: (request: PreparedRequest) => void,
): Promise<CreatedResource | undefined> {
  return family.idParameter ? factory.create(family, owner, edit) : factory.createRecord(family, owner, edit);
}

function withField(request: PreparedRequest, name: string, value: unknown): void {
  const body =
    request.body && typeof request.body === "object" && !Array.isArray(request.body)
      ? (request.body as Record<string, unknown>)
      : {};
  request.body = { ...body, [name]: value };
}

/** Another signed-in person's own id: what an owner field is pointed at. */
async function otherPersonId(
  run: ProbeRun,
  factory: ResourceFactory,
  owner: string | undefined,
): Promise<string | undefined> {
  const users = await usableUsers(run).catch(() => []);
  const own = owner ? await factory.harvest.ownId(owner) : undefined;
  for (const user of users) {
    if (user.name === owner) continue;
    const id = await factory.harvest.ownId(user.name);
    if (id !== undefined && id !== own) return id;
  }
  return undefined;
}

interface Assigned {
  operation: Operation;
  field: PrivilegedField;
  value: unknown;
  before: unknown;
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  steps: ReproStep[];
  readStep: string;
}

/** Tries each privileged field on the family's create and item updates; answers confirmed findings. */
export async function probeMassAssignment(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: string | undefined,
): Promise<EnvelopeDraft[]> {
  const create = family.create;
  if (!create || !factory.canCreate(family) || !isSafeWrite(create)) return [];
  const plain = await make(factory, family, owner);
  if (!plain) return [];
  const before = await readBack(run, plain, owner, plain.created);
  const other = await otherPersonId(run, factory, owner);
  const assigned: Assigned[] = [];
  const escalates = (field: PrivilegedField) => !grantsOwnRank(run, owner, field);
  for (const field of privilegedFields(create, before.json).filter(escalates)) {
    const found = await onCreate(run, factory, family, owner, field, before.json, other);
    if (found) assigned.push(found);
  }
  for (const update of family.updates) {
    const method = update.method.toUpperCase();
    if ((method !== "PATCH" && method !== "PUT") || !isSafeWrite(update)) continue;
    if (bodyKind(update) !== "json" && bodyKind(update) !== "form") continue;
    for (const field of privilegedFields(update, before.json).filter(escalates)) {
      const found = await onUpdate(run, factory, family, update, owner, field, other);
      if (found) assigned.push(found);
    }
  }
  return assigned.map((found) => findingOf(run, found, family));
}

/**
 * An admin who makes an account an admin grants nothing it does not hold (an admin-only "invite member"
 * operation takes a role by design): role and admin-flag fields prove escalation only for a lower actor.
 */
function grantsOwnRank(run: ProbeRun, owner: string | undefined, field: PrivilegedField): boolean {
  if (field.kind !== "role" && field.kind !== "flag") return false;
  const role = run.target.profile?.users?.find((user) => user.name === owner)?.role;
  return role !== undefined && isAdminLike(role);
}

async function onCreate(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: string | undefined,
  field: PrivilegedField,
  before: unknown,
  other: string | undefined,
): Promise<Assigned | undefined> {
  const current = valueAtPath(before, field.name);
  const values = valuesFor(field, current, other);
  if (values.length === 0) return undefined;
  if (field.kind === "amount" && (await requiredInput(factory, family, owner, field.name))) return undefined;
  let first: Assigned | undefined;
  for (const value of values) {
    const forced = await make(factory, family, owner, (request) => withField(request, field.name, value));
    if (!forced) return undefined;
    const after = await readBack(run, forced, owner, forced.created);
    if (!holds(valueAtPath(after.json, field.name), value, field.kind)) return undefined;
    if (first) continue;
    const created = creationSteps(forced);
    const readStep =
      after.prepared && family.read
        ? stepFromPrepared("read", after.prepared, owner, idStepsFor(after.prepared, created))
        : undefined;
    first = {
      operation: family.create!,
      field,
      value,
      before: current,
      exchanges: [
        { label: "forced-create", exchange: forced.exchange },
        ...(after.exchange ? [{ label: "read-back", exchange: after.exchange }] : []),
      ],
      steps: readStep ? [...created.steps, readStep] : created.steps,
      readStep: readStep ? "read" : "created",
    };
  }
  return first;
}

/**
 * Whether the creation is refused without the field although its plain request carries it: the handler
 * wants it from the client (an invoice's amount, an order's quantity), so it is an input, not a value only
 * the server should compute — those have a default when the client sends none.
 */
async function requiredInput(
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: string | undefined,
  name: string,
): Promise<boolean> {
  const create = family.create;
  const properties = propertiesOf(chooseBranch(asSchema(create?.request_body?.schema)));
  if (!(name in properties)) return false;
  const bare = await make(factory, family, owner, (request) => {
    if (request.body && typeof request.body === "object" && !Array.isArray(request.body))
      delete (request.body as Record<string, unknown>)[name];
  });
  return bare === undefined;
}

async function onUpdate(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  update: Operation,
  owner: string | undefined,
  field: PrivilegedField,
  other: string | undefined,
): Promise<Assigned | undefined> {
  let first: Assigned | undefined;
  let values: unknown[] | undefined;
  for (let index = 0; index < (values?.length ?? 1); index += 1) {
    const resource = await make(factory, family, owner);
    if (!resource) return undefined;
    const before = await readBack(run, resource, owner, resource.created);
    const current = valueAtPath(before.json, field.name);
    values ??= valuesFor(field, current, other);
    const value = values[index];
    if (value === undefined || holds(current, value, field.kind)) return undefined;
    const prepared = buildRequest(update, { seed: uniqueSeed(), pathValues: resource.pathValues });
    withField(prepared, field.name, value);
    const exchange = await sendPrepared(run, owner, prepared);
    if (!exchange || !isSuccess(exchange)) return undefined;
    const after = await readBack(run, resource, owner, exchange.response?.json);
    if (!holds(valueAtPath(after.json, field.name), value, field.kind)) return undefined;
    if (first) continue;
    const created = creationSteps(resource);
    const steps = [
      ...created.steps,
      stepFromPrepared("update", prepared, owner, idStepsFor(prepared, created)),
    ];
    if (after.prepared)
      steps.push(stepFromPrepared("read", after.prepared, owner, idStepsFor(after.prepared, created)));
    first = {
      operation: update,
      field,
      value,
      before: current,
      exchanges: [
        { label: "update", exchange },
        ...(after.exchange ? [{ label: "read-back", exchange: after.exchange }] : []),
        ...(before.exchange ? [{ label: "before", exchange: before.exchange }] : []),
      ],
      steps,
      readStep: after.prepared ? "read" : "update",
    };
  }
  return first;
}

function findingOf(run: ProbeRun, found: Assigned, family: ResourceFamily): EnvelopeDraft {
  const key = operationKey(found.operation);
  const { field, value } = found;
  const shown = JSON.stringify(value);
  return buildFinding(run, {
    domain: "api",
    defectClass: "validation-missing",
    title: `${key} lets the client set ${field.name} = ${shown} (mass assignment)`,
    summary: `${key} does not document ${field.name} as a field the client writes, yet a body carrying ${field.name} = ${shown} left the object reading back with that value; without it the value was ${JSON.stringify(found.before ?? null)}.${field.kind === "amount" ? " A second, different value was taken too." : ""}`,
    impact:
      field.kind === "owner"
        ? "Clients can create or move records into another user's name."
        : field.kind === "amount"
          ? "Clients can set values only the server should compute (prices, balances)."
          : "Clients can grant themselves privileges only the server should decide.",
    location: endpointLocation(found.operation),
    related: family.read ? [endpointLocation(family.read)] : undefined,
    severity: severityFor("validation-missing", { privileged: true }),
    confidence: 0.9,
    discriminator: `mass-assignment:${field.name}`,
    exchanges: found.exchanges,
    repro: {
      title: `${key} ignores or refuses a client-sent ${field.name}`,
      steps: found.steps,
      assertions: [
        {
          kind: "json_not_equals",
          step: found.readStep,
          path: field.name,
          value,
          message: `${field.name} must not be settable by the client`,
        },
      ],
    },
  });
}
