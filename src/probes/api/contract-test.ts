import type { Operation, SystemMap } from "../../map/system-map.ts";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { ReproAssertion, ReproScript, ReproStep } from "../evidence/failing-test.ts";
import { renderFailingTest } from "../evidence/failing-test.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import {
  chooseBranch,
  forDirection,
  propertiesOf,
  requiredOf,
  schemaType,
} from "../schema-values/json-schema.ts";
import { familyOfParameter, operationKey, resourceFamilies } from "./operation-index.ts";
import { documentedStatuses, responseSchemaFor } from "./probe-support.ts";
import { buildRequest, concretePath } from "./request-builder.ts";
import { uniqueSeed } from "./resource-factory.ts";

/**
 * A contract test for one operation, built from the map alone (nothing is sent): the resources its path
 * needs are created first by the test itself, then the request is checked for a documented 2xx status and
 * the documented body shape (required fields and their types).
 */
export function contractTestFor(
  map: SystemMap,
  operation: Operation,
  profile: TargetProfile | undefined,
  baseUrl: string,
  user: string | undefined,
): { script: ReproScript; content: string } {
  const families = resourceFamilies(map.operations);
  const steps: ReproStep[] = [];
  const idSteps: Record<string, string> = {};
  const parameters = [...operation.path.matchAll(/\{([^}/]+)\}/g)].map((match) => match[1]!);
  for (const [index, parameter] of parameters.entries()) {
    const family = familyOfParameter(families, operation.path, parameter);
    if (!family?.create) continue;
    const create = buildRequest(family.create, { seed: uniqueSeed() });
    const name = `setup${index + 1}`;
    steps.push(
      stepFromPrepared(
        name,
        create,
        user,
        { ...idSteps },
        { captureId: true, parameter: family.idParameter },
      ),
    );
    idSteps[parameter] = name;
  }
  const prepared = buildRequest(operation, { seed: uniqueSeed() });
  steps.push(stepFromPrepared("subject", prepared, user, idSteps));
  const key = operationKey(operation);
  const successes = documentedStatuses(operation).filter((status) => status >= 200 && status < 300);
  const assertions: ReproAssertion[] = [
    successes.length > 0
      ? {
          kind: "status_in",
          step: "subject",
          values: successes,
          message: `${key} answers a documented success status`,
        }
      : { kind: "status_below", step: "subject", value: 300, message: `${key} succeeds` },
  ];
  const schema = responseSchemaFor(operation, successes[0] ?? 200);
  if (schema) {
    const shape = chooseBranch(forDirection(schema, "response"));
    const type = schemaType(shape);
    const [object, prefix] =
      type === "array" ? [chooseBranch(shape.items as Record<string, unknown>), "*."] : [shape, ""];
    if (type !== "any")
      assertions.push({
        kind: "json_type",
        step: "subject",
        path: "",
        type: type === "integer" ? "number" : type,
        message: `the body is a${type === "array" || type === "object" ? "n" : ""} ${type}`,
      });
    const properties = propertiesOf(object);
    for (const name of requiredOf(object)) {
      const propertyType = properties[name] ? schemaType(chooseBranch(properties[name]!)) : "any";
      assertions.push({
        kind: "json_has",
        step: "subject",
        path: `${prefix}${name}`,
        message: `required field ${name} is present`,
      });
      if (propertyType !== "any" && propertyType !== "null" && !properties[name]?.nullable) {
        assertions.push({
          kind: "json_type",
          step: "subject",
          path: `${prefix}${name}`,
          type: propertyType,
          message: `${name} is a ${propertyType}`,
        });
      }
    }
  }
  const script: ReproScript = {
    title: `${key} (${concretePath(prepared)}) follows the document`,
    steps,
    assertions,
  };
  return { script, content: renderFailingTest(script, profile, baseUrl) };
}
