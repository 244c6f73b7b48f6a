import type { PreparedRequest } from "../api/request-builder.ts";
import { serializeRequestBody } from "../api/request-builder.ts";
import type { CreatedResource } from "../api/resource-factory.ts";
import { buildQuery } from "../http/target-url.ts";
import type { ReproStep } from "./failing-test.ts";

/**
 * A reproduction step from a prepared request. Ids of resources created by earlier steps become
 * `{{step.id}}` and the generated part of values becomes `{{unique}}`, so the test re-creates its own
 * data on every run instead of depending on rows of the run that found the defect.
 */
export function stepFromPrepared(
  name: string,
  prepared: PreparedRequest,
  user: string | undefined,
  idSteps: Record<string, string> = {},
  options: { captureId?: boolean; parameter?: string } = {},
): ReproStep {
  const seed = prepared.seed;
  const swap = (text: string) => (seed ? text.split(seed).join("{{unique}}") : text);
  const path = prepared.operation.path.replace(/\{([^}/]+)\}/g, (whole, parameter: string) => {
    const step = idSteps[parameter];
    if (step) return `{{${step}.id}}`;
    const value = prepared.pathValues[parameter];
    return value === undefined ? whole : encodeURIComponent(value);
  });
  const { body, contentType } = serializeRequestBody(prepared);
  const step: ReproStep = {
    name,
    as: user,
    method: prepared.operation.method.toUpperCase(),
    path: swap(`${path}${buildQuery(prepared.query)}`),
  };
  if (body !== undefined) {
    step.body = swap(body);
    step.contentType = contentType ?? "application/json";
    // A CSRF-guarded form is replayed as a browser submits it: its page first, for a fresh token.
    const form = prepared.operation.form;
    if (form?.csrf_field && step.contentType.startsWith("application/x-www-form-urlencoded"))
      step.formPage = form.page;
  }
  const extraHeaders = Object.fromEntries(
    Object.entries(prepared.headers).filter(([name]) => name !== "accept"),
  );
  if (Object.keys(extraHeaders).length > 0) step.headers = extraHeaders;
  if (options.captureId) step.captureId = { parameter: options.parameter };
  return step;
}

export interface CreationSteps {
  steps: ReproStep[];
  /** Each family id parameter to the step that creates its record. */
  idSteps: Record<string, string>;
  /** Each id the probe's records got to the step that creates that record in the test. */
  stepOfId: Record<string, string>;
}

/** Steps that create `resource` (and its parents) as its owner; `idSteps` maps each id parameter to its step. */
export function creationSteps(resource: CreatedResource): CreationSteps {
  const steps: ReproStep[] = [];
  const idSteps: Record<string, string> = {};
  const stepOfId: Record<string, string> = {};
  for (const [index, current] of [...resource.parents, resource].entries()) {
    const name = index === resource.parents.length ? "created" : `parent${index + 1}`;
    steps.push(
      stepFromPrepared(
        name,
        current.request,
        current.owner,
        { ...idSteps },
        { captureId: true, parameter: current.family.idParameter },
      ),
    );
    if (current.family.idParameter) idSteps[current.family.idParameter] = name;
    stepOfId[current.id] = name;
  }
  return { steps, idSteps, stepOfId };
}

/** For a request on no record the probe created. */
export const NO_CREATION: CreationSteps = { steps: [], idSteps: {}, stepOfId: {} };

/**
 * The id steps for a request on the created records: each path value that is one of the created ids is
 * filled with the id the test's own create answers, whatever the route names it (an action
 * `/orders/{orderId}/confirm` beside `/orders/{id}`). By value, not by name: a value the probe chose on
 * purpose (a fuzzed `0`, a made-up missing id) stays as it was sent.
 */
export function idStepsFor(prepared: PreparedRequest, created: CreationSteps): Record<string, string> {
  const steps: Record<string, string> = {};
  for (const [parameter, value] of Object.entries(prepared.pathValues)) {
    const step = created.stepOfId[value];
    if (step) steps[parameter] = step;
  }
  return steps;
}

/** One request on a record the probe created (when it did), after the steps that create it in the test. */
export function stepsOnRecord(
  name: string,
  prepared: PreparedRequest,
  user: string | undefined,
  resource: CreatedResource | undefined,
): ReproStep[] {
  const created = resource ? creationSteps(resource) : NO_CREATION;
  return [...created.steps, stepFromPrepared(name, prepared, user, idStepsFor(prepared, created))];
}
