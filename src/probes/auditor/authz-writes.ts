import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isAuthOperation, isSafeWrite } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { bodyKind, buildRequest, requestSchema } from "../api/request-builder.ts";
import { markersIn, type ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Leak, Principal } from "./authz-support.ts";
import { firstPerRelation, reproFor, sharedWith, targetOf } from "./authz-support.ts";

// The write half of the matrix: an outsider changes or deletes a fresh resource of the owner (judged by
// the owner's next read), and an anonymous caller creates through a protected create operation.

function textField(operation: Operation): string | undefined {
  const schema = requestSchema(operation);
  if (!schema) return undefined;
  return Object.entries(propertiesOf(chooseBranch(schema))).find(([, property]) => {
    const chosen = chooseBranch(property);
    return schemaType(chosen) === "string" && !chosen.enum && !chosen.format && !chosen.pattern;
  })?.[0];
}

/** One outsider per relation changes a fresh resource of the owner; the owner's next read is the judge. */
export async function checkUpdate(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  update: Operation,
  owner: ProfileUser,
  principals: Principal[],
): Promise<Leak[]> {
  const field = textField(update);
  if (!field || bodyKind(update) !== "json" || !family.read) return [];
  const leaks: Leak[] = [];
  for (const principal of firstPerRelation(principals)) {
    const resource = await factory.create(family, owner.name);
    if (!resource) return leaks;
    if (await sharedWith(run, factory, family, principal, resource)) continue;
    const marker = `qaas-authz-${uniqueSeed()}`;
    const change = buildRequest(update, { seed: uniqueSeed(), pathValues: resource.pathValues });
    change.body = { ...(change.body as Record<string, unknown>), [field]: marker };
    const attempt = await sendPrepared(run, principal.user?.name, change);
    if (!attempt) continue;
    const read = buildRequest(family.read, { seed: uniqueSeed(), pathValues: resource.pathValues });
    const ownerView = await sendPrepared(run, owner.name, read);
    if (!ownerView || !isSuccess(ownerView) || !(ownerView.response?.body ?? "").includes(marker)) continue;
    const { steps } = reproFor(targetOf(resource), [
      { name: "other", prepared: change, user: principal.user?.name },
      { name: "owner", prepared: read, user: owner.name },
    ]);
    leaks.push({
      operation: update,
      principal,
      action: "update",
      ownerExchange: ownerView,
      otherExchange: attempt,
      steps: steps.map((step) =>
        step.name === "other" && step.body
          ? { ...step, body: step.body.split(marker).join("qaas-authz-{{unique}}") }
          : step,
      ),
      owner: owner.name,
      assertion: {
        kind: "body_lacks",
        step: "owner",
        text: "qaas-authz-{{unique}}",
        message: `${principal.user?.name ?? "anonymous"} must not change ${owner.name}'s resource`,
      },
    });
  }
  return leaks;
}

export async function checkDelete(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  remove: Operation,
  owner: ProfileUser,
  principals: Principal[],
): Promise<Leak[]> {
  if (!family.read || !isSafeWrite(remove)) return [];
  const leaks: Leak[] = [];
  for (const principal of firstPerRelation(principals)) {
    const resource = await factory.create(family, owner.name);
    if (!resource) return leaks;
    if (await sharedWith(run, factory, family, principal, resource)) continue;
    const prepared = buildRequest(remove, { seed: uniqueSeed(), pathValues: resource.pathValues });
    const attempt = await sendPrepared(run, principal.user?.name, prepared);
    if (!attempt || !isSuccess(attempt)) continue;
    const read = buildRequest(family.read, { seed: uniqueSeed(), pathValues: resource.pathValues });
    const ownerView = await sendPrepared(run, owner.name, read);
    if (!ownerView || (statusOf(ownerView) !== 404 && statusOf(ownerView) !== 410)) continue;
    const { steps } = reproFor(targetOf(resource), [
      { name: "other", prepared, user: principal.user?.name },
      { name: "owner", prepared: read, user: owner.name },
    ]);
    leaks.push({
      operation: remove,
      principal,
      action: "delete",
      ownerExchange: ownerView,
      otherExchange: attempt,
      steps,
      owner: owner.name,
      assertion: {
        kind: "status_below",
        step: "owner",
        value: 300,
        message: `${principal.user?.name ?? "anonymous"} must not delete ${owner.name}'s resource`,
      },
    });
  }
  return leaks;
}

/**
 * A create operation the document protects, tried anonymously with a valid body: a 2xx whose answer
 * carries a new id and the values sent is a write nobody authenticated. Sign-up and sign-in are exempt.
 */
export async function checkAnonymousCreate(
  run: ProbeRun,
  operation: Operation,
  owner: ProfileUser,
): Promise<Leak[]> {
  if (isAuthOperation(operation) || !isSafeWrite(operation) || bodyKind(operation) === "unsupported")
    return [];
  if (pathParameterNames(operation.path).length > 0) return [];
  const prepared = buildRequest(operation, { seed: uniqueSeed() });
  const markers = markerValuesOf(prepared.body, prepared.seed);
  if (markers.length === 0) return [];
  const anonymous = await sendPrepared(run, undefined, prepared);
  if (!anonymous || !isSuccess(anonymous)) return [];
  const json = anonymous.response?.json;
  const hasId = json !== undefined && JSON.stringify(json).match(/"(id|_id|uuid)"\s*:/) !== null;
  if (!hasId || !markers.some((marker) => (anonymous.response?.body ?? "").includes(marker))) return [];
  const step = stepFromPrepared("other", prepared, undefined);
  return [
    {
      operation,
      principal: { user: undefined, relation: "anonymous" },
      action: "create",
      ownerExchange: anonymous,
      otherExchange: anonymous,
      steps: [step],
      owner: owner.name,
      assertion: {
        kind: "status_in",
        step: "other",
        values: [401, 403],
        message: "anonymous callers must not create resources",
      },
    },
  ];
}

function markerValuesOf(body: unknown, seed: string | undefined): string[] {
  return seed ? markersIn(body, seed) : [];
}
