import { QaasError } from "../errors.ts";

// A finding is shared with people and trackers, so a credential must never be written into one: it is named
// by reference (`secret_ref:NAME`) instead. These patterns catch a key word followed by a literal value; a
// value that is itself a reference is allowed.

const LITERAL_CREDENTIALS: readonly RegExp[] = [
  // password: x, password=x, access_token=x, client_secret: x, api_key=x, api-key: x
  /(?<![a-z0-9])[a-z0-9_-]*(?:password|passwd|token|secret|api[_-]?key)["']?\s*[:=]\s*(?!["']?secret_ref:)["']?[^\s"',;]+/i,
  // Authorization: Bearer x / Basic x
  /authorization["']?\s*[:=]\s*(?!["']?secret_ref:)\S+/i,
  /\bbearer\s+(?!secret_ref:)[a-z0-9._~+/=-]{6,}/i,
];

/** Whether `text` carries a literal credential. */
export function carriesCredential(text: string): boolean {
  return LITERAL_CREDENTIALS.some((pattern) => pattern.test(text));
}

/** Every text field of a finding, by the name an error should point at. */
function textFields(finding: Record<string, unknown>): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(finding)) {
    if (typeof value === "string") fields.push([key, value]);
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (typeof item === "string") fields.push([`${key}[${index}]`, item]);
        else if (item !== null && typeof item === "object") {
          for (const [inner, text] of Object.entries(item as Record<string, unknown>))
            if (typeof text === "string") fields.push([`${key}[${index}].${inner}`, text]);
        }
      });
    }
  }
  return fields;
}

/** Throws, naming the field, when any text of the finding carries a literal credential. */
export function refuseCredentials(finding: object): void {
  for (const [field, text] of textFields(finding as Record<string, unknown>)) {
    if (carriesCredential(text)) {
      throw new QaasError(
        "FINDING_HAS_SECRET",
        `finding field ${field} carries a literal credential; name it as secret_ref:<NAME> instead`,
      );
    }
  }
}
