import { resolveSecret } from "../../targets/secrets.ts";

// Credentials are read from the environment at the moment of use (src/targets/secrets.ts); this module
// only adapts that rule to the session layer's wording and tells the test generator which variable to read.

const REFERENCE = /^secret_ref:([A-Z_][A-Z0-9_]*)$/;

/** `secret_ref:NAME` → `NAME`, or undefined for anything else (never throws: generated tests only name it). */
export function secretVariableName(reference: string): string | undefined {
  return REFERENCE.exec(reference)?.[1];
}

/** Reads a `secret_ref:NAME` from the environment now; `where` names the profile field for the error. */
export function resolveSecretReference(reference: string, where: string): string {
  return resolveSecret(reference, process.env, where);
}
