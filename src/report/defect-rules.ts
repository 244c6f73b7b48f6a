import { DOMAIN_CLASSES, type Domain } from "../envelope/taxonomy.ts";

// One rule per defect class for the machine formats (SARIF rules, JUnit class names), with the CWE that
// names the weakness where one fits the class as a whole. Classes with no honest single CWE (contract
// drift, a broken journey) carry none rather than a loose one: a wrong CWE misleads triage tools.

export const CLASS_CWE: Readonly<Record<string, number>> = {
  "unhandled-error": 755,
  "validation-missing": 20,
  "missing-authentication": 306,
  "missing-authorization": 862,
  "broken-authentication": 287,
  injection: 74,
  xss: 79,
  ssrf: 918,
  xxe: 611,
  "open-redirect": 601,
  csrf: 352,
  "insecure-deserialization": 502,
  "secret-exposure": 798,
  "sensitive-data-exposure": 200,
  "vulnerable-dependency": 1395,
  misconfiguration: 16,
  "ws-unauthenticated": 306,
  "ws-authorization": 862,
  "ws-backpressure": 400,
  "n-plus-one": 1073,
  "unbounded-result": 770,
  "unindexed-query": 1067,
  "circular-dependency": 1047,
  "layering-violation": 1054,
  "god-module": 1080,
  "dead-code": 561,
};

export function domainOf(defectClass: string): Domain | undefined {
  return (Object.keys(DOMAIN_CLASSES) as Domain[]).find((domain) =>
    (DOMAIN_CLASSES[domain] as readonly string[]).includes(defectClass),
  );
}

/** `missing-authorization` → `MissingAuthorization` (SARIF's rule `name` is an identifier-like string). */
export function ruleName(defectClass: string): string {
  return defectClass
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== "")
    .map((part) => `${part[0]?.toUpperCase() ?? ""}${part.slice(1)}`)
    .join("");
}

/** A class in words: `missing-authorization` → `missing authorization`. */
export function classWords(defectClass: string): string {
  return defectClass.replaceAll("-", " ");
}
