import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { creationSteps, stepFromPrepared } from "../evidence/repro-steps.ts";
import { isSuccess } from "../http/http-types.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { asSchema, chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { roleRank } from "../session/roles.ts";
import { severityFor } from "../severity.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { isSafeWrite, operationKey } from "./operation-index.ts";
import { endpointLocation, responseSchemaFor, sendPrepared } from "./probe-support.ts";
import { buildRequest } from "./request-builder.ts";
import type { CreatedResource, ResourceFactory } from "./resource-factory.ts";
import { uniqueSeed } from "./resource-factory.ts";
import { valueAtPath } from "./value-tools.ts";

// Mass assignment: a field that decides privileges (a role, an admin flag, a balance) that the client is
// not meant to set, but the server stores when sent anyway. Only fields the document does not let the
// client write are tried, only on resources the probe creates itself, and only a read-back that shows
// the privileged value (where a plain creation did not) counts.

const PRIVILEGED: ReadonlyArray<{ name: RegExp; value: (schema: JsonSchema | undefined) => unknown }> = [
  {
    name: /^roles?$/i,
    value: (schema) => {
      const chosen = schema ? chooseBranch(schema) : {};
      const options = Array.isArray(chosen.enum)
        ? chosen.enum.filter((entry): entry is string => typeof entry === "string")
        : [];
      const highest = options.sort((a, b) => roleRank(b) - roleRank(a))[0] ?? "admin";
      return schema && schemaType(chosen) === "array" ? [highest] : highest;
    },
  },
  { name: /^(is_?)?(admin|superuser|staff|moderator)$/i, value: () => true },
  { name: /^(is_?)?(verified|approved|email_?verified)$/i, value: () => true },
  { name: /^(balance|credits?|credit_?limit|wallet)$/i, value: () => 999_999 },
];

function writableProperties(operation: Operation): Set<string> {
  const raw = asSchema(operation.request_body?.schema);
  const properties = propertiesOf(chooseBranch(raw));
  return new Set(
    Object.entries(properties)
      .filter(([, property]) => property.readOnly !== true)
      .map(([name]) => name),
  );
}

/** Privileged fields the document shows in answers (or marks read-only) but does not let the client write. */
function candidates(operation: Operation): Array<{ name: string; value: unknown }> {
  const writable = writableProperties(operation);
  const seen = new Map<string, JsonSchema | undefined>();
  const response = responseSchemaFor(operation, 201) ?? responseSchemaFor(operation, 200);
  for (const [name, property] of Object.entries(response ? propertiesOf(chooseBranch(response)) : {}))
    seen.set(name, property);
  for (const [name, property] of Object.entries(
    propertiesOf(chooseBranch(asSchema(operation.request_body?.schema))),
  )) {
    if (property.readOnly === true) seen.set(name, property);
  }
  for (const name of ["role", "is_admin"]) if (!seen.has(name)) seen.set(name, undefined);
  const result: Array<{ name: string; value: unknown }> = [];
  for (const [name, schema] of seen) {
    if (writable.has(name)) continue;
    const rule = PRIVILEGED.find((entry) => entry.name.test(name));
    if (rule) result.push({ name, value: rule.value(schema) });
  }
  return result.slice(0, 4);
}

async function readBack(
  run: ProbeRun,
  family: ResourceFamily,
  resource: CreatedResource,
  owner: string | undefined,
): Promise<{ json: unknown; exchange?: Awaited<ReturnType<typeof sendPrepared>> }> {
  if (!family.read) return { json: unwrap(resource.created) };
  const exchange = await sendPrepared(
    run,
    owner,
    buildRequest(family.read, { seed: uniqueSeed(), pathValues: resource.pathValues }),
  );
  return { json: exchange && isSuccess(exchange) ? unwrap(exchange.response?.json) : undefined, exchange };
}

function unwrap(json: unknown): unknown {
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const values = Object.values(json);
    if (values.length === 1 && values[0] && typeof values[0] === "object" && !Array.isArray(values[0]))
      return values[0];
  }
  return json;
}

/** Tries each privileged field on the family's create operation; answers confirmed findings. */
export async function probeMassAssignment(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: string | undefined,
): Promise<EnvelopeDraft[]> {
  const create = family.create;
  if (!create || !factory.canCreate(family) || !isSafeWrite(create)) return [];
  const fields = candidates(create);
  if (fields.length === 0) return [];
  const plain = await factory.create(family, owner);
  if (!plain) return [];
  const before = await readBack(run, family, plain, owner);
  const findings: EnvelopeDraft[] = [];
  for (const field of fields) {
    if (JSON.stringify(valueAtPath(before.json, field.name)) === JSON.stringify(field.value)) continue;
    const forced = await factory.create(family, owner, (request) => {
      request.body = { ...(request.body as Record<string, unknown>), [field.name]: field.value };
    });
    if (!forced) continue;
    const after = await readBack(run, family, forced, owner);
    if (JSON.stringify(valueAtPath(after.json, field.name)) !== JSON.stringify(field.value)) continue;
    const key = operationKey(create);
    const created = creationSteps(forced);
    const readStep = family.read
      ? stepFromPrepared(
          "read",
          buildRequest(family.read, { seed: uniqueSeed(), pathValues: forced.pathValues }),
          owner,
          created.idSteps,
        )
      : undefined;
    findings.push(
      buildFinding(run, {
        domain: "api",
        defectClass: "validation-missing",
        title: `${key} lets the client set ${field.name} = ${JSON.stringify(field.value)} (mass assignment)`,
        summary: `${key} is not documented to accept ${field.name}, yet a body carrying ${field.name} = ${JSON.stringify(field.value)} created a resource that reads back with that value; created without it, the value was ${JSON.stringify(valueAtPath(before.json, field.name) ?? null)}.`,
        impact: "Clients can grant themselves privileges or values only the server should decide.",
        location: endpointLocation(create),
        related: family.read ? [endpointLocation(family.read)] : undefined,
        severity: severityFor("validation-missing", { privileged: true }),
        confidence: 0.9,
        discriminator: `mass-assignment:${field.name}`,
        exchanges: [
          { label: "forced-create", exchange: forced.exchange },
          ...(after.exchange ? [{ label: "read-back", exchange: after.exchange }] : []),
          { label: "plain-create", exchange: plain.exchange },
        ],
        repro: {
          title: `${key} ignores or refuses a client-sent ${field.name}`,
          steps: readStep ? [...created.steps, readStep] : created.steps,
          assertions: [
            {
              kind: "json_not_equals",
              step: readStep ? "read" : "created",
              path: field.name,
              value: field.value,
              message: `${field.name} must not be settable by the client`,
            },
          ],
        },
      }),
    );
  }
  return findings;
}
