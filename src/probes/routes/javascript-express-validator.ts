import ts from "typescript";
import { regexSource, staticString, unwrap } from "./javascript-syntax.ts";
import { chainOf, dialectOf, jsonLiteral, type ValidatorContext } from "./javascript-validators.ts";
import type { JsonSchema } from "./route-inputs.ts";

// express-validator chains in a route's middleware: `body("email").isEmail()`,
// `query("page").optional().isInt({ min: 1 })` — where each looks and what its validators imply.

/** Where express-validator's chain functions look. `param` reads the path: not a parameter of the map. */
export const EXPRESS_VALIDATOR_LOCATIONS: Record<string, "body" | "query" | "header" | "cookie" | "path"> = {
  body: "body",
  check: "body",
  query: "query",
  header: "header",
  cookie: "cookie",
  param: "path",
};

/** Validators that fix a string's format. */
const FORMAT_CHECKS: Record<string, string> = {
  isEmail: "email",
  isUUID: "uuid",
  isURL: "uri",
  isISO8601: "date-time",
  isDate: "date",
  isIP: "ipv4",
};

/**
 * An express-validator chain (`body("email").isEmail()`, `query("page").optional().isInt({ min: 1 })`):
 * where it looks, the field names, and the schema its validators imply.
 */
export function expressValidatorField(
  expression: ts.Expression,
  context: ValidatorContext,
):
  | {
      location: "body" | "query" | "header" | "cookie" | "path";
      names: string[];
      schema: JsonSchema;
      required: boolean;
    }
  | undefined {
  const chain = chainOf(expression);
  if (!chain || dialectOf(chain.root, context) !== "express-validator") return undefined;
  const location =
    EXPRESS_VALIDATOR_LOCATIONS[chain.root] ??
    EXPRESS_VALIDATOR_LOCATIONS[context.packages.has(chain.root) ? chain.root : ""];
  const first = chain.steps[0];
  if (!location || first?.name !== "" || !first.args) return undefined;
  const argument = first.args[0] && unwrap(first.args[0]);
  const names =
    argument && ts.isArrayLiteralExpression(argument)
      ? argument.elements
          .map((element) => staticString(element, context.constants))
          .filter((name) => name !== undefined)
      : [staticString(argument, context.constants)].filter((name) => name !== undefined);
  if (names.length === 0) return undefined;
  const schema: JsonSchema = { type: "string" };
  let required = false;
  let optional = false;
  for (const step of chain.steps.slice(1)) {
    const options = step.args?.[0] ? jsonLiteral(step.args[0], context) : undefined;
    const bounds =
      options && typeof options === "object" && !Array.isArray(options)
        ? (options as Record<string, unknown>)
        : {};
    switch (step.name) {
      case "optional":
        optional = true;
        break;
      case "isInt":
      case "isFloat":
      case "isNumeric":
      case "isDecimal":
        schema.type = step.name === "isInt" ? "integer" : "number";
        if (typeof bounds.min === "number") schema.minimum = bounds.min;
        if (typeof bounds.max === "number") schema.maximum = bounds.max;
        required = true;
        break;
      case "isBoolean":
        schema.type = "boolean";
        required = true;
        break;
      case "isArray":
        schema.type = "array";
        required = true;
        break;
      case "isObject":
        schema.type = "object";
        required = true;
        break;
      case "isLength":
        if (typeof bounds.min === "number") schema.minLength = bounds.min;
        if (typeof bounds.max === "number") schema.maxLength = bounds.max;
        required = true;
        break;
      case "isIn": {
        const values = Array.isArray(options) ? options : [];
        if (values.length > 0) schema.enum = values;
        required = true;
        break;
      }
      case "matches": {
        const pattern = regexSource(step.args?.[0], context.constants);
        if (pattern !== undefined) schema.pattern = pattern;
        required = true;
        break;
      }
      case "isEmail":
      case "isUUID":
      case "isURL":
      case "isISO8601":
      case "isDate":
      case "isIP":
        schema.format = FORMAT_CHECKS[step.name];
        required = true;
        break;
      case "notEmpty":
      case "exists":
      case "isString":
      case "isAlphanumeric":
      case "isAlpha":
      case "isStrongPassword":
      case "isMobilePhone":
      case "custom":
        required = true;
        break;
      default:
    }
  }
  return { location, names, schema, required: required && !optional };
}
